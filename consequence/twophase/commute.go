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

var _ consequence.KeyedCommuter[State, Action] = (*Model)(nil)

// KeyBits implements consequence.KeyedCommuter: RM i's four actions have
// keys 4i..4i+3 (RMPrepare, RMChooseToAbort, RMRcvCommitMsg,
// RMRcvAbortMsg), the TM's follow at 4n (TMCommit, TMAbort, then
// TMRcvPrepared(i) at 4n+2+i): 5n+2 keys, which fit a sleep set up to 12
// RMs; beyond, the TM's last actions have no key and never sleep. Keys
// are by node so that Independent is a mask.
func (m *Model) KeyBits(acts []consequence.Action[Action], bits []uint64) {
	for i := range acts {
		bits[i] = m.keyBit(acts[i].Act)
	}
}

// keyBit returns 1<<key for a's key, or 0 if it has none (see KeyBits).
func (m *Model) keyBit(a Action) uint64 {
	var k int
	switch a.Kind {
	case RMPrepare, RMChooseToAbort, RMRcvCommitMsg, RMRcvAbortMsg:
		k = 4*int(a.RM) + int(a.Kind-RMPrepare)
	case TMCommit:
		k = 4 * m.n
	case TMAbort:
		k = 4*m.n + 1
	case TMRcvPrepared:
		k = 4*m.n + 2 + int(a.RM)
	default:
		return 0
	}
	if k >= 64 {
		return 0
	}
	return 1 << k
}

// Independent implements consequence.KeyedCommuter: every key but those of
// b's node, as Commute has it (none with Options.Symmetry).
func (m *Model) Independent(_ State, b consequence.Action[Action]) uint64 {
	if m.sym {
		return 0
	}
	return m.keys &^ m.nodeKeys(b.Node)
}

// nodeKeys returns the keys of node n's actions (RM n, or the TM for n ==
// the number of RMs).
func (m *Model) nodeKeys(n int) uint64 {
	if n < m.n {
		return 0xf << (4 * n)
	}
	return m.keys &^ (1<<(4*m.n) - 1)
}
