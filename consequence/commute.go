package consequence

// Commuter is implemented by a Model that knows which of its actions are
// independent. BFS then explores with sleep sets (Godefroid's partial-order
// reduction; see "Partial-order reduction" in the package documentation):
// of two orders of independent actions that reach the same state it
// follows one, so the successors it computes shrink while every reachable
// state is still visited at its depth. The checker discovers the interface
// by a type assertion; a model without it is explored in full.
//
// The contract, on top of Model's (determinism, immutability, concurrent
// use):
//
//   - Commute(s, x, y), for x and y both enabled in s, may return true only
//     if executing x does not disable y, and, whenever x is still enabled
//     after y, both orders reach the same state (equal fingerprints). The
//     checker asks it with y the action it takes and x an action it took
//     before y (or that was asleep), and itself checks that x is still
//     listed after y: so the claim is one-sided, and a model whose x may
//     be disabled by y (the actor model's timers, held back by a timer
//     another node's handler arms) need not rule that out. A false answer
//     is always safe; it only costs reduction. A wrong true answer makes
//     the search miss states without any error: CheckCommute tests the
//     claims on a state, and implementers run it on many.
//   - SameAction(x, y) reports whether x, an action of a state u, and y, an
//     action of a successor t = Next(u, b) reached by an action b with
//     Commute(u, x, b), are the same transition: Next(t, y.Act) is the
//     state Next(u, x.Act) reaches followed by b. The checker asks it to
//     find x again in t's Actions list, so it must be true for exactly one
//     y of that list, or for none (then x is simply not carried over).
type Commuter[S, A any] interface {
	Commute(s S, x, y Action[A]) bool
	SameAction(x, y Action[A]) bool
}

// sleepBits is how many actions of a state a sleep set can name: the first
// 64 of its Actions list (an action beyond them is never asleep, which is
// always sound).
const sleepBits = 64
