package consequence

import (
	"fmt"
	"maps"
	"math/bits"
	"sync"
	"sync/atomic"

	"github.com/seed6eee2ec7/crystalball/node"
)

// An interner keeps, for one search, one canonical object per distinct
// content of the parts global states share: node states, channels,
// datagram multisets, connection sets and crashes. A packed frontier entry
// (pack.go) names them by uint32 handles, so a state of the frontier costs
// a few words instead of its own copies of every part (without it, at 1M
// states Chord's frontier held 606,641 node objects for 551 distinct node
// contents).
//
// The tables are append-only for the whole search: there are few distinct
// contents, so reference counting or sweeping would cost more on the hot
// path than they could save. Handles are shard<<internIndexBits | index;
// their values depend on which worker interns a content first, so nothing
// observable may depend on them (fingerprints come from contents, the
// frontier order is the engine's, and Unpack rebuilds the same state
// whatever the numbering).
//
// Concurrency: every method is safe for concurrent use. A lookup or
// insertion takes its shard's mutex (64 shards by the key's top bits, so
// two workers rarely meet); reading a value by handle takes no lock: the
// values live in segments that never move, and a handle reaches a reader
// only after the value was written (through the shard's mutex, or the
// engine's barriers between levels).

const (
	internShardBits = 6
	internShards    = 1 << internShardBits
	internIndexBits = 32 - internShardBits
	// internSegBase is the size of a shard's first value segment; segment
	// k holds internSegBase<<k values, so a shard's values never move.
	internSegBaseBits = 3
	internSegBase     = 1 << internSegBaseBits
	internSegs        = internIndexBits - internSegBaseBits + 1
	// noHandle names the empty connection set (and no crash); an index
	// never reaches it (internFull).
	noHandle = ^uint32(0)
	// internFull is the most values a shard holds.
	internFull = 1<<internIndexBits - 1
)

// internIDs numbers interners, so that an object claimed by one (see
// claim) is recognised by it alone. Zero is no interner.
var internIDs atomic.Uint32

// claim records that an object is the canonical one of an interner, under
// handle h: Pack then reads the handle instead of looking the content up.
// It is written once, by the goroutine that created the object, before
// the object is published, and never changes.
type claim struct {
	owner  uint32 // interner.id; 0: unclaimed
	handle uint32
}

// pairSet is an interned connection set (GlobalState.conns or stale) with
// its fingerprint component.
type pairSet struct {
	pairs []connKey
	h     node.Hash
}

// interner is the per-search set of intern tables.
type interner struct {
	id       uint32
	nodeTab  internTable[*actorNode]
	chanTab  internTable[*channel]
	dgramTab internTable[*dgramSet]
	pairTab  internTable[pairSet]
	crashTab internTable[*Crash]
	extTab   internTable[*lastingState] // lasting.go
	// bytes estimates the memory of the tables and of the canonical
	// objects (Bytes).
	bytes atomic.Uint64
}

func newInterner() *interner {
	return &interner{id: internIDs.Add(1)}
}

// Bytes estimates the interner's memory: the tables and the canonical
// objects they keep alive (a node state's service is counted as twice its
// fingerprint encoding, a boxed message as 64 bytes: estimates, since Go
// does not tell the size of an object graph).
func (in *interner) Bytes() uint64 { return in.bytes.Load() }

// internTable is one sharded table from 128-bit content keys to values.
type internTable[V any] struct {
	shards [internShards]internShard[V]
}

type internShard[V any] struct {
	// snap is a read-only copy of keys, republished as it grows by a
	// quarter: a content interned before (nearly every lookup of a search)
	// is found without the lock.
	snap atomic.Pointer[map[node.Hash]uint32]
	mu   sync.Mutex
	keys map[node.Hash]uint32 // key → index; guarded by mu
	n    uint32               // values; guarded by mu
	segs [internSegs]atomic.Pointer[[]V]
	_    [64]byte // keep the shards' mutexes off each other's cache lines
}

// internSlot returns the segment and offset of index i.
func internSlot(i uint32) (seg, off int) {
	j := i + internSegBase
	seg = bits.Len32(j) - 1 - internSegBaseBits
	return seg, int(j - internSegBase<<seg)
}

func shardOf(key node.Hash) uint32 { return uint32(key.Hi >> (64 - internShardBits)) }

// intern returns the handle and canonical value of key, inserting v (and
// calling onInsert with its handle first, under the shard's lock, so that
// the value can record it before any other goroutine sees it) if key is
// new. It reports whether v was inserted. A full shard (internFull values)
// panics: the search cannot go on without losing states.
func (t *internTable[V]) intern(key node.Hash, v V, onInsert func(h uint32)) (uint32, V, bool) {
	sh := shardOf(key)
	s := &t.shards[sh]
	if m := s.snap.Load(); m != nil {
		if i, ok := (*m)[key]; ok {
			return sh<<internIndexBits | i, t.value(sh, i), false
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i, ok := s.keys[key]; ok {
		return sh<<internIndexBits | i, t.value(sh, i), false
	}
	i := s.n
	if i >= internFull {
		panic(fmt.Sprintf("consequence: intern table shard %d is full (%d values)", sh, i))
	}
	if s.keys == nil {
		s.keys = make(map[node.Hash]uint32)
	}
	seg, off := internSlot(i)
	p := s.segs[seg].Load()
	if p == nil {
		vs := make([]V, internSegBase<<seg)
		p = &vs
		s.segs[seg].Store(p)
	}
	h := sh<<internIndexBits | i
	if onInsert != nil {
		onInsert(h)
	}
	(*p)[off] = v
	s.keys[key] = i
	s.n++
	if m := s.snap.Load(); m == nil || len(s.keys)-len(*m) > len(*m)/4 {
		// Copying a quarter more each time keeps the copies' cost linear
		// in the inserts.
		c := maps.Clone(s.keys)
		s.snap.Store(&c)
	}
	return h, v, true
}

// value returns the value at index i of shard sh. No lock: see interner.
func (t *internTable[V]) value(sh, i uint32) V {
	seg, off := internSlot(i)
	return (*t.shards[sh].segs[seg].Load())[off]
}

// get returns the value of handle h, or false if h names no value.
func (t *internTable[V]) get(h uint32) (V, bool) {
	sh, i := h>>internIndexBits, h&internFull
	var zero V
	if i >= internFull {
		return zero, false
	}
	seg, off := internSlot(i)
	p := t.shards[sh].segs[seg].Load()
	if p == nil || off >= len(*p) {
		return zero, false
	}
	v := (*p)[off]
	return v, true
}

// len returns the number of values (for measurements and tests).
func (t *internTable[V]) len() int {
	n := 0
	for k := range t.shards {
		s := &t.shards[k]
		s.mu.Lock()
		n += int(s.n)
		s.mu.Unlock()
	}
	return n
}

// tableBytes estimates a table's own memory for n values of size vsize:
// the segments (at most twice the values) and the key map (about 40 bytes
// a key with Go's swiss tables' overhead).
func tableBytes(n, vsize uint64) uint64 { return n*vsize*2 + n*40 }
