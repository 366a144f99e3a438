package chord

import (
	"slices"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// mapView is a hand-built node.View.
type mapView struct {
	states map[node.ID]*State
}

func (v *mapView) Nodes() []node.ID {
	ids := make([]node.ID, 0, len(v.states))
	for id := range v.states {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (v *mapView) Service(id node.ID) node.Service {
	if s, ok := v.states[id]; ok {
		return s
	}
	return nil
}

func (v *mapView) TimerScheduled(node.ID, string) bool { return false }

// fixedView caches Nodes so that allocation measurements see only the
// property's own allocations.
type fixedView struct {
	*mapView
	ids []node.ID
}

func (v fixedView) Nodes() []node.ID { return v.ids }

func ids(xs ...node.ID) []node.ID { return xs }

// byID are the options of the hand-built states: positions = IDs on a
// 64-identifier ring.
func byID() Options {
	o := DefaultOptions()
	o.Placement = PlaceByID
	o.Bits = 6
	return o.withDefaults()
}

func joined(pred node.ID, succs ...node.ID) *State {
	s := newState(byID())
	s.Status = StatusJoined
	s.Pred = pred
	s.Successors = succs
	return s
}

// healthyRing is n10 → n20 → n30 → n40 → n10 with full successor lists.
func healthyRing() *mapView {
	return &mapView{states: map[node.ID]*State{
		10: joined(40, 20, 30, 40),
		20: joined(10, 30, 40, 10),
		30: joined(20, 40, 10, 20),
		40: joined(30, 10, 20, 30),
	}}
}

func TestPropertiesHoldOnHealthyRing(t *testing.T) {
	v := healthyRing()
	for _, p := range Properties() {
		if err := p.Check(v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	// A lone node is its own predecessor and successor.
	lone := &mapView{states: map[node.ID]*State{7: joined(7)}}
	for _, p := range Properties() {
		if err := p.Check(lone); err != nil {
			t.Errorf("lone node: %s: %v", p.Name, err)
		}
	}
}

func TestPropertiesDoNotAllocateWhenHolding(t *testing.T) {
	mv := healthyRing()
	var v node.View = fixedView{mv, mv.Nodes()}
	for _, p := range Properties() {
		allocs := testing.AllocsPerRun(100, func() {
			if err := p.Check(v); err != nil {
				t.Fatalf("%s: %v", p.Name, err)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per check, want 0", p.Name, allocs)
		}
	}
}

func TestPropertyViolations(t *testing.T) {
	tests := []struct {
		property string
		breakIt  func(v *mapView)
		want     string
	}{
		// Figure 10's end state: C (n30) is its own predecessor with D
		// (n40) as successor.
		{PredSelfImpliesSuccSelf, func(v *mapView) { v.states[30].Pred, v.states[30].Successors = 30, ids(40) },
			"n30: predecessor is itself but successors are [n40]"},
		// Figure 11's end state: n20's predecessor is n30 and its
		// successors include n10, between n30 and n20.
		{NodeOrdering, func(v *mapView) {
			delete(v.states, 40)
			v.states[20].Pred, v.states[20].Successors = 30, ids(30, 10)
		}, "n20: successor n10 lies between predecessor n30 and n20"},
		{NodeOrdering, func(v *mapView) { v.states[40].Pred = 10 },
			"n40: successor n20 lies between predecessor n10 and n40; n40: successor n30 lies between predecessor n10 and n40"},
		{AllJoined, func(v *mapView) { v.states[30].Status = StatusJoining }, "n30: joining"},
		{OneRing, func(v *mapView) { v.states[20].Successors = ids(10) },
			"the ring through n10 has 2 of 4 joined nodes"},
		{OneRing, func(v *mapView) { v.states[20].Successors = nil },
			"successor pointers from n10 do not come back to it"},
		{OneRing, func(v *mapView) { v.states[30].Status = StatusInit },
			"n20: successor n30 is not a joined node of the view (2 of 3 joined nodes reached from n10)"},
		{OneRing, func(v *mapView) { v.states = map[node.ID]*State{} }, "no joined node"},
	}
	for _, tt := range tests {
		t.Run(tt.property, func(t *testing.T) {
			v := healthyRing()
			tt.breakIt(v)
			err := servicetest.Property(t, Properties(), tt.property).Check(v)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// The ordering constraint is about nodes strictly between the predecessor
// and the node: the predecessor itself may be in the successor list (a
// small ring), and nodes that are not joined are not judged.
func TestNodeOrderingBoundaries(t *testing.T) {
	v := healthyRing()
	v.states[20].Successors = ids(30, 40, 10) // 10 is the predecessor
	if err := servicetest.Property(t, Properties(), NodeOrdering).Check(v); err != nil {
		t.Errorf("predecessor in the successor list: %v", err)
	}
	v.states[20].Pred = node.None
	v.states[20].Successors = ids(10)
	if err := servicetest.Property(t, Properties(), NodeOrdering).Check(v); err != nil {
		t.Errorf("no predecessor: %v", err)
	}
	v.states[20].Pred = 30
	v.states[20].Status = StatusJoining
	if err := servicetest.Property(t, Properties(), NodeOrdering).Check(v); err != nil {
		t.Errorf("joining node: %v", err)
	}
}

// TestPropertiesSkipNodesOutsideView: a neighbourhood snapshot holds only
// some nodes; the safety properties judge each node by its own state, and
// OneRing says the ring is broken where it leaves the view.
func TestPropertiesSkipNodesOutsideView(t *testing.T) {
	v := healthyRing()
	delete(v.states, 30)
	for _, p := range SafetyProperties() {
		if err := p.Check(v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	if err := servicetest.Property(t, Properties(), OneRing).Check(v); err == nil || !strings.Contains(err.Error(), "n20: successor n30 is not a joined node of the view") {
		t.Errorf("OneRing: %v", err)
	}
}

func TestPropertyKinds(t *testing.T) {
	for _, p := range SafetyProperties() {
		if p.Kind != node.Safety {
			t.Errorf("%s: kind %v", p.Name, p.Kind)
		}
	}
	for _, p := range LivenessProperties() {
		if p.Kind != node.Liveness {
			t.Errorf("%s: kind %v", p.Name, p.Kind)
		}
	}
}

func TestSummarize(t *testing.T) {
	v := healthyRing()
	got := Summarize(v)
	want := Summary{Nodes: 4, Joined: 4, Ring: 4, SuccessorsCorrect: 4, PredecessorsCorrect: 4}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if s := got.String(); s != "joined 4/4, ring of 4, successors 4/4 and predecessors 4/4 correct" {
		t.Errorf("String: %q", s)
	}
	// n20 skips n30 (a ring of three that leaves n30 out), and n30 is
	// joining.
	v.states[20].Successors = ids(40, 10)
	v.states[30].Status = StatusJoining
	got = Summarize(v)
	want = Summary{Nodes: 4, Joined: 3, Ring: 3, SuccessorsCorrect: 3, PredecessorsCorrect: 2}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// Pointers that never come back to n10.
	v.states[40].Successors = ids(20)
	if got := Summarize(v); got.Ring != 0 {
		t.Errorf("no cycle through n10: %+v", got)
	}
	if got := Summarize(&mapView{}); got != (Summary{}) {
		t.Errorf("empty view: %+v", got)
	}
}
