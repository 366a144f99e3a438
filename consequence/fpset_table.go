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
	buckets []fpBucket // nil until the first insertion
	count   int
	limit   int // grow when count exceeds limit
	_       [64 - 40]byte
}

// fpKey mixes the 128 bits of a fingerprint into the 64-bit key the tables
// store. For a fixed Hi it is a bijection of Lo (an xor, then murmur3's
// invertible finaliser), so two fingerprints of one shard share a key with
// probability 2^-64 when their Lo halves are random; the finaliser spreads
// keys of fingerprints whose entropy is all in one half (the home bucket
// uses the key's top bits).
func fpKey(h node.Hash) uint64 {
	x := h.Lo ^ h.Hi*fpGolden
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	if x == 0 {
		return fpKeyZero
	}
	return x
}

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

// touch returns the first word of x's home bucket (0 for an empty table);
// see fpSet.touch.
func (t *fpTable) touch(x uint64) uint64 {
	if len(t.buckets) == 0 {
		return 0
	}
	return t.buckets[t.home(x)][0]
}

// contains reports whether x is in the table.
func (t *fpTable) contains(x uint64) bool {
	n := len(t.buckets)
	if n == 0 {
		return false
	}
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
	if len(t.buckets) == 0 {
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
