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

// KeyedCommuter is a Commuter whose transitions have small keys that name
// the same transition in every state, and that can say at once which of a
// state's actions commute with a given one. BFS then keeps sleep sets as
// sets of keys, not of positions in a state's Actions list: the sleep set
// of a successor is a mask (the candidates and Independent), with no call
// to Actions on the successor and no search of its list — on two-phase
// commit that search was most of the reduction's cost (docs/PERFORMANCE.md,
// "Two-phase commit, ours and SPIN side by side"). The reduction is the same: the search visits the same
// states and takes the same transitions as with Commuter alone (tests
// check it on twophase), as long as every action of a state has a key.
//
// The contract, on top of Commuter's:
//
//   - KeyBits(acts, bits) sets bits[k] to 1<<key, key in [0, 64), for the
//     key of acts[k], or to 0 for an action that never sleeps (always
//     sound); len(bits) == len(acts). Two actions, of any two states,
//     have the same key exactly when SameAction says they are the same
//     transition; two actions of one state never share a key. (One call
//     per state, not per action: the search calls it on every state it
//     expands.)
//   - Independent(s, b), for b enabled in s, is a set of keys (bit k for
//     key k) such that for every action x enabled in s, x's key is in it
//     exactly when Commute(s, x, b). The search uses it in place of
//     Commute; bits of keys no enabled action has are ignored.
//
// A key in a successor's sleep set whose action is not enabled there is
// harmless: the search drops the keys of a state's sleep set that none of
// its actions has before using it.
type KeyedCommuter[S, A any] interface {
	Commuter[S, A]
	KeyBits(acts []Action[A], bits []uint64)
	Independent(s S, b Action[A]) uint64
}
