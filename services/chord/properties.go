package chord

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
	"github.com/seed6eee2ec7/crystalball/services/internal/violation"
)

// Property names. The safety properties are the two the CrystalBall paper
// reports violated in Mace Chord (§5.2.2); the liveness properties are
// MaceMC's for Chord (§6): every node joins, and the joined nodes form one
// ring.
const (
	// PredSelfImpliesSuccSelf (safety, bug 1, Figure 10): a node whose
	// predecessor is itself is alone on its ring, so its successor is
	// itself too — its successor list is empty.
	PredSelfImpliesSuccSelf = "PredSelfImpliesSuccSelf"
	// NodeOrdering (safety, bug 2, Figure 11): for a joined node A with a
	// predecessor P other than A, no node S of A's successor list lies
	// strictly between P and A on the ring (clockwise from P, S ≠ P). The
	// predecessor is meant to be the nearest node before A, so such an S
	// would be a nearer one.
	NodeOrdering = "NodeOrdering"

	// AllJoined (liveness): every node in the view is joined.
	AllJoined = "AllJoined"
	// OneRing (liveness): following successor pointers from the joined
	// node with the smallest ID visits every joined node of the view once,
	// through joined nodes of the view only, and comes back (MaceMC's
	// "AllNodes").
	OneRing = "OneRing"
)

// SafetyProperties returns Chord's safety properties, in bug order.
//
// Every check evaluates only the nodes the view holds (a neighbourhood
// snapshot is partial), does not allocate when the property holds, and on a
// violation names every offending node, e.g. "n3: predecessor is itself
// but successors are [n4]".
func SafetyProperties() []node.Property {
	return []node.Property{
		node.Always(PredSelfImpliesSuccSelf, checkPredSelfImpliesSuccSelf),
		node.Always(NodeOrdering, checkNodeOrdering),
	}
}

// LivenessProperties returns Chord's liveness properties: together they
// say that all nodes eventually form a single ring. OneRing is about the
// whole system: on a partial view a successor outside the view breaks the
// ring.
func LivenessProperties() []node.Property {
	return []node.Property{
		node.Eventually(AllJoined, checkAllJoined),
		node.Eventually(OneRing, checkOneRing),
	}
}

// Properties returns the safety then the liveness properties.
func Properties() []node.Property {
	return append(SafetyProperties(), LivenessProperties()...)
}

func checkPredSelfImpliesSuccSelf(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s != nil && s.Pred == id && len(s.Successors) > 0 {
			vs.Add("%v: predecessor is itself but successors are %s", id, formatIDs(s.Successors))
		}
	}
	return vs.Err()
}

func checkNodeOrdering(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil || s.Status != StatusJoined || s.Pred == node.None || s.Pred == id {
			continue
		}
		r := s.ring
		me, p := r.pos(id), r.pos(s.Pred)
		for _, x := range s.Successors {
			if x != s.Pred && r.between(r.pos(x), p, me) {
				vs.Add("%v: successor %v lies between predecessor %v and %v", id, x, s.Pred, id)
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

func checkOneRing(v node.View) error {
	start, joined := node.None, 0
	for _, id := range v.Nodes() {
		if s := viewstate.Of[*State](v, id); s != nil && s.Status == StatusJoined {
			if start == node.None {
				start = id
			}
			joined++
		}
	}
	if joined == 0 {
		return errors.New("no joined node")
	}
	// Successor pointers form a functional graph: a walk that first comes
	// back to its start after exactly as many steps as there are joined
	// nodes has visited each of them once.
	id := start
	for steps := 1; steps <= joined; steps++ {
		next := viewstate.Of[*State](v, id).successor(id)
		ns := viewstate.Of[*State](v, next)
		if ns == nil || ns.Status != StatusJoined {
			return fmt.Errorf("%v: successor %v is not a joined node of the view (%d of %d joined nodes reached from %v)", id, next, steps, joined, start)
		}
		if next == start {
			if steps == joined {
				return nil
			}
			return fmt.Errorf("the ring through %v has %d of %d joined nodes", start, steps, joined)
		}
		id = next
	}
	return fmt.Errorf("successor pointers from %v do not come back to it", start)
}
