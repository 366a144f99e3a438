package twophase

import (
	"fmt"
	"math/bits"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Symmetry reduction. TwoPhase.tla treats its RMs alike: no action, initial
// state or property names a particular RM, so renaming the RMs maps
// reachable states to reachable states, transitions to transitions and
// violations to violations. The RMs' names can therefore be forgotten: a
// state is described by the multiset of its RMs' parts plus the TM's, and
// the search needs to keep only one state per orbit (the states equal up to
// a permutation of the RMs).
//
// The canonical member of an orbit sorts the RMs by their part of the state
// — the 4-bit tuple (rmState, rm ∈ tmPrepared, Prepared(rm) ∈ msgs) — which a
// counting sort over the 16 possible tuples does in O(n), instead of trying
// the n! permutations. Two states have the same canonical member exactly
// when one is a permutation of the other: the tuples hold everything the
// state says about an RM, and the rest of the state (tmState, Commit, Abort)
// mentions no RM.

// rmTuple returns RM i's part of s: rmState in bits 0..1, whether i is in
// tmPrepared in bit 2, whether Prepared(i) was sent in bit 3.
func (s State) rmTuple(i int) uint8 {
	return uint8(s>>(2*i))&3 | uint8(s>>(prepShift+i))&1<<2 | uint8(s>>(msgShift+i))&1<<3
}

// withRMTuple returns s with RM i's part set to t, assuming it was zero.
func (s State) withRMTuple(i int, t uint8) State {
	return s | State(t&3)<<(2*i) | State(t>>2&1)<<(prepShift+i) | State(t>>3)<<(msgShift+i)
}

// globalBits are the parts of a State that belong to no RM.
const globalBits = State(3)<<tmShift | commitMsgBit | abortMsgBit

// Canonical returns the canonical member of s's orbit under permutations of
// the model's RMs: the RMs sorted by rmState, then by tmPrepared, then by
// Prepared(rm) ∈ msgs (lowest first), so RM 0 holds the smallest part. It is
// a pure function, safe for concurrent use, and does not allocate. Canonical
// (Canonical(s)) = Canonical(s), and Canonical(s) = Canonical(t) exactly when
// t is s with its RMs renamed.
func (m *Model) Canonical(s State) State {
	var count [16]uint8
	for i := range m.n {
		count[s.rmTuple(i)]++
	}
	out := s & globalBits
	i := 0
	for t := range uint8(16) {
		for range count[t] {
			out = out.withRMTuple(i, t)
			i++
		}
	}
	return out
}

// orbitFingerprint returns the fingerprint of s's orbit. It needs no
// sorted state, only what a sorted state is a function of: how many RMs have
// each of the 16 tuples (at most MaxRMs = 14, so 4 bits each, 64 bits in
// all) and the global bits. Each word goes through a bijective mix, so two
// orbits never share a fingerprint. Adding 1<<(4·tuple) per RM is a handful
// of instructions per RM where the counting sort takes a loop over the
// buckets and a write per RM.
func (m *Model) orbitFingerprint(s State) node.Hash {
	var counts uint64
	for i := range m.n {
		counts += 1 << (4 * s.rmTuple(i))
	}
	g := uint64(s&globalBits) >> tmShift
	// Lo mixes the counts in too: the visited set spreads fingerprints by
	// their bits, and the 4 global bits alone take a handful of values.
	// Hi determines counts, and given counts Lo determines g.
	return node.Hash{Hi: fmix64(counts), Lo: fmix64(bits.RotateLeft64(counts, 32) ^ g*0x452821e638d01377)}
}

// Permute returns s with RM i renamed perm[i]: RM perm[i]'s part of the
// result is RM i's part of s. perm must be a permutation of 0..RMs()-1;
// otherwise Permute returns ErrInvalidOptions. It is how tests check that
// Canonical is constant on orbits.
func (m *Model) Permute(s State, perm []int) (State, error) {
	if len(perm) != m.n {
		return s, fmt.Errorf("%w: permutation of %d RMs, the model has %d", ErrInvalidOptions, len(perm), m.n)
	}
	var seen uint32
	out := s & globalBits
	for i, p := range perm {
		if p < 0 || p >= m.n || seen&(1<<p) != 0 {
			return s, fmt.Errorf("%w: %v is not a permutation of 0..%d", ErrInvalidOptions, perm, m.n-1)
		}
		seen |= 1 << p
		out = out.withRMTuple(p, s.rmTuple(i))
	}
	return out, nil
}

// OrbitCount returns the number of reachable orbits for rms resource
// managers under permutations of the RMs — the number of states a search
// with Options.Symmetry keeps. Each factor of StateCount's 4^n + 2^n + 6^n
// counts assignments of one of k classes to each of n RMs; up to renaming
// the RMs only the number of RMs in each class counts, a multiset of size n
// over k classes, C(n+k-1, k-1). So C(n+3, 3) + (n+1) + C(n+5, 5): 80 for 3
// RMs, 314 for 5, 1,461 for 8, 3,300 for 10.
func OrbitCount(rms int) uint64 {
	return binomial(rms+3, 3) + uint64(rms+1) + binomial(rms+5, 5)
}

// binomial returns C(n, k) for small n (exact while the running product
// fits in 64 bits, which it does far beyond MaxRMs).
func binomial(n, k int) uint64 {
	r := uint64(1)
	for i := 1; i <= k; i++ {
		r = r * uint64(n-k+i) / uint64(i)
	}
	return r
}
