package consequence

import (
	"math/bits"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// One shard of the visited set: an open-addressing table of 64-bit keys in
// 64-byte buckets (eight keys, one cache line), probed linearly bucket by
// bucket, without deletion. Within a bucket keys fill the slots from the
// first, so the first empty slot ends a probe. A key's home bucket is the
// multiply-shift range reduction of the key, (key × buckets) >> 64, which
// works for any bucket count; the table can therefore grow by about 1.5×
// instead of doubling. A table is never empty of free slots: it grows when
// it is more than 7/8 full.

const (
	fpBucketSlots = 8
	fpBucketBytes = fpBucketSlots * 8
	fpMinBuckets  = 1 // a table's first allocation
	fpLoadNum     = 7 // grow when count > capacity*fpLoadNum/fpLoadDen
	fpLoadDen     = 8 //
	fpGrowNum     = 3 // grow to buckets*fpGrowNum/fpGrowDen (at least +1),
	fpGrowDen     = 2 // then up to the allocator's size class
	fpGolden      = 0x9E3779B97F4A7C15
	// fpKeyZero replaces the key 0, which marks an empty slot. It merges
	// two keys out of 2^64, which the omission estimate can ignore.
	fpKeyZero = 0x510e527fade682d1
)

type fpBucket [fpBucketSlots]uint64

// fpTable is one shard. Its header is padded to a cache line because
// workers of different shard groups update neighbouring headers at once.
type fpTable struct {
	buckets []fpBucket // fpNoBuckets until the first insertion
	count   int
	limit   int // grow when count exceeds limit
	_       [64 - 40]byte
}

// fpKey mixes the 128 bits of a fingerprint into the 64-bit key the tables
// store: fpMix, with 0 (an empty slot's mark) remapped.
func fpKey(h node.Hash) uint64 {
	if x := fpMix(h); x != 0 {
		return x
	}
	return fpKeyZero
}

// fpMix is (Lo xor f(Hi))·c, where f is murmur3's 64-bit finaliser and c
// odd. For a fixed Hi it is a bijection of Lo, so two fingerprints of one
// shard share a key with probability 2^-64 when their Lo halves are random.
// f makes that hold for structured fingerprints too: two fingerprints that
// differ in a few bits of Hi collide only if their Lo halves differ by the
// pseudo-random f(Hi1) xor f(Hi2). (A linear mix, (Lo xor Hi·φ)·c, let
// FuzzFPSet find two fingerprints differing in their top bytes with one
// key: the case kept in testdata.) The product carries every bit into the
// top bits, which choose the home bucket, so fingerprints whose entropy is
// in one half or in low bits still spread. touch must stay small enough to
// inline: the key is computed twice per insertion, by touch and insert.
func fpMix(h node.Hash) uint64 {
	f := h.Hi
	f ^= f >> 33
	f *= 0xff51afd7ed558ccd
	f ^= f >> 33
	f *= 0xc4ceb9fe1a85ec53
	f ^= f >> 33
	return (h.Lo ^ f) * fpGolden
}

// fpNoBuckets is the one all-empty bucket every unallocated table points
// to, so that lookups and touch need no test for an empty table. It is never
// written: insert allocates a table of its own first (limit == 0 marks the
// shared bucket).
var fpNoBuckets = make([]fpBucket, 1)

// alloc gives the table at least nb empty buckets (all the allocator's size
// class holds) and the matching growth limit.
func (t *fpTable) alloc(nb int) {
	b := slices.Grow[[]fpBucket](nil, nb)
	t.buckets = b[:cap(b)]
	t.limit = len(t.buckets) * fpBucketSlots * fpLoadNum / fpLoadDen
}

// home is x's first bucket; the table must be allocated.
func (t *fpTable) home(x uint64) int {
	hi, _ := bits.Mul64(x, uint64(len(t.buckets)))
	return int(hi)
}

// contains reports whether x is in the table.
func (t *fpTable) contains(x uint64) bool {
	n := len(t.buckets)
	for i := t.home(x); ; {
		for _, v := range &t.buckets[i] {
			if v == x {
				return true
			}
			if v == 0 {
				return false
			}
		}
		if i++; i == n {
			i = 0
		}
	}
}

// insert adds x unless it is present; see fpSet.insert.
func (t *fpTable) insert(x uint64, allowNew bool) (added, present bool) {
	if t.limit == 0 { // the shared empty bucket
		if !allowNew {
			return false, false
		}
		t.alloc(fpMinBuckets)
	}
	n := len(t.buckets)
	for i := t.home(x); ; {
		b := &t.buckets[i]
		for j, v := range b {
			if v == x {
				return false, true
			}
			if v != 0 {
				continue
			}
			if !allowNew {
				return false, false
			}
			b[j] = x
			t.count++
			if t.count > t.limit {
				t.grow()
			}
			return true, false
		}
		if i++; i == n {
			i = 0
		}
	}
}

// grow moves the keys to a table about 1.5 times larger. The old table
// holds keys roughly in increasing order (homes are monotone in the key),
// so the new table is written almost sequentially.
func (t *fpTable) grow() {
	old := t.buckets
	t.alloc(max(len(old)+1, len(old)*fpGrowNum/fpGrowDen))
	for bi := range old {
		for _, x := range &old[bi] {
			if x == 0 {
				break
			}
			t.place(x)
		}
	}
}

// place puts x, known to be absent, in the first free slot from its home.
func (t *fpTable) place(x uint64) {
	n := len(t.buckets)
	for i := t.home(x); ; {
		b := &t.buckets[i]
		for j := range b {
			if b[j] == 0 {
				b[j] = x
				return
			}
		}
		if i++; i == n {
			i = 0
		}
	}
}
