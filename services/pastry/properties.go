package pastry

import (
	"errors"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
	"github.com/seed6eee2ec7/crystalball/services/internal/violation"
)

// Property names. MaceMC checked Pastry for liveness only (its Table 2:
// five bugs, all liveness): every node eventually joins and all nodes form
// one ring, which for Pastry means consistent leaf sets. The safety
// properties are the invariants the routing state keeps in every state.
const (
	// LeafSetWellFormed (safety): each side of every node's leaf set is
	// sorted by distance from the node (ties by node ID), holds at most
	// LeafSize/2 nodes, and holds neither the node itself, None, nor a
	// node twice.
	LeafSetWellFormed = "LeafSetWellFormed"
	// RoutingTableWellFormed (safety): every routing-table entry is
	// another node sharing exactly its row's number of leading digits with
	// the node, whose next digit is its column.
	RoutingTableWellFormed = "RoutingTableWellFormed"

	// AllJoined (liveness): every node in the view is joined.
	AllJoined = "AllJoined"
	// LeafSetsConsistent (liveness): every joined node's leaf set is, on
	// each side, exactly the LeafSize/2 nearest joined nodes of the view
	// on that side — all nodes form one ring. A view may be partial (a
	// neighbourhood snapshot): leaves outside the view are not judged, but
	// a leaf inside it must be a joined node, the leaves inside it must
	// be the nearest joined nodes of the view in order, and a side with
	// room must hold every joined node of the view that belongs there.
	LeafSetsConsistent = "LeafSetsConsistent"
)

// SafetyProperties returns Pastry's safety properties.
//
// Every check evaluates only the nodes the view holds, does not allocate
// when the property holds, and on a violation names every offending node,
// e.g. "n3: right leaf n3 is the node itself".
func SafetyProperties() []node.Property {
	return []node.Property{
		node.Always(LeafSetWellFormed, checkLeafSetWellFormed),
		node.Always(RoutingTableWellFormed, checkRoutingTableWellFormed),
	}
}

// LivenessProperties returns Pastry's liveness properties: together they
// say that all nodes eventually join and form one ring.
func LivenessProperties() []node.Property {
	return []node.Property{
		node.Eventually(AllJoined, checkAllJoined),
		node.Eventually(LeafSetsConsistent, checkLeafSetsConsistent),
	}
}

// Properties returns the safety then the liveness properties.
func Properties() []node.Property {
	return append(SafetyProperties(), LivenessProperties()...)
}

// sideName names a side of the leaf set in messages.
func sideName(right bool) string {
	if right {
		return "right"
	}
	return "left"
}

func checkLeafSetWellFormed(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		s.checkSide(&vs, id, s.Left, false)
		s.checkSide(&vs, id, s.Right, true)
	}
	return vs.Err()
}

// checkSide adds the ways one side of id's leaf set is malformed to vs.
func (s *State) checkSide(vs *violation.List, id node.ID, side []node.ID, right bool) {
	if half := s.opts.LeafSize / 2; len(side) > half {
		vs.Add("%v: %s side has %d leaves, more than %d", id, sideName(right), len(side), half)
	}
	for i, x := range side {
		switch {
		case x == node.None || x == id:
			vs.Add("%v: %s leaf %v is the node itself or none", id, sideName(right), x)
		case i > 0:
			p := side[i-1]
			dp, dx := s.sideDist(id, p, right), s.sideDist(id, x, right)
			if dx < dp || dx == dp && x <= p {
				vs.Add("%v: %s side %s is not sorted by distance or repeats a node", id, sideName(right), formatIDs(side))
			}
		}
	}
}

func checkRoutingTableWellFormed(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil || s.Table == nil {
			continue
		}
		cols := s.sp.cols()
		if len(s.Table) != s.sp.digits*cols {
			vs.Add("%v: routing table has %d entries, want %d", id, len(s.Table), s.sp.digits*cols)
			continue
		}
		for i, x := range s.Table {
			if x == node.None {
				continue
			}
			if r, c, ok := s.slot(id, x); !ok || x == id || r != i/cols || c != i%cols {
				vs.Add("%v: routing table row %d column %d holds %v", id, i/cols, i%cols, x)
			}
		}
	}
	return vs.Err()
}

func checkAllJoined(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		if s := viewstate.Of[*State](v, id); s != nil && s.Status != StatusJoined {
			vs.Add("%v: %v", id, s.Status)
		}
	}
	return vs.Err()
}

func checkLeafSetsConsistent(v node.View) error {
	var vs violation.List
	joined := 0
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil || s.Status != StatusJoined {
			continue
		}
		joined++
		s.checkConsistentSide(&vs, v, id, s.Left, false)
		s.checkConsistentSide(&vs, v, id, s.Right, true)
	}
	if joined == 0 {
		return errors.New("no joined node")
	}
	return vs.Err()
}

// checkConsistentSide compares one side of id's leaf set with the nearest
// joined nodes of the view on that side, found one at a time in order of
// (distance, ID) so that nothing is allocated.
func (s *State) checkConsistentSide(vs *violation.List, v node.View, id node.ID, side []node.ID, right bool) {
	half := s.opts.LeafSize / 2
	prevD, prev := uint64(0), node.None
	ai := 0
	for k := 0; k < half; k++ {
		want, wantD := s.nextJoined(v, id, right, prevD, prev)
		for ai < len(side) && viewstate.Of[*State](v, side[ai]) == nil {
			ai++ // outside the view: not judged
		}
		if want == node.None {
			if ai < len(side) {
				vs.Add("%v: %s leaf %v is not a joined node", id, sideName(right), side[ai])
			}
			return
		}
		if ai >= len(side) {
			if len(side) < half {
				vs.Add("%v: %s side %s misses %v", id, sideName(right), formatIDs(side), want)
			}
			return
		}
		if side[ai] != want {
			vs.Add("%v: %s leaf %v where the nearest joined node is %v", id, sideName(right), side[ai], want)
			return
		}
		ai++
		prevD, prev = wantD, want
	}
}

// nextJoined returns the joined node of the view nearest to id on one side
// after (prevD, prev) in (distance, ID) order, and its distance; None when
// there is none. prev None means "from the start".
func (s *State) nextJoined(v node.View, id node.ID, right bool, prevD uint64, prev node.ID) (node.ID, uint64) {
	best, bestD := node.None, uint64(0)
	for _, x := range v.Nodes() {
		if x == id {
			continue
		}
		if xs := viewstate.Of[*State](v, x); xs == nil || xs.Status != StatusJoined {
			continue
		}
		d := s.sideDist(id, x, right)
		if prev != node.None && (d < prevD || d == prevD && x <= prev) {
			continue
		}
		if best == node.None || d < bestD || d == bestD && x < best {
			best, bestD = x, d
		}
	}
	return best, bestD
}
