package pastry

import (
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// mapView is a hand-built node.View whose Nodes does not allocate.
type mapView = servicetest.View[*State]

func newView(states map[node.ID]*State) *mapView { return servicetest.NewView(states) }

// ringOf returns joined states of the given nodes, each knowing all the
// others (so its leaf set is the true one).
func ringOf(members ...node.ID) map[node.ID]*State {
	out := map[node.ID]*State{}
	for _, id := range members {
		s := newState(byID())
		s.Status = StatusJoined
		s.Table = make([]node.ID, s.sp.digits*s.sp.cols())
		for _, x := range members {
			s.learn(id, x)
		}
		out[id] = s
	}
	return out
}

func check(t *testing.T, name string, v node.View) error {
	t.Helper()
	return servicetest.Property(t, Properties(), name).Check(v)
}

func TestPropertiesHoldOnAFormedRing(t *testing.T) {
	v := newView(ringOf(10, 20, 30, 40, 50))
	for _, p := range Properties() {
		if err := p.Check(v); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if allocs := testing.AllocsPerRun(10, func() { _ = p.Check(v) }); allocs != 0 {
			t.Errorf("%s allocates %v times while it holds", p.Name, allocs)
		}
	}
	if got := Summarize(v).String(); got != "joined 5/5, leaf sets consistent 5/5, stale entries 0" {
		t.Errorf("summary %s", got)
	}
}

// TestStaleEntryBreaksLeafSetsConsistent is the end state of the bug: n30
// rejoins and stays joining while every other node keeps its old entry.
func TestStaleEntryBreaksLeafSetsConsistent(t *testing.T) {
	states := ringOf(10, 20, 30, 40)
	x := newState(byID())
	x.Status = StatusJoining
	x.Bootstrap = 10
	states[30] = x
	v := newView(states)
	if err := check(t, AllJoined, v); err == nil || err.Error() != "n30: joining" {
		t.Errorf("AllJoined: %v", err)
	}
	err := check(t, LeafSetsConsistent, v)
	if err == nil || !strings.Contains(err.Error(), "n10: left leaf n30 where the nearest joined node is n20") {
		t.Errorf("LeafSetsConsistent: %v", err)
	}
	if got := Summarize(v).String(); got != "joined 3/4, leaf sets consistent 0/3, stale entries 3" {
		t.Errorf("summary %s", got)
	}
	// The well-formedness of the leaf sets is not in question.
	if err := check(t, LeafSetWellFormed, v); err != nil {
		t.Errorf("LeafSetWellFormed: %v", err)
	}
}

func TestLeafSetsConsistentOnPartialViews(t *testing.T) {
	states := ringOf(10, 20, 30, 40, 50)
	// A neighbourhood snapshot of n30 that lacks n50: n30's leaf n50 is
	// not judged, and n10's and n20's leaf sets are judged on what the
	// view holds.
	delete(states, 50)
	if err := check(t, LeafSetsConsistent, newView(states)); err != nil {
		t.Errorf("partial view: %v", err)
	}
	// The leaves inside the view must be the nearest joined nodes of the
	// view: n30 forgets n40.
	states[30].purge(30, 40)
	err := check(t, LeafSetsConsistent, newView(states))
	// (The purge refilled the side with n10; n50 is outside the view.)
	if err == nil || !strings.Contains(err.Error(), "n30: right leaf n10 where the nearest joined node is n40") {
		t.Errorf("missing leaf: %v", err)
	}
	// A side with room must hold every joined node of the view that
	// belongs there.
	full := ringOf(10, 20, 30, 40, 50)
	full[30].Right = ids(40)
	err = check(t, LeafSetsConsistent, newView(full))
	if err == nil || !strings.Contains(err.Error(), "n30: right side [n40] misses n50") {
		t.Errorf("side with room: %v", err)
	}
	if err := check(t, LeafSetsConsistent, newView(map[node.ID]*State{1: newState(byID())})); err == nil {
		t.Error("a view without a joined node is consistent")
	}
}

func TestWellFormedness(t *testing.T) {
	states := ringOf(10, 20, 30)
	s := states[20]
	s.Right = ids(20, 30, 10)
	s.Left = ids(30, 10) // sorted the wrong way: n10 is nearer on the left
	s.Table[0] = 20
	v := newView(states)
	err := check(t, LeafSetWellFormed, v)
	for _, want := range []string{"n20: right side has 3 leaves, more than 2", "n20: right leaf n20 is the node itself", "n20: left side [n30 n10] is not sorted"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LeafSetWellFormed: %v, want %q", err, want)
		}
	}
	if err := check(t, RoutingTableWellFormed, v); err == nil || !strings.Contains(err.Error(), "n20: routing table row 0 column 0 holds n20") {
		t.Errorf("RoutingTableWellFormed: %v", err)
	}
}
