package steering

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// spoilSvc is a node that the call spoil makes bad and mend makes good;
// its property, NoneBad, fails for every bad node of the view, naming
// them all (as RandTree's properties do).
type spoilSvc struct{ Bad bool }

type spoil struct{ Mend bool }

func (spoil) MessageType() string { return "spoil.Spoil" }

func (s *spoilSvc) Init(env node.Env)                                        {}
func (s *spoilSvc) HandleMessage(env node.Env, from node.ID, m node.Message) {}
func (s *spoilSvc) HandleApp(env node.Env, call node.Message)                { s.Bad = !call.(spoil).Mend }
func (s *spoilSvc) HandleTimer(env node.Env, name string)                    {}
func (s *spoilSvc) HandleTransportError(env node.Env, peer node.ID)          {}

var noneBad = node.Always("NoneBad", func(v node.View) error {
	var bad []string
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*spoilSvc); ok && s.Bad {
			bad = append(bad, id.String())
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("bad: %s", strings.Join(bad, " "))
	}
	return nil
})

// spoilView is a view of n2 and n3, n3 bad: the property already fails on
// it, whatever n1 does.
type spoilView map[node.ID]*spoilSvc

func (v spoilView) Nodes() []node.ID                            { return []node.ID{2, 3} }
func (v spoilView) Service(id node.ID) node.Service             { return v[id] }
func (v spoilView) TimerScheduled(id node.ID, name string) bool { return false }

// A property the view already violates is judged on the node alone: the
// event that makes this node violate it on its own is vetoed (it used to
// pass, since the property "already failed"), one that leaves the node's
// own violation as it was or repairs it is not, and without a view the
// check is what it was.
func TestImmediateCheckJudgesAStaleViolationOnTheNodeAlone(t *testing.T) {
	view := spoilView{2: {}, 3: {Bad: true}}
	for _, c := range []struct {
		name    string
		bad     bool // n1 before the event
		call    spoil
		view    node.View
		vetoErr string // "" for no veto
	}{
		{"spoils itself beside a stale bad node", false, spoil{}, view, "bad: n1"},
		{"already bad", true, spoil{}, view, ""},
		{"mends itself", true, spoil{Mend: true}, view, ""},
		{"stays good", false, spoil{Mend: true}, view, ""},
		{"no view: spoils itself", false, spoil{}, nil, "bad: n1"},
	} {
		core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: func() node.Service { return &spoilSvc{} }})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Step(node.Event{Kind: node.EventInit, At: time.Unix(1, 0)}); err != nil {
			t.Fatal(err)
		}
		core.Service().(*spoilSvc).Bad = c.bad
		veto, err := ImmediateCheck(core, node.Event{Kind: node.EventApp, Msg: c.call, At: time.Unix(2, 0)}, c.view, []node.Property{noneBad})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch {
		case c.vetoErr == "" && veto != nil:
			t.Errorf("%s: vetoed: %v", c.name, veto.Err)
		case c.vetoErr != "" && (veto == nil || veto.Err.Error() != c.vetoErr):
			t.Errorf("%s: veto %+v, want one saying %q", c.name, veto, c.vetoErr)
		}
		if core.Service().(*spoilSvc).Bad != c.bad {
			t.Errorf("%s: the check touched the real node", c.name)
		}
	}
}
