package randtree

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
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

// stateOf returns id's RandTree state in v, or nil when v does not hold it.
func stateOf(v node.View, id node.ID) *State {
	s, _ := v.Service(id).(*State)
	return s
}

// violations accumulates the messages of a failing check. Its zero value
// holds nothing, so a check that passes allocates nothing.
type violations []string

func (vs *violations) add(format string, args ...any) {
	*vs = append(*vs, fmt.Sprintf(format, args...))
}

func (vs violations) err() error {
	if len(vs) == 0 {
		return nil
	}
	return errors.New(strings.Join(vs, "; "))
}

func checkChildrenSiblingsDisjoint(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		s := stateOf(v, id)
		if s == nil {
			continue
		}
		for _, c := range s.Children {
			if contains(s.Siblings, c) {
				vs.add("%v: %v is both a child and a sibling", id, c)
			}
		}
	}
	return vs.err()
}

func checkRootNotChildOrSibling(v node.View) error {
	var vs violations
	nodes := v.Nodes()
	for _, r := range nodes {
		rs := stateOf(v, r)
		// A root that is handing over (PendingRoot set) has joined the new
		// root, which lists it as a child before the JoinReply tells the
		// old root it is one: every handover passes through that state.
		if rs == nil || !rs.IsRoot(r) || rs.PendingRoot != node.None {
			continue
		}
		for _, id := range nodes {
			s := stateOf(v, id)
			if s == nil {
				continue
			}
			if contains(s.Children, r) {
				vs.add("%v: root %v is a child", id, r)
			}
			if contains(s.Siblings, r) {
				vs.add("%v: root %v is a sibling", id, r)
			}
		}
	}
	return vs.err()
}

func checkRootHasNoSiblings(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		s := stateOf(v, id)
		if s != nil && s.IsRoot(id) && len(s.Siblings) > 0 {
			vs.add("%v: root has siblings %s", id, formatIDs(s.Siblings))
		}
	}
	return vs.err()
}

func checkRecoveryTimerRuns(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		s := stateOf(v, id)
		if s != nil && s.Status == StatusJoined && len(s.Peers) > 0 && !v.TimerScheduled(id, TimerRecovery) {
			vs.add("%v: joined with peers %s but no recovery timer", id, formatIDs(s.Peers))
		}
	}
	return vs.err()
}

func checkOneRoot(v node.View) error {
	roots := 0
	for _, id := range v.Nodes() {
		if s := stateOf(v, id); s != nil && s.IsRoot(id) {
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
		if s := stateOf(v, id); s != nil && s.IsRoot(id) {
			ids = append(ids, id)
		}
	}
	return fmt.Errorf("%d roots: %s", roots, formatIDs(ids))
}

func checkAllJoined(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		if s := stateOf(v, id); s != nil && s.Status != StatusJoined {
			vs.add("%v: %v", id, s.Status)
		}
	}
	return vs.err()
}

func checkRootOrParent(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		s := stateOf(v, id)
		if s != nil && s.Status == StatusJoined && s.Root != id && s.Parent == node.None {
			vs.add("%v: neither root nor child (root %v)", id, s.Root)
		}
	}
	return vs.err()
}

func checkParentChildAgree(v node.View) error {
	var vs violations
	for _, id := range v.Nodes() {
		s := stateOf(v, id)
		if s == nil || s.Status != StatusJoined {
			continue
		}
		if s.Parent != node.None {
			if p := stateOf(v, s.Parent); p != nil && !contains(p.Children, id) {
				vs.add("%v: parent %v does not list it as a child", id, s.Parent)
			}
		}
		for _, c := range s.Children {
			if cs := stateOf(v, c); cs != nil && cs.Parent != id {
				vs.add("%v: child %v has parent %v", id, c, cs.Parent)
			}
		}
	}
	return vs.err()
}

func checkNoLoops(v node.View) error {
	var vs violations
	nodes := v.Nodes()
	for _, start := range nodes {
		// A path of more parent links than there are nodes in the view
		// must revisit one of them.
		id := start
		for steps := 0; ; steps++ {
			s := stateOf(v, id)
			if s == nil || s.Parent == node.None {
				break
			}
			if steps > len(nodes) {
				vs.add("%v: parent pointers loop", start)
				break
			}
			id = s.Parent
		}
	}
	return vs.err()
}
