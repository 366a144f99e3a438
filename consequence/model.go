package consequence

import "github.com/seed6eee2ec7/crystalball/node"

// Action is one enabled action of a state, as a Model reports it: the
// model's own action value tagged with what the search strategies need to
// know about it.
type Action[A any] struct {
	// Node is the node the action belongs to (the node whose handler runs):
	// a small non-negative index chosen by the model. Consequence prediction
	// keys its localExplored set by (Node, local state of Node).
	Node int
	// Local marks a node-local action — a timer, an application call, an
	// internal choice — as opposed to a message delivery. Consequence
	// prediction expands the local actions of node n only the first time it
	// sees n in a given local state; it always expands message deliveries.
	Local bool
	// Fault marks a local action that injects a fault (a reset, a broken
	// connection, a lost datagram) rather than doing what the node's
	// program does. Consequence prediction treats it as any local action;
	// Options.FullDepth does not re-expand it, since re-running every
	// fault in every near state multiplies a search by the number of
	// fault choices.
	Fault bool
	// Act is the model's action, handed back to Model.Next.
	Act A
}

// Model is a transition system the checker explores. S is a state, A an
// action. The actor system built from node.Services is one implementation; a
// hand-written model such as package twophase is another.
//
// The contract, which every method must keep because the checker runs them
// concurrently and replays their results:
//
//   - Determinism. Every method is a pure function of its arguments: the same
//     state gives the same actions in the same order, the same successors and
//     the same fingerprints, on every call and in every goroutine. Violation
//     paths are stored as positions in the Actions list and replayed, so a
//     model that breaks this makes the checker fail with ErrNondeterministic.
//   - Immutability. States are values: Next must not modify its argument, and
//     a state, once returned by Init or Next, is never modified by anyone. The
//     checker keeps states in its frontier, hands them to several goroutines
//     and to properties, and a successor may share memory with its
//     predecessor (a global state sharing unchanged node states, say).
//   - Concurrency. Methods are called from several goroutines at once, on
//     different and on the same states; they must be safe for that (a model
//     needing scratch memory keeps it per call or in a sync.Pool).
//   - Failure. A model that hits an internal error (a bug, not a property
//     violation) panics; the checker recovers the panic and returns it as an
//     error wrapping ErrModelPanic.
type Model[S, A any] interface {
	// Init returns the start states: the initial states of the system for an
	// offline check, or the gathered snapshot for consequence prediction. It
	// must return at least one state. Duplicates are allowed and counted once.
	Init() []S
	// Actions appends the actions enabled in s to out and returns the
	// extended slice (it may reuse out's storage; the checker passes a
	// per-goroutine buffer with length zero, so a model that appends
	// allocates nothing in the steady state). An action listed here may still
	// turn out disabled in Next. The list must not exceed MaxActions entries.
	Actions(s S, out []Action[A]) []Action[A]
	// Next returns the successor of s under a and true, or false if a is not
	// enabled in s (the checker then ignores it).
	Next(s S, a A) (S, bool)
	// Fingerprint returns a 128-bit hash of s: equal states must have equal
	// fingerprints and different states different ones, except with
	// negligible probability (use a good 128-bit hash such as xxh3, or a
	// bijective mix for states that fit in 64 bits). The visited set keeps
	// only fingerprints. The value {0, 0} is reserved: the checker maps it
	// to another fixed value.
	Fingerprint(s S) node.Hash
	// LocalFingerprint returns a 128-bit hash of node n's local state in s:
	// what determines n's local actions (its service state and timers in the
	// actor model). Only Consequence calls it, for nodes that have a local
	// action enabled in s. The local actions of n must depend only on n's
	// local state (the paper's model, Fig. 4); otherwise consequence
	// prediction prunes actions it should not.
	LocalFingerprint(s S, n int) node.Hash
}

// MaxActions bounds the number of actions one state may have: violation
// paths store an action as its 16-bit position in the Actions list.
const MaxActions = 1 << 16

// Property is a named predicate over model states. Check returns nil when
// the property holds and otherwise an error saying why it fails. Check must
// be deterministic, must not modify the state, must be safe for concurrent
// use, and should not allocate when the property holds: the checker
// evaluates it on every state (Safety) or every quiescent state (Liveness).
//
// Kind is node.Safety for "always" properties, checked on every unique
// state, and node.Liveness for "eventually" properties. The exhaustive
// strategies check a liveness property only where its failure is certain: in
// a quiescent state — one in which every enabled action leads back to the
// same state (or none is enabled) — that violates it, since the system can
// never leave that state to satisfy it. Searching for liveness violations
// along random walks (MaceMC's critical transitions) is a separate strategy.
type Property[S any] struct {
	Name  string
	Kind  node.PropertyKind
	Check func(S) error
}

// Always declares a safety property: check must hold in every reachable
// state.
func Always[S any](name string, check func(S) error) Property[S] {
	return Property[S]{Name: name, Kind: node.Safety, Check: check}
}

// Eventually declares a liveness property: from every reachable state the
// system must be able to reach a state where check holds.
func Eventually[S any](name string, check func(S) error) Property[S] {
	return Property[S]{Name: name, Kind: node.Liveness, Check: check}
}
