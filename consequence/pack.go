package consequence

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Packer turns states into words and back, for one search: a BFS level
// of a packing model is kept as words instead of states (a compact
// frontier). Packing must be lossless: Unpack(Pack(s), fp) with
// fp = Fingerprint(s) is observationally equal to s — the same
// Fingerprint, the same Actions in the same order, the same Next, the
// same property verdicts.
//
// Concurrency: Pack, Unpack and Bytes are safe for concurrent use by the
// search's workers. Words packed by one goroutine may be unpacked by
// another once the two are ordered (a mutex, a channel, the engine's
// barrier between phases). Determinism: the words may differ between runs
// and worker counts (they name interned parts by handles, numbered in the
// order the workers met them), but what Unpack rebuilds does not; the
// engine must not let word values reach a result.
type Packer[S any] interface {
	// Pack appends s's words to dst and returns the extended slice.
	Pack(dst []uint32, s S) []uint32
	// Unpack rebuilds the state that Pack packed into words, whose
	// fingerprint is fp. words must be exactly what one Pack call of this
	// Packer appended; anything else is a bug of the caller, and Unpack
	// panics (the checker reports the panic as ErrModelPanic).
	Unpack(words []uint32, fp node.Hash) S
	// Bytes is the memory the packer keeps for the parts the words name
	// (an estimate), which grows as the search meets new parts.
	Bytes() uint64
}

// PackingModel is a Model whose BFS levels can be packed: the engine
// type-asserts it and makes one Packer per search run, never shared
// between runs (so that a finished search's tables can be collected).
type PackingModel[S, A any] interface {
	Model[S, A]
	// NewPacker returns a fresh Packer for one search of the model, or
	// nil when this model keeps its levels as states.
	NewPacker() Packer[S]
}

// Detacher is implemented by a Packer whose unpacked states refer to the
// search's own tables (the actor model's interner: their successors are
// interned too). Detach returns an equal state that does not: the engine
// must detach every state it hands out (a Result's violations and
// periphery), so that the tables die with the search and later uses of the
// state — random walks from the periphery, say — do not grow them.
type Detacher[S any] interface {
	Detach(s S) S
}

var (
	_ PackingModel[*GlobalState, ActorAction] = (*ActorModel)(nil)
	_ Detacher[*GlobalState]                  = (*actorPacker)(nil)
)

// NewPacker implements PackingModel: a packer with its own interner (nil
// for a model whose spec declares bounded or history properties).
// States it unpacks carry the interner, so their successors share the
// interner's canonical parts (see GlobalState).
func (m *ActorModel) NewPacker() Packer[*GlobalState] {
	if m.obs != nil {
		// What a path observed (observe.go) is no interned part: the
		// search keeps such a model's levels as states.
		return nil
	}
	return &actorPacker{m: m, in: newInterner()}
}

// actorPacker packs global states of one ActorModel. An entry is
//
//	header: flags | nChans<<4 | nDgrams<<18 (or 2 extra words with
//	        packWideCounts, when a count does not fit 14 bits)
//	faults: resets | breaks<<8 | drops<<16 | refusals<<24 (or 7 words
//	        with packWideFaults: resets, breaks, drops as two words each
//	        (low first), refusals as one)
//	N node handles, in m.ids order
//	conns handle, stale handle (noHandle: empty)
//	nChans channel handles, in chans order
//	nDgrams datagram-set handles, in dgrams order
//	crash handle, with packCrash
//	lasting-faults handle, with packLasting (lasting.go)
//
// What an entry leaves out is recomputed: the connection sets' hashes
// come with their interned sets, the earliest timer and the clock
// component from the nodes (firstDue, clockComponent), the fingerprint is
// Unpack's argument.
type actorPacker struct {
	m  *ActorModel
	in *interner
}

const (
	packCrash = 1 << iota
	packWideCounts
	packWideFaults
	packDelivery // 3 words after the crash handle: losses, duplicates, reorders (delays need a bounded property, whose models do not pack)
	packLasting  // 1 word after those: the lasting faults' handle

	packFlagBits  = 5
	packCountBits = 13
	packCountMax  = 1<<packCountBits - 1
)

// Detach implements Detacher: a shallow copy of g without the interner
// (its parts stay shared; they are immutable).
func (p *actorPacker) Detach(g *GlobalState) *GlobalState {
	if g.in == nil {
		return g
	}
	c := *g
	c.in = nil
	return &c
}

// Bytes implements Packer: the interner's estimated memory.
func (p *actorPacker) Bytes() uint64 { return p.in.Bytes() }

// Pack implements Packer.
func (p *actorPacker) Pack(dst []uint32, g *GlobalState) []uint32 {
	var flags uint32
	if g.crash != nil {
		flags |= packCrash
	}
	if g.spent != nil {
		flags |= packDelivery
	}
	if g.ext != nil {
		flags |= packLasting
	}
	nc, nd := len(g.chans), len(g.dgrams)
	wideCounts := nc > packCountMax || nd > packCountMax
	if wideCounts {
		flags |= packWideCounts
		nc, nd = 0, 0
	}
	narrow := 0 <= g.resets && g.resets < 256 && 0 <= g.breaks && g.breaks < 256 &&
		0 <= g.drops && g.drops < 256 && 0 <= g.refusals && g.refusals < 256
	if !narrow {
		flags |= packWideFaults
	}
	dst = append(dst, flags|uint32(nc)<<packFlagBits|uint32(nd)<<(packFlagBits+packCountBits))
	if wideCounts {
		dst = append(dst, uint32(len(g.chans)), uint32(len(g.dgrams)))
	}
	if narrow {
		dst = append(dst, uint32(g.resets)|uint32(g.breaks)<<8|uint32(g.drops)<<16|uint32(g.refusals)<<24)
	} else {
		dst = appendUint64(dst, uint64(g.resets))
		dst = appendUint64(dst, uint64(g.breaks))
		dst = appendUint64(dst, uint64(g.drops))
		dst = append(dst, uint32(g.refusals))
	}
	for i, n := range g.nodes {
		dst = append(dst, p.in.nodeHandle(i, n))
	}
	hc, _ := p.in.pairs(g.conns, g.connsH)
	hs, _ := p.in.pairs(g.stale, g.staleH)
	dst = append(dst, hc, hs)
	for _, c := range g.chans {
		dst = append(dst, p.in.chanHandle(c))
	}
	for _, d := range g.dgrams {
		dst = append(dst, p.in.dgramHandle(d))
	}
	if g.crash != nil {
		dst = append(dst, p.in.crash(g.crash))
	}
	if d := g.spent; d != nil {
		dst = append(dst, uint32(d.losses), uint32(d.duplicates), uint32(d.reorders))
	}
	if g.ext != nil {
		dst = append(dst, p.in.lasting(g.ext))
	}
	return dst
}

func appendUint64(dst []uint32, v uint64) []uint32 { return append(dst, uint32(v), uint32(v>>32)) }

// unpackError is what Unpack panics with on words no Pack produced.
func unpackError(format string, args ...any) error {
	return fmt.Errorf("consequence: unpacking a frontier entry: "+format, args...)
}

// Unpack implements Packer.
func (p *actorPacker) Unpack(w []uint32, fp node.Hash) *GlobalState {
	m := p.m
	if len(w) < 2 {
		panic(unpackError("%d words: too short for a header", len(w)))
	}
	head, k := w[0], 1
	flags := head & (1<<packFlagBits - 1)
	nc := int(head >> packFlagBits & packCountMax)
	nd := int(head >> (packFlagBits + packCountBits))
	if flags&packWideCounts != 0 {
		if len(w) < 3 {
			panic(unpackError("%d words: too short for wide counts", len(w)))
		}
		nc, nd, k = int(w[1]), int(w[2]), 3
	}
	faults := 1
	if flags&packWideFaults != 0 {
		faults = 7
	}
	crash := 0
	if flags&packCrash != 0 {
		crash = 1
	}
	spent := 0
	if flags&packDelivery != 0 {
		spent = 3
	}
	ext := 0
	if flags&packLasting != 0 {
		ext = 1
	}
	if want := k + faults + len(m.ids) + 2 + nc + nd + crash + spent + ext; len(w) != want {
		panic(unpackError("%d words, the header says %d", len(w), want))
	}
	g := p.newState(nc, nd)
	g.fp = fp
	if faults == 1 {
		f := w[k]
		g.resets, g.breaks, g.drops, g.refusals = int(f&0xff), int(f>>8&0xff), int(f>>16&0xff), int32(f>>24)
	} else {
		g.resets = int(uint64(w[k]) | uint64(w[k+1])<<32)
		g.breaks = int(uint64(w[k+2]) | uint64(w[k+3])<<32)
		g.drops = int(uint64(w[k+4]) | uint64(w[k+5])<<32)
		g.refusals = int32(w[k+6])
	}
	k += faults
	for i := range g.nodes {
		g.nodes[i] = unpackPart(&p.in.nodeTab, w[k+i], "node state")
	}
	k += len(g.nodes)
	g.conns, g.connsH = p.unpackPairs(w[k])
	g.stale, g.staleH = p.unpackPairs(w[k+1])
	k += 2
	for i := range g.chans {
		g.chans[i] = unpackPart(&p.in.chanTab, w[k+i], "channel")
	}
	k += nc
	for i := range g.dgrams {
		g.dgrams[i] = unpackPart(&p.in.dgramTab, w[k+i], "datagram set")
	}
	k += nd
	if crash != 0 {
		g.crash = unpackPart(&p.in.crashTab, w[k], "crash")
		k++
	}
	if spent != 0 {
		g.spent = &deliverySpent{losses: int32(w[k]), duplicates: int32(w[k+1]), reorders: int32(w[k+2])}
		k += 3
	}
	if ext != 0 {
		g.ext = unpackPart(&p.in.extTab, w[k], "lasting faults")
	}
	if !m.opts.AnyOrderTimers {
		g.first, g.hasFirst = firstDue(g)
		g.clockH = m.clockHash(g)
	}
	if m.sym != nil {
		// fp is the orbit's (Fingerprint under symmetry), not g's own,
		// which its successors' fingerprints are computed from.
		g.fp = g.fingerprint()
	}
	return g
}

// packBlock holds an unpacked state and its slices in one allocation,
// for the usual sizes: Unpack runs once per frontier state, and its cost
// is mostly allocation.
type packBlock struct {
	g      GlobalState
	nodes  [packBlockNodes]*actorNode
	chans  [packBlockChans]*channel
	dgrams [packBlockDgrams]*dgramSet
}

const (
	packBlockNodes  = 8
	packBlockChans  = 8
	packBlockDgrams = 2
)

// newState returns a state of the packer's model and interner with room
// for its nodes, nc channels and nd datagram sets (slices of exactly that
// capacity, so that a successor's appends copy them).
func (p *actorPacker) newState(nc, nd int) *GlobalState {
	n := len(p.m.ids)
	if n > packBlockNodes || nc > packBlockChans || nd > packBlockDgrams {
		g := &GlobalState{m: p.m, in: p.in, nodes: make([]*actorNode, n)}
		if nc > 0 {
			g.chans = make([]*channel, nc)
		}
		if nd > 0 {
			g.dgrams = make([]*dgramSet, nd)
		}
		return g
	}
	b := &packBlock{}
	b.g = GlobalState{m: p.m, in: p.in, nodes: b.nodes[:n:n]}
	if nc > 0 {
		b.g.chans = b.chans[:nc:nc]
	}
	if nd > 0 {
		b.g.dgrams = b.dgrams[:nd:nd]
	}
	return &b.g
}

// unpackPart returns the part handle h names in t.
func unpackPart[V comparable](t *internTable[V], h uint32, what string) V {
	v, ok := t.get(h)
	var zero V
	if !ok || v == zero {
		panic(unpackError("no %s with handle %#x", what, h))
	}
	return v
}

// unpackPairs returns the connection set handle h names, with its hash.
func (p *actorPacker) unpackPairs(h uint32) ([]connKey, node.Hash) {
	if h == noHandle {
		return nil, node.Hash{}
	}
	v, ok := p.in.pairTab.get(h)
	if !ok || len(v.pairs) == 0 {
		panic(unpackError("no connection set with handle %#x", h))
	}
	return v.pairs, v.h
}
