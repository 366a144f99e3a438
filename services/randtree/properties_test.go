package randtree

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
	timers map[node.ID][]string
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

func (v *mapView) TimerScheduled(id node.ID, name string) bool {
	return slices.Contains(v.timers[id], name)
}

// fixedView caches Nodes so that allocation measurements see only the
// property's own allocations.
type fixedView struct {
	*mapView
	ids []node.ID
}

func (v fixedView) Nodes() []node.ID { return v.ids }

func ids(xs ...node.ID) []node.ID { return xs }

func joined(root, parent node.ID, children, siblings []node.ID) *State {
	return &State{Status: StatusJoined, Root: root, Parent: parent, Children: children, Siblings: siblings}
}

// healthyTree is n1 (root) → n2, n3; n2 → n4. Every node has peers and a
// recovery timer.
func healthyTree() *mapView {
	v := &mapView{
		states: map[node.ID]*State{
			1: joined(1, 0, ids(2, 3), nil),
			2: joined(1, 1, ids(4), ids(3)),
			3: joined(1, 1, nil, ids(2)),
			4: joined(1, 2, nil, nil),
		},
		timers: map[node.ID][]string{},
	}
	for id, s := range v.states {
		s.Peers = ids(1)
		if id == 1 {
			s.Peers = ids(2)
		}
		v.timers[id] = []string{TimerRecovery}
	}
	return v
}

func TestPropertiesHoldOnHealthyTree(t *testing.T) {
	v := healthyTree()
	for _, p := range Properties() {
		if err := p.Check(v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
}

func TestPropertiesDoNotAllocateWhenHolding(t *testing.T) {
	mv := healthyTree()
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
		{ChildrenSiblingsDisjoint, func(v *mapView) { v.states[2].Siblings = ids(3, 4) },
			"n2: n4 is both a child and a sibling"},
		{RootNotChildOrSibling, func(v *mapView) {
			// n4 believes it is the root while n2 still lists it.
			v.states[4].Root = 4
		}, "n2: root n4 is a child"},
		{RootNotChildOrSibling, func(v *mapView) {
			v.states[3].Root = 3
		}, "n1: root n3 is a child; n2: root n3 is a sibling"},
		{RootHasNoSiblings, func(v *mapView) {
			v.states[3].Root, v.states[3].Parent = 3, node.None
		}, "n3: root has siblings [n2]"},
		{RecoveryTimerRuns, func(v *mapView) { v.timers[4] = nil },
			"n4: joined with peers [n1] but no recovery timer"},
		{OneRoot, func(v *mapView) { v.states[4].Root, v.states[4].Parent = 4, node.None },
			"2 roots: [n1 n4]"},
		{OneRoot, func(v *mapView) { v.states[1].Status = StatusJoining }, "no root"},
		{AllJoined, func(v *mapView) { v.states[3].Status = StatusInit }, "n3: init"},
		{RootOrParent, func(v *mapView) { v.states[4].Parent = node.None },
			"n4: neither root nor child (root n1)"},
		{ParentChildAgree, func(v *mapView) { v.states[4].Parent = 3 },
			"n2: child n4 has parent n3; n4: parent n3 does not list it as a child"},
		{NoLoops, func(v *mapView) { v.states[1].Parent = 4 },
			"n1: parent pointers loop; n2: parent pointers loop; n3: parent pointers loop; n4: parent pointers loop"},
	}
	for _, tt := range tests {
		t.Run(tt.property, func(t *testing.T) {
			v := healthyTree()
			tt.breakIt(v)
			err := servicetest.Property(t, Properties(), tt.property).Check(v)
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestRecoveryTimerRunsIgnoresNodesWithoutPeers(t *testing.T) {
	v := healthyTree()
	v.states[4].Peers = nil
	v.timers[4] = nil
	if err := servicetest.Property(t, Properties(), RecoveryTimerRuns).Check(v); err != nil {
		t.Fatal(err)
	}
	v.states[4].Status = StatusJoining
	v.states[4].Peers = ids(1)
	if err := servicetest.Property(t, Properties(), RecoveryTimerRuns).Check(v); err != nil {
		t.Fatalf("a joining node needs no recovery timer: %v", err)
	}
}

// TestPropertiesSkipNodesOutsideView: a neighbourhood snapshot holds only
// some nodes; links to the others must not count as violations.
func TestPropertiesSkipNodesOutsideView(t *testing.T) {
	v := healthyTree()
	delete(v.states, 1) // n2 and n3 name n1 as parent, n1 is not in view
	delete(v.states, 4) // n2 names n4 as child
	for _, name := range []string{ChildrenSiblingsDisjoint, RootNotChildOrSibling, RootHasNoSiblings,
		RecoveryTimerRuns, RootOrParent, ParentChildAgree, NoLoops} {
		if err := servicetest.Property(t, Properties(), name).Check(v); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// A view without the root has no root: OneRoot is about the whole
	// system and says so.
	if err := servicetest.Property(t, Properties(), OneRoot).Check(v); err == nil || !strings.Contains(err.Error(), "no root") {
		t.Errorf("OneRoot: %v", err)
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
	v := healthyTree()
	got := Summarize(v)
	want := Summary{Nodes: 4, Joined: 4, Roots: 1, Root: 1, TreeSize: 4, Depth: 2}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if s := got.String(); s != "joined 4/4, 1 root (n1), tree of 4 nodes, depth 2" {
		t.Errorf("String: %q", s)
	}
	// n4 promotes itself to root; n2 still lists it but the link is no
	// longer agreed on.
	v.states[4].Root, v.states[4].Parent = 4, node.None
	v.states[3].Status = StatusJoining
	got = Summarize(v)
	want = Summary{Nodes: 4, Joined: 3, Roots: 2, Root: 1, TreeSize: 2, Depth: 1}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// A loop of agreed links must not hang the walk.
	v.states[1].Parent = 2
	v.states[2].Children = ids(1, 4)
	if got := Summarize(v); got.TreeSize != 2 {
		t.Errorf("with a loop: %+v", got)
	}
	if got := Summarize(&mapView{}); got != (Summary{}) {
		t.Errorf("empty view: %+v", got)
	}
}
