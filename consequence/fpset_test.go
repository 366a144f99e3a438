package consequence

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

func randomHashes(n int, seed uint64) []node.Hash {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]node.Hash, n)
	for i := range out {
		out[i] = normFP(node.Hash{Hi: r.Uint64(), Lo: r.Uint64()})
	}
	return out
}

func TestFPSetAgreesWithMap(t *testing.T) {
	for _, shardBits := range []uint{0, 3, visitedShardsB} {
		t.Run(fmt.Sprint("shards=", 1<<shardBits), func(t *testing.T) {
			s := newFPSet(shardBits)
			ref := map[node.Hash]bool{}
			hs := randomHashes(50_000, uint64(shardBits))
			// Poor fingerprints (all entropy in one half) must work too.
			for i := range 2000 {
				hs = append(hs, node.Hash{Hi: uint64(i)}, node.Hash{Lo: uint64(i) + 1})
			}
			for i, h := range hs {
				if i%3 == 2 {
					h = hs[i/2] // a duplicate
				}
				added, present := s.insert(h, true)
				if added == ref[h] || present != ref[h] {
					t.Fatalf("insert %d: added %v present %v, map has %v", i, added, present, ref[h])
				}
				ref[h] = true
			}
			if s.len() != len(ref) {
				t.Fatalf("len %d, map %d", s.len(), len(ref))
			}
			for h := range ref {
				if !s.contains(h) {
					t.Fatalf("lost %v", h)
				}
			}
			for _, h := range randomHashes(10_000, 99) {
				if s.contains(h) != ref[h] {
					t.Fatalf("contains(%v) = %v", h, !ref[h])
				}
			}
			// A refused insert leaves the set unchanged but recognises members.
			n := s.len()
			extra := randomHashes(100, 7)
			for _, h := range extra {
				if added, present := s.insert(h, false); added || present != ref[h] {
					t.Fatalf("refused insert: %v %v", added, present)
				}
			}
			if s.len() != n {
				t.Fatalf("refused inserts changed the size %d → %d", n, s.len())
			}
			for i := range s.shards {
				tb := &s.shards[i]
				if tb.count > tb.limit || tb.count*fpLoadDen < tb.limit*fpLoadDen/2-len(tb.buckets)*fpBucketSlots && len(tb.buckets) > fpMinBuckets {
					t.Fatalf("shard %d: %d in %d buckets", i, tb.count, len(tb.buckets))
				}
			}
		})
	}
	if normFP(node.Hash{}) == (node.Hash{}) {
		t.Fatal("the empty fingerprint is not remapped")
	}
}

// BenchmarkVisitedSet compares the visited set with a Go map of
// fingerprints (Go 1.24+ swiss table): insert n random fingerprints, each
// followed by a lookup of an earlier one (as a search does: most successors
// are duplicates). ns/op is per insert+lookup; B/fp is the heap the
// structure holds per fingerprint. (Sizes are not powers of two: there the
// set has just doubled, its worst case of 32 bytes per fingerprint.)
//
//	go test ./consequence -run '^$' -bench VisitedSet -benchtime 3x
func BenchmarkVisitedSet(b *testing.B) {
	for _, n := range []int{50_000, 1_000_000, 3_000_000} {
		hs := randomHashes(n, 1)
		b.Run(fmt.Sprintf("fpset/n=%d", n), func(b *testing.B) {
			var bytes uint64
			for b.Loop() {
				s := newFPSet(visitedShardsB)
				for i, h := range hs {
					s.insert(h, true)
					if !s.contains(hs[i/2]) {
						b.Fatal("lost")
					}
				}
				bytes = s.bytes()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/fp")
			b.ReportMetric(float64(bytes)/float64(n), "B/fp")
		})
		b.Run(fmt.Sprintf("gomap/n=%d", n), func(b *testing.B) {
			var bytes uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				m := map[node.Hash]struct{}{}
				for i, h := range hs {
					m[h] = struct{}{}
					if _, ok := m[hs[i/2]]; !ok {
						b.Fatal("lost")
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				bytes = after.HeapAlloc - before.HeapAlloc
				runtime.KeepAlive(m)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/fp")
			b.ReportMetric(float64(bytes)/float64(n), "B/fp")
		})
	}
}
