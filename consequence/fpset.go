package consequence

import (
	"math"
	"unsafe"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The visited set keeps a 64-bit key per state, not the model's 128-bit
// fingerprint, in 2^shardBits open-addressing tables (shards) chosen by the
// top shardBits bits of the fingerprint's Hi half (fpTable, fpset_table.go).
//
// What is stored. key(h) mixes all 128 bits of h into 64 (fpKey). The shard
// index is fixed for the life of the set, so it is a quotient that need not be
// stored: two different fingerprints are confused only if they fall into the
// same shard and have the same key. The set therefore distinguishes
// fingerprints by 64+shardBits bits: 74 for the visited set (1,024 shards),
// 64 for consequence prediction's localExplored (one shard). The position in
// the table is derived from the key itself, not from further unstored bits,
// because a table that grows must find every key's new home from the key
// alone.
//
// What that costs. A confused fingerprint is a new state taken for a visited
// one: it and everything reachable only through it are silently left
// unexplored. With n states spread evenly over the shards the expected number
// of confused pairs is about n²/2^(65+shardBits) (omissionProbability): 1e-7
// at 2PC-10's 61.5M states and 2.6e-7 at 10^8 states for the visited set, 2.7e-6
// for a localExplored of 10^7 local states. The model's own 128-bit
// fingerprints add n²/2^129, which is nothing. For comparison, TLC keeps
// 64-bit fingerprints (n²/2^65 ≈ 2.7e-4 at 10^8) and prints its estimate of
// the collision probability after every run; SPIN's hash-compact mode keeps
// 32 bits and its bitstate mode a few bits per state, trading far more
// coverage for memory than this.
//
// Memory. A slot is 8 bytes, a bucket eight slots (one cache line); a table
// grows by about 1.5× (non-power-of-two bucket counts, multiply-shift range
// reduction) when it is 7/8 full, so it is between about 52 % (after growing,
// allowing for allocation rounding) and 87.5 % full: 9.1 to 15.4 bytes per
// state, against 18.3 to 36.6 for the former 16-byte slots doubling. Each
// shard also costs a 64-byte header; tables are allocated at their first
// insert, so a small search pays for headers only.
//
// Concurrency. The shard of a fingerprint depends on nothing but the
// fingerprint and the shard count, and shards share no memory (their headers
// are padded to a cache line each), so workers that own disjoint groups of
// shards (search.go's phase B: shard(h) % groups) may insert concurrently
// without locks: insert, contains and touch may run concurrently with calls
// on other shards, calls on one shard must be ordered by the caller, and
// len, bytes and omissionProbability, which read every shard, must not run
// concurrently with insert. shard may always. The set is deterministic:
// its contents, sizes and answers depend only on the sequence of insertions
// into each shard, never on timing or on the number of workers.

// visitedShardsB is log2 of the visited set's shard count. Shards are free
// quotient bits (see above); the cost is 64 bytes of header per shard (64
// KiB, allocated by every search).
const visitedShardsB = 10

// smallShardsB is log2 of the shard count of a search whose state budget
// is at most smallBudget: steering runs many such searches, and 1,024
// shard headers are 64 KiB to allocate and clear each time. 64 shards
// still tell 70 bits apart (an omission probability of 4e-10 at 1M).
const (
	smallShardsB = 6
	smallBudget  = 1 << 20
)

// visitedShards returns log2 of the visited set's shard count for a
// search with options o.
func visitedShards(o Options) uint {
	if o.MaxStates > 0 && o.MaxStates <= smallBudget {
		return smallShardsB
	}
	return visitedShardsB
}

// zeroFingerprint replaces a model fingerprint of {0, 0}. The engine passes
// every fingerprint through normFP, so {0, 0} never reaches the set; the
// tables no longer need that (they mark an empty slot with key 0 and fpKey
// remaps that key), but keeping the mapping keeps every fingerprint, stutter
// test and path check exactly as before.
var zeroFingerprint = node.Hash{Hi: 0x6a09e667f3bcc908, Lo: 0xbb67ae8584caa73b}

// normFP maps the reserved value {0, 0} to zeroFingerprint.
func normFP(h node.Hash) node.Hash {
	if h.Hi|h.Lo == 0 {
		return zeroFingerprint
	}
	return h
}

// fpSet is a set of fingerprints split into 2^shardBits fpTables by the top
// bits of Hi. It stores 64-bit keys, so it may confuse two fingerprints (see
// the comment at the top of this file); it never forgets one it was given.
// The zero value is not usable; call newFPSet.
type fpSet struct {
	shards    []fpTable
	shift     uint // 64 - shardBits; a shift of 64 yields shard 0
	shardBits uint
}

// newFPSet returns an empty set of 2^shardBits shards. It allocates only the
// shard headers; each table is allocated at its first insertion.
func newFPSet(shardBits uint) *fpSet {
	s := &fpSet{shards: make([]fpTable, 1<<shardBits), shift: 64 - shardBits, shardBits: shardBits}
	for i := range s.shards {
		s.shards[i].buckets = fpNoBuckets
	}
	return s
}

// shard returns the index of h's shard, in [0, 2^shardBits).
func (s *fpSet) shard(h node.Hash) int { return int(h.Hi >> s.shift) }

// touch loads the first word of h's home bucket and returns it. Touching
// the buckets of a batch of fingerprints before inserting them lets the CPU
// overlap their cache misses (Go has no prefetch instruction).
// (It uses fpMix, not fpKey: a key of 0 may touch the wrong bucket, which
// costs nothing, and the test would keep touch from inlining.)
func (s *fpSet) touch(h node.Hash) uint64 {
	t := &s.shards[s.shard(h)]
	return t.buckets[t.home(fpMix(h))][0]
}

// contains reports whether h (or a fingerprint confused with it) is in the
// set.
func (s *fpSet) contains(h node.Hash) bool { return s.shards[s.shard(h)].contains(fpKey(h)) }

// insert adds h unless it is present. It reports whether h was absent
// (present == false); it adds h only if allowNew (then added == true), so a
// full state budget can refuse new fingerprints while still recognising old
// ones.
func (s *fpSet) insert(h node.Hash, allowNew bool) (added, present bool) {
	return s.shards[s.shard(h)].insert(fpKey(h), allowNew)
}

// len returns the number of keys in the set: the number of distinct
// fingerprints inserted, less any confused ones.
func (s *fpSet) len() int {
	n := 0
	for i := range s.shards {
		n += s.shards[i].count
	}
	return n
}

// bytes returns the memory held by the set: the tables and the shard
// headers.
func (s *fpSet) bytes() uint64 {
	n := uint64(len(s.shards)) * uint64(unsafe.Sizeof(fpTable{}))
	for i := range s.shards {
		if s.shards[i].limit > 0 { // not the shared empty bucket
			n += uint64(len(s.shards[i].buckets)) * fpBucketBytes
		}
	}
	return n
}

// keyBits is the number of fingerprint bits the set distinguishes: the
// stored 64-bit key and the shard index.
func (s *fpSet) keyBits() uint { return 64 + s.shardBits }

// omissionProbability estimates the probability that some state was taken
// for another: the expected number of pairs of the set's members that share
// a shard and a key, Σ c(c-1)/2 / 2^64 over the shards' counts c, assuming
// the fingerprints are uniformly distributed. (It is an upper bound on the
// probability, and the usual birthday estimate while it is small.) The
// pairs the set has already confused are not counted: it cannot see them.
func (s *fpSet) omissionProbability() float64 {
	var pairs float64
	for i := range s.shards {
		c := float64(s.shards[i].count)
		pairs += c * (c - 1) / 2
	}
	return pairs / math.Exp2(64)
}
