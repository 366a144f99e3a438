package steering

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// raiseSvc raises a flag on the application call Raise. Its property,
// NotBoth, spans n1 and n3: they must not both have raised it.
type raiseSvc struct{ Up bool }

type raise struct{}

func (raise) MessageType() string { return "raise.Raise" }

func (s *raiseSvc) Init(env node.Env)                                        {}
func (s *raiseSvc) HandleMessage(env node.Env, from node.ID, m node.Message) {}
func (s *raiseSvc) HandleApp(env node.Env, call node.Message)                { s.Up = true }
func (s *raiseSvc) HandleTimer(env node.Env, name string)                    {}
func (s *raiseSvc) HandleTransportError(env node.Env, peer node.ID)          {}

var raiseSpec = node.Spec{
	Name:     "raise",
	New:      func() node.Service { return &raiseSvc{} },
	Messages: []node.Message{raise{}},
	Properties: []node.Property{node.Always("NotBoth", func(v node.View) error {
		a, _ := v.Service(1).(*raiseSvc)
		b, _ := v.Service(3).(*raiseSvc)
		if a != nil && b != nil && a.Up && b.Up {
			return fmt.Errorf("n1 and n3 both raised")
		}
		return nil
	})},
}

// raiseCore is node id of the flag service, started, its flag up or not.
func raiseCore(t *testing.T, id node.ID, up bool) *node.Core {
	t.Helper()
	c, err := node.NewCore(node.CoreConfig{ID: id, Factory: raiseSpec.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(node.Event{Kind: node.EventInit, At: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	c.Service().(*raiseSvc).Up = up
	return c
}

// raiseSnapshot is n1's snapshot completed at at, holding ids (n3's flag
// up).
func raiseSnapshot(t *testing.T, at time.Time, ids ...node.ID) *snapshot.Snapshot {
	t.Helper()
	s := &snapshot.Snapshot{Gatherer: 1, CN: uint64(at.Unix()), At: at}
	for _, id := range ids {
		b, err := raiseCore(t, id, id == 3).Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: id, CN: s.CN, State: b})
	}
	return s
}

// The immediate check vetoes n1's Raise, whose violation involves n3: n3
// is outside n1's newest snapshot (n1's neighbourhood moved on) but was in
// the one before, within ImmediateMemory. Without the memory (the default
// with LastKnownFor zero: the newest snapshot only) the Raise passes, as
// it does once the snapshot that held n3 is older than the memory.
func TestImmediateCheckSeesNodesOfEarlierSnapshots(t *testing.T) {
	t0 := time.Unix(100, 0)
	ev := node.Event{Kind: node.EventApp, Msg: raise{}, At: t0.Add(25 * time.Second)}
	for _, c := range []struct {
		name    string
		memory  time.Duration
		lastAt  time.Duration // when the snapshot without n3 completed
		vetoed  bool
		inCheck []node.ID
	}{
		{"remembered", 30 * time.Second, 20 * time.Second, true, []node.ID{1, 2, 3}},
		{"default", 0, 20 * time.Second, false, []node.ID{1, 2}},
		{"forgotten", 30 * time.Second, 50 * time.Second, false, []node.ID{1, 2}},
	} {
		t.Run(c.name, func(t *testing.T) {
			core := raiseCore(t, 1, false)
			cfg := LayerConfig{Controller: Config{Mode: Off, Spec: raiseSpec}, Immediate: true, ImmediateMemory: c.memory}
			l, _ := newTestLive(t, cfg, core)
			l.Gathered(raiseSnapshot(t, t0.Add(10*time.Second), 1, 2, 3))
			l.Gathered(raiseSnapshot(t, t0.Add(c.lastAt), 1, 2))
			if got := l.gate.CheckView().Nodes(); fmt.Sprint(got) != fmt.Sprint(c.inCheck) {
				t.Fatalf("the check's view holds %v, want %v", got, c.inCheck)
			}
			v, _, err := l.Gate(ev.At, ev, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			st := l.Status()
			if c.vetoed != !v.Handle || st.ImmediateChecks != 1 || st.Vetoes != map[bool]uint64{true: 1}[c.vetoed] {
				t.Fatalf("verdict %v, %d checks, %d vetoes; want vetoed=%v", v, st.ImmediateChecks, st.Vetoes, c.vetoed)
			}
			if c.vetoed && !v.RetryAt.Equal(ev.At.Add(DefaultPostponeDelay)) {
				t.Fatalf("verdict %+v, want the call postponed", v)
			}
		})
	}
	if _, err := NewLayer(LayerConfig{Controller: Config{Spec: raiseSpec}, ImmediateMemory: -1}, nil); err == nil {
		t.Fatal("a negative ImmediateMemory was accepted")
	}
}
