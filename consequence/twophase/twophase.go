// Package twophase is the two-phase commit protocol of Gray and Lamport's
// TLA+ specification TwoPhase.tla, as a hand-written consequence.Model with
// a bit-packed state. It is how the explorer is checked against published
// state counts: exhaustive search of the specification finds exactly 288
// distinct states with 3 resource managers and 8,832 with 5 (TLC and
// Stateright report the same numbers).
//
// # The specification
//
// Variables: rmState[rm] ∈ {working, prepared, committed, aborted} for each
// resource manager (RM); tmState ∈ {init, committed, aborted} for the
// transaction manager (TM); tmPrepared, the set of RMs from which the TM has
// received Prepared; msgs, the set of messages sent (it only grows, and a
// receive does not consume): Prepared(rm), Commit, Abort. Initially every RM
// is working, the TM is in init, and both sets are empty. The actions, with
// their enabling conditions:
//
//	TMRcvPrepared(rm)   tmState = init ∧ Prepared(rm) ∈ msgs → tmPrepared ∪= {rm}
//	TMCommit            tmState = init ∧ tmPrepared = RM → tmState = committed, send Commit
//	TMAbort             tmState = init → tmState = aborted, send Abort
//	RMPrepare(rm)       rmState[rm] = working → prepared, send Prepared(rm)
//	RMChooseToAbort(rm) rmState[rm] = working → aborted
//	RMRcvCommitMsg(rm)  Commit ∈ msgs → rmState[rm] = committed
//	RMRcvAbortMsg(rm)   Abort ∈ msgs → rmState[rm] = aborted
//
// The safety property TCConsistent says no RM has committed while another
// has aborted. Terminated (a liveness property: every RM ends committed or
// aborted) holds in every quiescent state.
//
// # Nodes and actions
//
// For the explorer, RM i is node i and the TM is node RMs. TMCommit, TMAbort,
// RMPrepare and RMChooseToAbort are local actions (decisions a node takes on
// its own); TMRcvPrepared and the RMs' receives are message deliveries.
// Actions lists them in the order TMCommit, TMAbort, then for each RM
// TMRcvPrepared, RMPrepare, RMChooseToAbort, RMRcvCommitMsg, RMRcvAbortMsg.
//
// # Counting the states
//
// Sorting states by tmState gives the reachable states in closed form
// (StateCount): while the TM is in init no Commit or Abort exists and each RM
// is independently working, aborted, or prepared with or without the TM
// having received its Prepared (4^n); after TMCommit every RM is in
// tmPrepared and is prepared or committed (2^n); after TMAbort each RM is
// working, aborted without having prepared, or prepared or aborted after
// preparing, the latter two with or without the TM having received its
// Prepared (6^n). So 4^n + 2^n + 6^n: 288 for 3 RMs, 8,832 for 5, 296,448 for
// 7, 1,745,408 for 8.
//
// # Symmetry
//
// With Options.Symmetry the RMs are interchangeable: the search keeps one
// state per orbit under renamings of the RMs (Canonical sorts the RMs by
// their part of the state), C(n+3,3) + (n+1) + C(n+5,5) of them
// (OrbitCount): 80 for 3 RMs, 314 for 5, 3,300 for 10.
package twophase

import (
	"errors"
	"fmt"
	"math/bits"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// MaxRMs is the largest number of resource managers a State can hold.
const MaxRMs = 14

// RMState is a resource manager's state.
type RMState uint8

// The states of a resource manager.
const (
	Working RMState = iota
	Prepared
	Committed
	Aborted
)

// String returns the TLA+ name ("working", ...).
func (s RMState) String() string {
	return [...]string{"working", "prepared", "committed", "aborted"}[s&3]
}

// TMState is the transaction manager's state.
type TMState uint8

// The states of the transaction manager.
const (
	TMInit TMState = iota
	TMCommitted
	TMAborted
)

// String returns the TLA+ name ("init", "committed", "aborted").
func (s TMState) String() string {
	switch s {
	case TMInit:
		return "init"
	case TMCommitted:
		return "committed"
	case TMAborted:
		return "aborted"
	}
	return fmt.Sprintf("tm-state(%d)", uint8(s))
}

// State is a global state, bit-packed: rmState[i] in bits 2i..2i+1,
// tmPrepared in bits 28..41, the Prepared messages in bits 42..55, tmState
// in bits 56..57, the Commit message in bit 58 and Abort in bit 59.
type State uint64

const (
	prepShift    = 28
	msgShift     = 42
	tmShift      = 56
	commitMsgBit = State(1) << 58
	abortMsgBit  = State(1) << 59
	rmLowBits    = 0x5555555 // the low bit of each 2-bit rmState (14 RMs)
)

// RM returns rmState[rm].
func (s State) RM(rm int) RMState { return RMState(s>>(2*rm)) & 3 }

// TM returns tmState.
func (s State) TM() TMState { return TMState(s>>tmShift) & 3 }

// TMPrepared reports whether rm ∈ tmPrepared.
func (s State) TMPrepared(rm int) bool { return s&(1<<(prepShift+rm)) != 0 }

// PreparedMsg reports whether Prepared(rm) ∈ msgs.
func (s State) PreparedMsg(rm int) bool { return s&(1<<(msgShift+rm)) != 0 }

// CommitMsg reports whether Commit ∈ msgs.
func (s State) CommitMsg() bool { return s&commitMsgBit != 0 }

// AbortMsg reports whether Abort ∈ msgs.
func (s State) AbortMsg() bool { return s&abortMsgBit != 0 }

func (s State) withRM(rm int, v RMState) State {
	return s&^(3<<(2*rm)) | State(v)<<(2*rm)
}

func (s State) withTM(v TMState) State { return s&^(3<<tmShift) | State(v)<<tmShift }

// committedAborted returns the bit masks (one bit per RM, at 2i) of the
// committed and the aborted RMs.
func (s State) committedAborted() (committed, aborted State) {
	hi := (s >> 1) & rmLowBits
	lo := s & rmLowBits
	return hi &^ lo, hi & lo
}

// Format renders the state for n RMs, e.g.
// "rm=[prepared aborted working] tm=init tmPrepared={0} msgs={Prepared(0)}".
func (s State) Format(n int) string {
	var b strings.Builder
	b.WriteString("rm=[")
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.RM(i).String())
	}
	fmt.Fprintf(&b, "] tm=%v tmPrepared={", s.TM())
	sep := ""
	for i := range n {
		if s.TMPrepared(i) {
			fmt.Fprintf(&b, "%s%d", sep, i)
			sep = ","
		}
	}
	b.WriteString("} msgs={")
	sep = ""
	for i := range n {
		if s.PreparedMsg(i) {
			fmt.Fprintf(&b, "%sPrepared(%d)", sep, i)
			sep = " "
		}
	}
	if s.CommitMsg() {
		b.WriteString(sep + "Commit")
		sep = " "
	}
	if s.AbortMsg() {
		b.WriteString(sep + "Abort")
	}
	b.WriteByte('}')
	return b.String()
}

// Kind names an action of the specification.
type Kind uint8

// The actions of TwoPhase.tla.
const (
	TMRcvPrepared Kind = iota + 1
	TMCommit
	TMAbort
	RMPrepare
	RMChooseToAbort
	RMRcvCommitMsg
	RMRcvAbortMsg
)

var kindNames = [...]string{
	TMRcvPrepared:   "TMRcvPrepared",
	TMCommit:        "TMCommit",
	TMAbort:         "TMAbort",
	RMPrepare:       "RMPrepare",
	RMChooseToAbort: "RMChooseToAbort",
	RMRcvCommitMsg:  "RMRcvCommitMsg",
	RMRcvAbortMsg:   "RMRcvAbortMsg",
}

// String returns the TLA+ action name.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Action is one action: its kind and, except for TMCommit and TMAbort, the
// RM it is about.
type Action struct {
	Kind Kind
	RM   uint8
}

// String renders the action as in TLA+: "RMPrepare(2)", "TMCommit".
func (a Action) String() string {
	if a.Kind == TMCommit || a.Kind == TMAbort {
		return a.Kind.String()
	}
	return fmt.Sprintf("%v(%d)", a.Kind, a.RM)
}

// Options configure the model. The zero value of each field means its
// default (DefaultOptions).
type Options struct {
	// RMs is the number of resource managers, 1..MaxRMs; zero means
	// DefaultRMs.
	RMs int
	// BugCommitWithoutMsg plants a bug for testing the checker: a prepared
	// RM may take RMRcvCommitMsg although no Commit message was sent, so an
	// RM can commit while another aborts.
	BugCommitWithoutMsg bool
	// Symmetry declares the RMs interchangeable: Fingerprint returns the
	// fingerprint of the canonical member of the state's orbit under
	// permutations of the RMs (Canonical), so the search keeps one state per
	// orbit. Stored states, actions, paths and properties are unchanged; the
	// reachable orbits are counted by OrbitCount. Sound for TCConsistent and
	// Terminated, which do not depend on the RMs' names (see symmetry.go).
	Symmetry bool
}

// DefaultRMs is Options.RMs's default: three resource managers, the
// smallest published state count (288 states).
const DefaultRMs = 3

// DefaultOptions returns the options a zero Options stands for: DefaultRMs
// resource managers and no planted bug.
func DefaultOptions() Options { return Options{RMs: DefaultRMs} }

// ErrInvalidOptions is wrapped by New's errors.
var ErrInvalidOptions = errors.New("twophase: invalid options")

// Model is the TwoPhase specification for a fixed set of RMs. It is
// immutable and safe for concurrent use.
type Model struct {
	n   int
	all State // tmPrepared = RM
	bug bool
	sym bool
	// keys is the set of the model's action keys (KeyBits).
	keys uint64
}

var _ consequence.Model[State, Action] = (*Model)(nil)

// New returns the model for opts.
func New(opts Options) (*Model, error) {
	if opts.RMs == 0 {
		opts.RMs = DefaultRMs
	}
	if opts.RMs < 1 || opts.RMs > MaxRMs {
		return nil, fmt.Errorf("%w: RMs = %d, want 1..%d (0 means %d)", ErrInvalidOptions, opts.RMs, MaxRMs, DefaultRMs)
	}
	keys := ^uint64(0)
	if k := 5*opts.RMs + 2; k < 64 {
		keys = 1<<k - 1
	}
	return &Model{
		n:    opts.RMs,
		all:  State((1<<opts.RMs)-1) << prepShift,
		bug:  opts.BugCommitWithoutMsg,
		sym:  opts.Symmetry,
		keys: keys,
	}, nil
}

// RMs returns the number of resource managers.
func (m *Model) RMs() int { return m.n }

// TM returns the transaction manager's node index (RM i is node i).
func (m *Model) TM() int { return m.n }

// Init returns the single initial state: every RM working, TM in init, no
// messages (the zero State).
func (m *Model) Init() []State { return []State{0} }

// Actions appends the enabled actions of s, in the order the package
// documentation gives.
func (m *Model) Actions(s State, out []consequence.Action[Action]) []consequence.Action[Action] {
	tm := m.n
	tmInit := s.TM() == TMInit
	if tmInit {
		if s&m.all == m.all {
			out = append(out, consequence.Action[Action]{Node: tm, Local: true, Act: Action{Kind: TMCommit}})
		}
		out = append(out, consequence.Action[Action]{Node: tm, Local: true, Act: Action{Kind: TMAbort}})
	}
	commit, abort := s.CommitMsg(), s.AbortMsg()
	for i := range m.n {
		rm := uint8(i)
		if tmInit && s.PreparedMsg(i) {
			out = append(out, consequence.Action[Action]{Node: tm, Act: Action{Kind: TMRcvPrepared, RM: rm}})
		}
		st := s.RM(i)
		if st == Working {
			out = append(out,
				consequence.Action[Action]{Node: i, Local: true, Act: Action{Kind: RMPrepare, RM: rm}},
				consequence.Action[Action]{Node: i, Local: true, Act: Action{Kind: RMChooseToAbort, RM: rm}})
		}
		if commit || (m.bug && st == Prepared) {
			out = append(out, consequence.Action[Action]{Node: i, Act: Action{Kind: RMRcvCommitMsg, RM: rm}})
		}
		if abort {
			out = append(out, consequence.Action[Action]{Node: i, Act: Action{Kind: RMRcvAbortMsg, RM: rm}})
		}
	}
	return out
}

// Next applies a to s; it returns false if a is not enabled in s.
func (m *Model) Next(s State, a Action) (State, bool) {
	rm := int(a.RM)
	if a.Kind != TMCommit && a.Kind != TMAbort && rm >= m.n {
		return s, false
	}
	switch a.Kind {
	case TMRcvPrepared:
		if s.TM() != TMInit || !s.PreparedMsg(rm) {
			return s, false
		}
		return s | 1<<(prepShift+rm), true
	case TMCommit:
		if s.TM() != TMInit || s&m.all != m.all {
			return s, false
		}
		return s.withTM(TMCommitted) | commitMsgBit, true
	case TMAbort:
		if s.TM() != TMInit {
			return s, false
		}
		return s.withTM(TMAborted) | abortMsgBit, true
	case RMPrepare:
		if s.RM(rm) != Working {
			return s, false
		}
		return s.withRM(rm, Prepared) | 1<<(msgShift+rm), true
	case RMChooseToAbort:
		if s.RM(rm) != Working {
			return s, false
		}
		return s.withRM(rm, Aborted), true
	case RMRcvCommitMsg:
		if !s.CommitMsg() && !(m.bug && s.RM(rm) == Prepared) {
			return s, false
		}
		return s.withRM(rm, Committed), true
	case RMRcvAbortMsg:
		if !s.AbortMsg() {
			return s, false
		}
		return s.withRM(rm, Aborted), true
	}
	return s, false
}

// Fingerprint mixes the 60-bit state into 128 bits with two bijective
// 64-bit finalizers, so distinct states never share a fingerprint. With
// Options.Symmetry it fingerprints Canonical(s) instead, so exactly the
// states of one orbit share a fingerprint (without building Canonical(s):
// see orbitFingerprint).
func (m *Model) Fingerprint(s State) node.Hash {
	if m.sym {
		return m.orbitFingerprint(s)
	}
	x := uint64(s)
	return node.Hash{Hi: fmix64(x), Lo: fmix64(bits.RotateLeft64(x, 32) ^ 0x243f6a8885a308d3)}
}

// LocalFingerprint hashes node n's local state: rmState[n] for an RM;
// tmState and tmPrepared for the TM.
func (m *Model) LocalFingerprint(s State, n int) node.Hash {
	var local uint64
	if n == m.n {
		local = uint64(s.TM())<<16 | uint64(s>>prepShift)&(1<<m.n-1) | 1<<20
	} else {
		local = uint64(s.RM(n))
	}
	return node.Hash{Hi: fmix64(local), Lo: fmix64(local ^ 0x13198a2e03707344)}
}

// fmix64 is MurmurHash3's 64-bit finalizer, a bijection.
func fmix64(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// Terminal reports whether every RM has committed or aborted.
func (m *Model) Terminal(s State) bool {
	c, a := s.committedAborted()
	return bits.OnesCount64(uint64(c|a)) == m.n
}

// Properties returns the specification's properties: TCConsistent (safety)
// and Terminated (liveness).
func (m *Model) Properties() []consequence.Property[State] {
	return []consequence.Property[State]{
		consequence.Always("TCConsistent", func(s State) error {
			c, a := s.committedAborted()
			if c != 0 && a != 0 {
				return fmt.Errorf("RM %d committed while RM %d aborted",
					bits.TrailingZeros64(uint64(c))/2, bits.TrailingZeros64(uint64(a))/2)
			}
			return nil
		}),
		consequence.Eventually("Terminated", func(s State) error {
			if !m.Terminal(s) {
				return fmt.Errorf("not every RM committed or aborted: %s", s.Format(m.n))
			}
			return nil
		}),
	}
}

// StateCount returns the number of reachable states for rms resource
// managers, 4^n + 2^n + 6^n (see the package documentation).
func StateCount(rms int) uint64 {
	p := func(b uint64) uint64 {
		r := uint64(1)
		for range rms {
			r *= b
		}
		return r
	}
	return p(4) + p(2) + p(6)
}
