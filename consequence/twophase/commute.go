package twophase

import "github.com/seed6eee2ec7/crystalball/consequence"

var _ consequence.Commuter[State, Action] = (*Model)(nil)

// Commute implements consequence.Commuter: actions of different nodes
// (two RMs, or an RM and the TM) are independent wherever both are
// enabled. Each RM action reads and writes only its RM's bits and adds a
// message; the TM's actions read tmPrepared and the Prepared messages and
// write the TM's bits: an RM's action never clears what a TM action
// reads, and when both are enabled neither disables the other (TMCommit
// needs every RM prepared, so no RM can prepare or abort then; a received
// Abort means the TM is no longer in init). TestCommute checks it on
// every reachable state. With Options.Symmetry nothing commutes: the
// symmetric fingerprint merges a state with its images, whose action lists
// are in another order, and the search's sleep sets name positions in one
// state's list (the two reductions are not combined until that is proved
// sound).
func (m *Model) Commute(_ State, x, y consequence.Action[Action]) bool {
	return x.Node != y.Node && !m.sym
}

// SameAction implements consequence.Commuter: an action is its kind and RM.
func (m *Model) SameAction(x, y consequence.Action[Action]) bool {
	return x.Act == y.Act
}
