package consequence

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/seed6eee2ec7/crystalball/node"
)

// level is one BFS level: the states first found at a depth, in the
// global order. A model that packs (PackingModel) has its levels kept as
// words — entry i is words[off[i]:off[i+1]], naming the model's interned
// parts — with the states' fingerprints, and states are rebuilt one at a
// time to be expanded; any other model's states are kept as they are,
// without fingerprints (16 bytes a state at the peak of 2PC-10's search:
// Model.Fingerprint is asked again when one is needed).
type level[S any] struct {
	states []S         // a model that does not pack
	words  []uint32    // a packing model: the entries' words
	off    []uint32    // a packing model: entry boundaries (len+1 of them)
	fps    []node.Hash // a packing model
	// sleep is each state's sleep set (partial-order reduction; nil when
	// it is off): bit k set means the k-th action of its Actions list need
	// not be taken, since every path that reached the state at this depth
	// took an independent action after one that had it available.
	sleep []uint64
}

// packBudget is the state budget above which a search packs its levels
// (a PackingModel's; also a search without a state budget). Below it the
// levels fit in memory as states, and packing would only cost time:
// steering's rounds (a few thousand to 50,000 states) never pack.
const packBudget = 100_000

// packs reports whether a search with options o packs its levels.
func packs(o Options) bool {
	if o.packing != 0 {
		return o.packing > 0
	}
	return o.MaxStates == 0 || o.MaxStates > packBudget
}

// len returns the number of states in the level (it holds states or
// fingerprints, as it packs or not).
func (l *level[S]) len() int { return max(len(l.fps), len(l.states)) }

// fpAt returns the fingerprint of state i of l.
func (r *run[S, A]) fpAt(l *level[S], i int) node.Hash {
	if r.packer != nil {
		return l.fps[i]
	}
	return normFP(r.m.Fingerprint(l.states[i]))
}

// resetLevel empties l for reuse, dropping its references to states.
func (r *run[S, A]) resetLevel(l *level[S]) {
	clear(l.states)
	l.states, l.fps, l.sleep = l.states[:0], l.fps[:0], l.sleep[:0]
	l.words = l.words[:0]
	if r.packer != nil {
		l.off = append(l.off[:0], 0)
	}
}

// stateAt returns state i of l, unpacking it if l is packed.
func (r *run[S, A]) stateAt(l *level[S], i int) S {
	if r.packer == nil {
		return l.states[i]
	}
	return r.packer.Unpack(l.words[l.off[i]:l.off[i+1]], l.fps[i])
}

// appendEntry appends s, with fingerprint fp and sleep set z, to l.
func (r *run[S, A]) appendEntry(l *level[S], s S, fp node.Hash, z uint64) {
	if r.packer == nil {
		l.states = append(l.states, s)
	} else {
		if len(l.off) == 0 {
			l.off = append(l.off, 0)
		}
		l.words = r.packer.Pack(l.words, s)
		l.off = append(l.off, wordOffset(len(l.words)))
		l.fps = append(l.fps, fp)
	}
	if r.por != nil {
		l.sleep = append(l.sleep, z)
	}
}

// wordOffset converts a level's word count to an entry boundary.
func wordOffset(n int) uint32 {
	if n > math.MaxUint32 {
		panic(fmt.Errorf("%w: a packed level of more than 2^32 words (16 GiB)", ErrInvalidModel))
	}
	return uint32(n)
}

// newCand makes the phase A candidate for successor s of frontier state
// i by its k-th action. A packing model's candidate is packed at once, in
// the chunk's buffer, so that a round holds no whole successors: only the
// winners are rebuilt, to check them (keepPacked).
func (r *run[S, A]) newCand(c *chunk[S], s S, fp node.Hash, z uint64, i, k int) cand[S] {
	cd := cand[S]{fp: fp, sleep: z, parent: uint32(i), ord: uint16(k)}
	if r.packer == nil {
		cd.state = s
		return cd
	}
	cd.woff = wordOffset(len(c.cwords))
	c.cwords = r.packer.Pack(c.cwords, s)
	cd.wlen = wordOffset(len(c.cwords)) - cd.woff
	return cd
}

// keepPacked moves a winning candidate's words to the chunk's winners (in
// order: appendPacked moves them to the next level in chunk order, which
// is the winners' order) and returns the state rebuilt if the safety
// properties need it (else the zero S).
func (r *run[S, A]) keepPacked(c *chunk[S], cd *cand[S]) S {
	w := c.cwords[cd.woff : cd.woff+cd.wlen]
	c.words = append(c.words, w...)
	c.wlen = append(c.wlen, cd.wlen)
	var s S
	if len(r.safety) > 0 {
		s = r.packer.Unpack(w, cd.fp)
	}
	return s
}

// appendPacked appends the chunks' packed winners to the next level after
// phase C.
func (r *run[S, A]) appendPacked() {
	if r.packer == nil {
		return
	}
	l := &r.next
	if len(l.off) == 0 {
		l.off = append(l.off, 0)
	}
	for _, c := range r.chunks {
		at := len(l.words)
		l.words = append(l.words, c.words...)
		for _, n := range c.wlen {
			at += int(n)
			l.off = append(l.off, wordOffset(at))
		}
	}
}

// detach returns s without references to the search's packer (Detacher),
// for a state the search hands out.
func (r *run[S, A]) detach(s S) S {
	if d, ok := r.packer.(Detacher[S]); ok {
		return d.Detach(s)
	}
	return s
}

// bytes is the memory of l's storage, states of stateSize bytes each
// (not what they point to).
func (l *level[S]) bytes(stateSize uintptr) uint64 {
	return uint64(cap(l.states))*uint64(stateSize) + 4*uint64(cap(l.words)+cap(l.off)) +
		16*uint64(cap(l.fps)) + 8*uint64(cap(l.sleep))
}

// noteFrontier records the memory of the current and next levels, of the
// packer's tables and of the sleep sets' index, if it is the most so far.
func (r *run[S, A]) noteFrontier() {
	var zero S
	b := r.cur.bytes(unsafe.Sizeof(zero)) + r.next.bytes(unsafe.Sizeof(zero))
	if r.packer != nil {
		b += r.packer.Bytes()
	}
	for i := range r.index {
		b += r.index[i].bytes()
	}
	r.frontierPeak = max(r.frontierPeak, b)
}
