package consequence

import (
	"math/bits"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Partial-order reduction with sleep sets (Godefroid, "Partial-Order
// Methods for the Verification of Concurrent Systems", ch. 5), adapted to
// level-synchronous BFS.
//
// When state u at depth d is expanded, its action b leads to t = u·b. An
// action x of u that was taken before b (or was asleep in u) and commutes
// with b in u need not be taken in t: t·x = u·x·b, which the expansion of
// u·x reaches (b is not asleep there, or the same argument applies one
// step back). The sleep set of t is the set of such x, found again in t's
// Actions list (Commuter.SameAction). A state reached at depth d+1 along
// several paths gets the intersection of their sleep sets (levelIndex), so
// an action is skipped only if every shortest path to t made it redundant;
// a state reached again at a greater depth was already expanded and is
// ignored, as without reduction. Every reachable state is still visited,
// at its BFS depth: the unique states, the depth counts and the
// violations are the same with and without reduction, which the tests
// check; only the transitions taken (Result.Generated) shrink, by
// Result.Slept.

// A sleep set is a 64-bit set. For a Commuter it names positions in the
// state's Actions list (the first sleepBits); for a KeyedCommuter, the
// actions' keys, so that a successor's set is computed without listing the
// successor's actions. sleepKeys fills w.bits with each action's bit and
// returns their union: the bits the state's sleep set may keep.
func (r *run[S, A]) sleepKeys(w *worker[S, A], acts []Action[A]) uint64 {
	w.bits = slices.Grow(w.bits[:0], len(acts))[:len(acts)]
	if r.keyed != nil {
		r.keyed.KeyBits(acts, w.bits)
	} else {
		for k := range w.bits {
			w.bits[k] = 0
			if k < sleepBits {
				w.bits[k] = 1 << k
			}
		}
	}
	var all uint64
	for _, b := range w.bits {
		all |= b
	}
	return all
}

// sleepAfter returns the sleep set of succ = Next(s, acts[k].Act), reached
// from s, whose taken-or-asleep actions are cands (sleep-set bits of s's
// enabled actions): those that commute with acts[k] in s, as positions in
// succ's Actions list, or as keys. Models list actions in a stable order
// (by node, channel, timer), so each is looked for from where the previous
// one was found: one pass over succ's list in the common case, not one per
// action.
func (r *run[S, A]) sleepAfter(w *worker[S, A], s S, acts []Action[A], k int, cands uint64, succ S) uint64 {
	if r.keyed != nil {
		return cands & r.keyed.Independent(s, acts[k])
	}
	var z uint64
	listed := false
	at := 0
	for cands != 0 {
		j := bits.TrailingZeros64(cands)
		cands &= cands - 1
		if !r.por.Commute(s, acts[j], acts[k]) {
			continue
		}
		if !listed {
			w.listed++
			w.sacts = r.m.Actions(succ, w.sacts[:0])
			listed = true
		}
		if p, ok := r.findAction(w.sacts, acts[j], at); ok {
			z |= 1 << p
			at = p + 1
		}
	}
	return z
}

// findAction returns the position of x in the first sleepBits actions of
// list, searching from position from on and then from the start.
func (r *run[S, A]) findAction(list []Action[A], x Action[A], from int) (int, bool) {
	n := min(len(list), sleepBits)
	for i := range n {
		p := from + i
		if p >= n {
			p -= n
		}
		if r.por.SameAction(x, list[p]) {
			return p, true
		}
	}
	return 0, false
}

// sleepersMove reports whether an action asleep in s leads out of it. A
// state whose taken actions all stutter is quiescent only if its sleeping
// ones do too, and the liveness check of quiescent states must not depend
// on the reduction.
// w.bits holds acts' sleep-set bits (sleepKeys).
func (r *run[S, A]) sleepersMove(w *worker[S, A], s S, fp node.Hash, acts []Action[A], asleep uint64) bool {
	for k := range acts {
		if asleep&w.bits[k] == 0 {
			continue
		}
		succ, ok := r.m.Next(s, acts[k].Act)
		if ok && normFP(r.m.Fingerprint(succ)) != fp {
			return true
		}
	}
	return false
}

// mergeSleep records, in the shard group of fp, that the next level's state
// fp was reached at position at (added: it is new) with sleep set z, or
// reached again by a path whose sleep set is z: its sleep set becomes the
// intersection. A state whose first sleep set is empty is not indexed (no
// intersection can change it), which spares the index most states of
// models with few independent actions.
func (r *run[S, A]) mergeSleep(g int, fp node.Hash, at int, added bool, z uint64) {
	x := &r.index[g]
	if added {
		if z != 0 {
			x.add(fp, at, r.nextFP)
		}
		return
	}
	if j, ok := x.find(fp, r.nextFP); ok {
		r.next.sleep[j] &= z
	}
}

// porProbe is how many transitions (taken and slept) a search makes with
// sleep sets before it weighs what they cost against what they save.
// Below it, sleep sets always run: steering's rounds and the tests' small
// searches keep the full reduction.
const porProbe = 1 << 16

// weighPOR decides, once, at the end of the level in which the search
// reached porProbe transitions, whether sleep sets run on. What they cost
// is a listing of a successor's Actions (and the Commute calls before it)
// for every successor with a commuting candidate; what they save is a
// slept transition (a Next, a fingerprint, a visited-set lookup and that
// successor's own listing). Measured on the actor model (docs/PERFORMANCE.md,
// "The explorer against SPIN at every size"), a listing costs about half what a slept transition saves:
// sleep sets run on while they sleep at least one transition for two
// listings. A KeyedCommuter lists nothing and always keeps them. The
// decision reads counts only, so it is the same for any number of
// workers; switching off changes which transitions are taken, never the
// states visited, their depths or the violations.
func (r *run[S, A]) weighPOR() {
	if r.por == nil || r.porDecided || r.res.Generated+r.res.Slept < r.porProbe() {
		return
	}
	r.porDecided = true
	if r.keyed != nil || 2*r.res.Slept >= r.listed {
		return
	}
	r.por, r.index, r.nextFP = nil, nil, nil
	r.res.SleepSetsOff = r.depth
}

// porProbe returns porProbe, or the tests' override.
func (r *run[S, A]) porProbe() uint64 {
	if r.opts.porProbe > 0 {
		return uint64(r.opts.porProbe)
	}
	return porProbe
}
