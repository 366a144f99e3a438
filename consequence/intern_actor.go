package consequence

import (
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The actor model's parts in the interner: what identifies each one, and
// how a new object becomes canonical.

// nodeKey is node i's content key: everything Next reads from an
// actorNode. n.hash (the local fingerprint) covers the service state, the
// timer names, the random source and the pending calls, but not the
// node's clock nor its timers' deadlines, which the global fingerprint
// holds only relative to the earliest timer (clockComponent): interning by
// n.hash alone would merge node states that fire their timers at
// different times (Chord at 1M states: 90 distinct local fingerprints,
// 551 distinct node contents), and the state counts would change silently.
func nodeKey(i int, n *actorNode) node.Hash {
	var stack [48 + 12*16]byte
	buf := stack[:0]
	if need := 48 + 12*len(n.st.Timers); need > len(stack) {
		buf = make([]byte, 0, need)
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(i))
	buf = binary.LittleEndian.AppendUint64(buf, n.hash.Hi)
	buf = binary.LittleEndian.AppendUint64(buf, n.hash.Lo)
	buf = appendInstant(buf, n.now)
	buf = binary.LittleEndian.AppendUint64(buf, uint64(len(n.st.Timers)))
	for _, t := range n.st.Timers {
		buf = appendInstant(buf, t.At)
	}
	r := xxh3.Hash128(buf)
	return node.Hash{Hi: r.Hi, Lo: r.Lo}
}

// appendInstant appends t as seconds and nanoseconds since the Unix epoch:
// defined for every time.Time (UnixNano is not, outside 1678–2262), and
// the same for equal instants in any location.
func appendInstant(buf []byte, t time.Time) []byte {
	buf = binary.LittleEndian.AppendUint64(buf, uint64(t.Unix()))
	return binary.LittleEndian.AppendUint32(buf, uint32(t.Nanosecond()))
}

// chanKey is a channel's content key: its fingerprint component, which
// covers its endpoints and hashList's hash of its items (each message's
// hash, syn mark and refusal-window position; a transport error's kind).
func chanKey(c *channel) node.Hash { return chanComponent(c) }

// dgramKey is a datagram multiset's content key: its fingerprint
// component (endpoints and items in hash order).
func dgramKey(d *dgramSet) node.Hash { return dgramComponent(d) }

// crashKey is a crash's content key: its fingerprint component.
func crashKey(c *Crash) node.Hash { return crashComponent(c) }

// node returns the canonical node equal to n, a node state of node index
// i that the calling goroutine has just built and not yet published:
// n itself (now claimed) if its content is new.
func (in *interner) node(i int, n *actorNode) *actorNode {
	_, v, inserted := in.nodeTab.intern(nodeKey(i, n), n, func(h uint32) { n.claim = claim{in.id, h} })
	if inserted {
		in.bytes.Add(nodeBytes(n))
	}
	return v
}

// nodeHandle returns the handle of node index i's state n, interning it
// if it is new. n may be shared with other goroutines, so it is never
// claimed: a new content is interned as a claimed shallow copy (sharing
// n's immutable parts), which states unpacked afterwards hold, so that
// Pack finds their handles without a lookup.
func (in *interner) nodeHandle(i int, n *actorNode) uint32 {
	if n.claim.owner == in.id {
		return n.claim.handle
	}
	cp := *n
	h, _, inserted := in.nodeTab.intern(nodeKey(i, n), &cp, func(h uint32) { cp.claim = claim{in.id, h} })
	if inserted {
		in.bytes.Add(nodeBytes(n))
	}
	return h
}

// channel returns the canonical channel equal to c, which the calling
// goroutine has just built: c itself (now claimed) if it is new.
func (in *interner) channel(c *channel, key node.Hash) *channel {
	_, v, inserted := in.chanTab.intern(key, c, func(h uint32) { c.claim = claim{in.id, h} })
	if inserted {
		in.bytes.Add(itemsBytes(unsafe.Sizeof(channel{}), c.items))
	}
	return v
}

// chanHandle returns the handle of channel c, interning a claimed copy
// if it is new (see nodeHandle).
func (in *interner) chanHandle(c *channel) uint32 {
	if c.claim.owner == in.id {
		return c.claim.handle
	}
	cp := *c
	h, _, inserted := in.chanTab.intern(chanKey(c), &cp, func(h uint32) { cp.claim = claim{in.id, h} })
	if inserted {
		in.bytes.Add(itemsBytes(unsafe.Sizeof(channel{}), c.items))
	}
	return h
}

// dgramSet returns the canonical multiset equal to d, which the calling
// goroutine has just built: d itself (now claimed) if it is new.
func (in *interner) dgramSet(d *dgramSet, key node.Hash) *dgramSet {
	_, v, inserted := in.dgramTab.intern(key, d, func(h uint32) { d.claim = claim{in.id, h} })
	if inserted {
		in.bytes.Add(itemsBytes(unsafe.Sizeof(dgramSet{}), d.items))
	}
	return v
}

// dgramHandle returns the handle of multiset d, interning a claimed copy
// if it is new (see nodeHandle).
func (in *interner) dgramHandle(d *dgramSet) uint32 {
	if d.claim.owner == in.id {
		return d.claim.handle
	}
	cp := *d
	h, _, inserted := in.dgramTab.intern(dgramKey(d), &cp, func(h uint32) { cp.claim = claim{in.id, h} })
	if inserted {
		in.bytes.Add(itemsBytes(unsafe.Sizeof(dgramSet{}), d.items))
	}
	return h
}

// pairs returns the handle and canonical copy of a connection set whose
// fingerprint component is h (connsComponent or staleComponent: their
// tags keep a set of stale connections apart from an equal set of open
// ones). The empty set is noHandle.
func (in *interner) pairs(ps []connKey, h node.Hash) (uint32, []connKey) {
	if len(ps) == 0 {
		return noHandle, ps
	}
	hd, v, inserted := in.pairTab.intern(h, pairSet{ps, h}, nil)
	if inserted {
		in.bytes.Add(uint64(unsafe.Sizeof(pairSet{})) + uint64(cap(ps))*uint64(unsafe.Sizeof(connKey{})) + tableBytes(1, 8))
	}
	return hd, v.pairs
}

// crash returns the handle of crash c.
func (in *interner) crash(c *Crash) uint32 {
	h, _, inserted := in.crashTab.intern(crashKey(c), c, nil)
	if inserted {
		in.bytes.Add(uint64(unsafe.Sizeof(Crash{})+16) + uint64(len(c.Event)+len(c.Value)) + tableBytes(1, 8))
	}
	return h
}

// nodeBytes estimates the memory of an interned node state.
func nodeBytes(n *actorNode) uint64 {
	b := uint64(unsafe.Sizeof(actorNode{})) +
		uint64(cap(n.st.Timers))*uint64(unsafe.Sizeof(node.Timer{})) +
		uint64(cap(n.pending))*(uint64(unsafe.Sizeof(inflight{}))+64) + tableBytes(1, 8)
	bp := encPool.Get().(*[]byte)
	defer encPool.Put(bp)
	if enc, err := n.st.AppendFingerprint((*bp)[:0]); err == nil {
		*bp = enc[:0]
		b += 2 * uint64(len(enc))
	}
	return b
}

// itemsBytes estimates the memory of an interned channel or multiset of
// struct size size with items (a boxed message counted as 64 bytes).
func itemsBytes(size uintptr, items []inflight) uint64 {
	return uint64(size) + uint64(cap(items))*(uint64(unsafe.Sizeof(inflight{}))+64) + tableBytes(1, 8)
}

// lasting returns the handle of lasting-fault state x, interning it if it
// is new (it is immutable and shared as it is).
func (in *interner) lasting(x *lastingState) uint32 {
	h, _, inserted := in.extTab.intern(x.key(), x, nil)
	if inserted {
		in.bytes.Add(uint64(unsafe.Sizeof(lastingState{})) + uint64(cap(x.live))*8 + uint64(cap(x.cuts))*16 + uint64(cap(x.offsets))*8 + tableBytes(1, 8))
	}
	return h
}
