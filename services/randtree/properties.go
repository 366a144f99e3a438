package randtree

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
	"github.com/seed6eee2ec7/crystalball/services/internal/violation"
)

// Property names. The safety properties are the four the CrystalBall paper
// reports violated (§5.2.1); the liveness properties are MaceMC's four for
// RandTree plus AllJoined.
const (
	// ChildrenSiblingsDisjoint (safety, bug 1): no node lists a node as
	// both child and sibling.
	ChildrenSiblingsDisjoint = "ChildrenSiblingsDisjoint"
	// RootNotChildOrSibling (safety, bug 2): no node lists a joined root as
	// a child or a sibling. A root in the middle of handing the position
	// over (PendingRoot set) is exempt: the new root accepts it as a child
	// before it learns that it is one.
	RootNotChildOrSibling = "RootNotChildOrSibling"
	// RootHasNoSiblings (safety, bug 3): a joined root has no siblings.
	RootHasNoSiblings = "RootHasNoSiblings"
	// RecoveryTimerRuns (safety, bug 4): a joined node with peers has its
	// recovery timer scheduled.
	RecoveryTimerRuns = "RecoveryTimerRuns"

	// OneRoot (liveness): exactly one joined node is a root.
	OneRoot = "OneRoot"
	// AllJoined (liveness): every node is joined.
	AllJoined = "AllJoined"
	// RootOrParent (liveness): every joined node is a root or has a parent.
	RootOrParent = "RootOrParent"
	// ParentChildAgree (liveness): a joined node's parent lists it as a
	// child and its children name it as their parent.
	ParentChildAgree = "ParentChildAgree"
	// NoLoops (liveness): following parent pointers never cycles.
	NoLoops = "NoLoops"
)

// SafetyProperties returns RandTree's safety properties, in bug order.
//
// Every check evaluates only the nodes the view holds (a neighbourhood
// snapshot is partial), does not allocate when the property holds, and on
// a violation names every offending node, e.g. "n9: n13 is both a child and
// a sibling".
func SafetyProperties() []node.Property {
	return []node.Property{
		node.Always(ChildrenSiblingsDisjoint, checkChildrenSiblingsDisjoint),
		node.Always(RootNotChildOrSibling, checkRootNotChildOrSibling),
		node.Always(RootHasNoSiblings, checkRootHasNoSiblings),
		node.Always(RecoveryTimerRuns, checkRecoveryTimerRuns),
	}
}

// LivenessProperties returns RandTree's liveness properties: together they
// say that all nodes eventually form a single spanning tree.
func LivenessProperties() []node.Property {
	return []node.Property{
		node.Eventually(OneRoot, checkOneRoot),
		node.Eventually(AllJoined, checkAllJoined),
		node.Eventually(RootOrParent, checkRootOrParent),
		node.Eventually(ParentChildAgree, checkParentChildAgree),
		node.Eventually(NoLoops, checkNoLoops),
	}
}

// Properties returns the safety then the liveness properties.
func Properties() []node.Property {
	return append(SafetyProperties(), LivenessProperties()...)
}

func checkChildrenSiblingsDisjoint(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		for _, c := range s.Children {
			if contains(s.Siblings, c) {
				vs.Add("%v: %v is both a child and a sibling", id, c)
			}
		}
	}
	return vs.Err()
}

func checkRootNotChildOrSibling(v node.View) error {
	var vs violation.List
	nodes := v.Nodes()
	for _, r := range nodes {
		rs := viewstate.Of[*State](v, r)
		// A root that is handing over (PendingRoot set) has joined the new
		// root, which lists it as a child before the JoinReply tells the
		// old root it is one: every handover passes through that state.
		if rs == nil || !rs.IsRoot(r) || rs.PendingRoot != node.None {
			continue
		}
		for _, id := range nodes {
			s := viewstate.Of[*State](v, id)
			if s == nil {
				continue
			}
			if contains(s.Children, r) {
				vs.Add("%v: root %v is a child", id, r)
			}
			if contains(s.Siblings, r) {
				vs.Add("%v: root %v is a sibling", id, r)
			}
		}
	}
	return vs.Err()
}

func checkRootHasNoSiblings(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s != nil && s.IsRoot(id) && len(s.Siblings) > 0 {
			vs.Add("%v: root has siblings %s", id, formatIDs(s.Siblings))
		}
	}
	return vs.Err()
}

func checkRecoveryTimerRuns(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s != nil && s.Status == StatusJoined && len(s.Peers) > 0 && !v.TimerScheduled(id, TimerRecovery) {
			vs.Add("%v: joined with peers %s but no recovery timer", id, formatIDs(s.Peers))
		}
	}
	return vs.Err()
}

func checkOneRoot(v node.View) error {
	roots := 0
	for _, id := range v.Nodes() {
		if s := viewstate.Of[*State](v, id); s != nil && s.IsRoot(id) {
			roots++
		}
	}
	switch roots {
	case 1:
		return nil
	case 0:
		return errors.New("no root")
	}
	var ids []node.ID
	for _, id := range v.Nodes() {
		if s := viewstate.Of[*State](v, id); s != nil && s.IsRoot(id) {
			ids = append(ids, id)
		}
	}
	return fmt.Errorf("%d roots: %s", roots, formatIDs(ids))
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

func checkRootOrParent(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s != nil && s.Status == StatusJoined && s.Root != id && s.Parent == node.None {
			vs.Add("%v: neither root nor child (root %v)", id, s.Root)
		}
	}
	return vs.Err()
}

func checkParentChildAgree(v node.View) error {
	var vs violation.List
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil || s.Status != StatusJoined {
			continue
		}
		if s.Parent != node.None {
			if p := viewstate.Of[*State](v, s.Parent); p != nil && !contains(p.Children, id) {
				vs.Add("%v: parent %v does not list it as a child", id, s.Parent)
			}
		}
		for _, c := range s.Children {
			if cs := viewstate.Of[*State](v, c); cs != nil && cs.Parent != id {
				vs.Add("%v: child %v has parent %v", id, c, cs.Parent)
			}
		}
	}
	return vs.Err()
}

func checkNoLoops(v node.View) error {
	var vs violation.List
	nodes := v.Nodes()
	for _, start := range nodes {
		// A path of more parent links than there are nodes in the view
		// must revisit one of them.
		id := start
		for steps := 0; ; steps++ {
			s := viewstate.Of[*State](v, id)
			if s == nil || s.Parent == node.None {
				break
			}
			if steps > len(nodes) {
				vs.Add("%v: parent pointers loop", start)
				break
			}
			id = s.Parent
		}
	}
	return vs.Err()
}
