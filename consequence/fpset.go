package consequence

import (
	"math/bits"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The visited set keeps only 128-bit fingerprints, in open-addressing hash
// tables of 64-byte buckets (four fingerprints, one cache line) probed
// linearly bucket by bucket. A lookup usually touches one cache line; the
// table doubles when it is 7/8 full, so it holds between 18.3 and 36.6 bytes
// per fingerprint (16 bytes of payload). BenchmarkVisitedSet compares it with
// a Go map of fingerprints (see docs/PERFORMANCE.md).
//
// The set is split into shards by the top bits of the fingerprint, each an
// independent table. Workers own disjoint groups of shards while merging a
// level, so the set needs no locks; the shard count is fixed (it does not
// depend on the number of workers), so neither is its memory.

const (
	fpBucketSlots  = 4
	fpMinBuckets   = 4 // per shard, initially
	fpLoadNum      = 7 // grow when count > capacity*fpLoadNum/fpLoadDen
	fpLoadDen      = 8 //
	visitedShardsB = 6 // log2 of the visited set's shard count
	fpGolden       = 0x9E3779B97F4A7C15
	fpBucketBytes  = fpBucketSlots * 16
)

// zeroFingerprint replaces a model fingerprint of {0, 0}, which marks an
// empty slot.
var zeroFingerprint = node.Hash{Hi: 0x6a09e667f3bcc908, Lo: 0xbb67ae8584caa73b}

// normFP maps the reserved empty value to zeroFingerprint.
func normFP(h node.Hash) node.Hash {
	if h.Hi|h.Lo == 0 {
		return zeroFingerprint
	}
	return h
}

type fpBucket [fpBucketSlots]node.Hash

// fpTable is one shard: an open-addressing table of fingerprints (never
// {0, 0}), without deletion.
type fpTable struct {
	buckets []fpBucket
	shift   uint // 64 - log2(len(buckets))
	count   int
	limit   int // grow when count exceeds limit
}

func (t *fpTable) init(nbuckets int) {
	t.buckets = make([]fpBucket, nbuckets)
	t.shift = uint(64 - bits.TrailingZeros(uint(nbuckets)))
	t.limit = nbuckets * fpBucketSlots * fpLoadNum / fpLoadDen
}

// home is h's first bucket: Fibonacci hashing of both halves, so even a
// fingerprint with poor low bits spreads (the shard is chosen by Hi's top
// bits, which the product mixes with everything else).
func (t *fpTable) home(h node.Hash) uint64 {
	return ((h.Hi ^ h.Lo) * fpGolden) >> t.shift
}

// contains reports whether h is in the table.
func (t *fpTable) contains(h node.Hash) bool {
	mask := uint64(len(t.buckets) - 1)
	for i := t.home(h); ; i = (i + 1) & mask {
		b := &t.buckets[i]
		for j := range b {
			switch b[j] {
			case h:
				return true
			case node.Hash{}:
				return false
			}
		}
	}
}

// insert adds h unless it is present. It reports whether h was absent
// (present == false); it adds h only if allowNew, so a full state budget can
// refuse new fingerprints while still recognising old ones.
func (t *fpTable) insert(h node.Hash, allowNew bool) (added, present bool) {
	mask := uint64(len(t.buckets) - 1)
	for i := t.home(h); ; i = (i + 1) & mask {
		b := &t.buckets[i]
		for j := range b {
			switch b[j] {
			case h:
				return false, true
			case node.Hash{}:
				if !allowNew {
					return false, false
				}
				b[j] = h
				t.count++
				if t.count > t.limit {
					t.grow()
				}
				return true, false
			}
		}
	}
}

// grow doubles the table and reinserts every fingerprint.
func (t *fpTable) grow() {
	old := t.buckets
	t.init(2 * len(old))
	mask := uint64(len(t.buckets) - 1)
	for bi := range old {
		for _, h := range old[bi] {
			if h == (node.Hash{}) {
				break
			}
			for i := t.home(h); ; i = (i + 1) & mask {
				b := &t.buckets[i]
				placed := false
				for j := range b {
					if b[j] == (node.Hash{}) {
						b[j] = h
						placed = true
						break
					}
				}
				if placed {
					break
				}
			}
		}
	}
}

// fpSet is a set of fingerprints split into 2^shardBits fpTables by the top
// bits of Hi.
type fpSet struct {
	shards []fpTable
	shift  uint // 64 - shardBits; a shift of 64 yields shard 0
}

func newFPSet(shardBits uint) *fpSet {
	s := &fpSet{shards: make([]fpTable, 1<<shardBits), shift: 64 - shardBits}
	for i := range s.shards {
		s.shards[i].init(fpMinBuckets)
	}
	return s
}

// shard returns the index of h's shard.
func (s *fpSet) shard(h node.Hash) int { return int(h.Hi >> s.shift) }

// touch loads the first word of h's home bucket and returns it. Touching
// the buckets of a batch of fingerprints before inserting them lets the CPU
// overlap their cache misses (Go has no prefetch instruction).
func (s *fpSet) touch(h node.Hash) uint64 {
	t := &s.shards[s.shard(h)]
	return t.buckets[t.home(h)][0].Lo
}

func (s *fpSet) contains(h node.Hash) bool { return s.shards[s.shard(h)].contains(h) }

func (s *fpSet) insert(h node.Hash, allowNew bool) (added, present bool) {
	return s.shards[s.shard(h)].insert(h, allowNew)
}

// len returns the number of fingerprints in the set.
func (s *fpSet) len() int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].count
	}
	return n
}

// bytes returns the memory held by the set's tables.
func (s *fpSet) bytes() uint64 {
	var n uint64
	for i := range s.shards {
		n += uint64(len(s.shards[i].buckets)) * fpBucketBytes
	}
	return n
}
