package steering

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// flagSvc raises Bad on its "bad" timer (n1 only) and counts its "tick"
// timer; neither matters to the other.
type flagSvc struct {
	Bad   bool
	Ticks int
}

func (s *flagSvc) Init(env node.Env) {
	env.SetTimer("tick", time.Second)
	if env.Self() == 1 {
		env.SetTimer("bad", 2*time.Second)
	}
}
func (s *flagSvc) HandleMessage(node.Env, node.ID, node.Message) {}
func (s *flagSvc) HandleApp(node.Env, node.Message)              {}
func (s *flagSvc) HandleTransportError(node.Env, node.ID)        {}
func (s *flagSvc) HandleTimer(env node.Env, name string) {
	switch name {
	case "bad":
		s.Bad = true
	case "tick":
		s.Ticks++
		env.SetTimer("tick", time.Second)
	}
}

// minimizePath drops the events a violation does not need, whatever their
// position, and keeps the ones it does.
func TestMinimizePathDropsUnneededEvents(t *testing.T) {
	spec := node.Spec{Name: "flag", New: func() node.Service { return &flagSvc{} },
		Properties: []node.Property{node.Always("NotBad", func(v node.View) error {
			for _, id := range v.Nodes() {
				if v.Service(id).(*flagSvc).Bad {
					return errors.New("bad")
				}
			}
			return nil
		})}}
	// Any timer order: the test drops ticks that the virtual clock would
	// make "bad" (due later) wait for.
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, AnyOrderTimers: true})
	if err != nil {
		t.Fatal(err)
	}
	props := []consequence.Property[*consequence.GlobalState]{consequence.AdaptProperty(spec.Properties[0])}
	tick := func(id node.ID) consequence.ActorAction {
		return consequence.ActorAction{Kind: consequence.ActTimer, Node: id, Timer: "tick"}
	}
	bad := consequence.ActorAction{Kind: consequence.ActTimer, Node: 1, Timer: "bad"}
	path := []consequence.ActorAction{tick(2), tick(1), tick(2), bad}
	got, verr := minimizePath(m, props, m.Start(), path, "NotBad", nil)
	if !slices.Equal(got, []consequence.ActorAction{bad}) || verr == nil {
		t.Fatalf("minimized to %v (%v), want [%v] with its error", got, verr, bad)
	}
	// A path with nothing to drop comes back as it was.
	got, _ = minimizePath(m, props, m.Start(), []consequence.ActorAction{bad}, "NotBad", errors.New("bad"))
	if !slices.Equal(got, []consequence.ActorAction{bad}) {
		t.Fatalf("minimal path changed to %v", got)
	}
	if Shape(path) != "A timer tick; B timer tick; A timer tick; B timer bad" {
		t.Fatalf("shape %q", Shape(path))
	}
}

// PredictionLog keeps one entry per property and shape, in the order they
// were first predicted, with every predicting node and a round count that
// counts a round once.
func TestPredictionLog(t *testing.T) {
	at := time.Unix(100, 0)
	p := func(id node.ID, prop string) Prediction {
		return Prediction{Property: prop, Path: []consequence.ActorAction{{Kind: consequence.ActTimer, Node: id, Timer: "bad"}}}
	}
	var l PredictionLog
	l.Add(at, 5, &RoundReport{Predictions: []Prediction{p(1, "NotBad"), p(2, "NotBad")}}) // same shape twice in a round
	l.Add(at.Add(time.Second), 3, &RoundReport{Predictions: []Prediction{p(7, "Other"), p(9, "NotBad")}})
	l.Add(at.Add(2*time.Second), 5, nil)
	es := l.Entries()
	if l.Len() != 2 || es[0].Property != "NotBad" || es[1].Property != "Other" {
		t.Fatalf("entries %+v", es)
	}
	if e := es[0]; e.Rounds != 2 || !slices.Equal(e.Nodes, []node.ID{3, 5}) || e.Node != 5 || !e.First.Equal(at) || e.Shape != "A timer bad" {
		t.Fatalf("first entry %+v", e)
	}
}

// Datagram events have a shape and replay like deliveries.
func TestShapeAndEquivalenceOfDatagrams(t *testing.T) {
	d := consequence.ActorAction{Kind: consequence.ActDeliverDatagram, Node: 7, Peer: 3, Msg: testMsg{}}
	x := consequence.ActorAction{Kind: consequence.ActDropDatagram, Node: 3, Peer: 7, Msg: testMsg{}}
	if got := Shape([]consequence.ActorAction{d, x}); got != "A deliver-datagram test.Msg from B; B drop-datagram test.Msg from A" {
		t.Fatalf("shape %q", got)
	}
	if !equivalent(d, d) || equivalent(d, x) || equivalent(d, consequence.ActorAction{Kind: consequence.ActDeliverDatagram, Node: 7, Peer: 4, Msg: testMsg{}}) {
		t.Fatal("datagram equivalence")
	}
}

type testMsg struct{}

func (testMsg) MessageType() string { return "test.Msg" }

// A refused send has a shape, counts as a fault, and replays as a refusal
// of a message of the same type to the same peer.
func TestShapeAndEquivalenceOfRefusals(t *testing.T) {
	r := consequence.ActorAction{Kind: consequence.ActRefuse, Node: 3, Peer: 7, Msg: testMsg{}}
	if got := Shape([]consequence.ActorAction{r}); got != "A refuse-send test.Msg to B" {
		t.Fatalf("shape %q", got)
	}
	if !equivalent(r, r) || equivalent(r, consequence.ActorAction{Kind: consequence.ActRefuse, Node: 3, Peer: 8, Msg: testMsg{}}) ||
		equivalent(r, consequence.ActorAction{Kind: consequence.ActDropDatagram, Node: 3, Peer: 7, Msg: testMsg{}}) {
		t.Fatal("refusal equivalence")
	}
	if !isFault(r) {
		t.Fatal("a refusal is not a fault")
	}
}
