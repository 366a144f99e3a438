package consequence

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// BenchmarkVisitedSet compares the visited set with a Go map of
// fingerprints (Go 1.24+ swiss table): insert n random fingerprints, each
// followed by a lookup of an earlier one (as a search does: most successors
// are duplicates). ns/fp is per insert+lookup; B/fp is the heap the
// structure holds per fingerprint, which depends on where n falls between
// two growths.
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

// BenchmarkFPSetInsert measures the engine's use of the set in phase B: for
// each batch of touchBatch fingerprints, touch their home buckets, then
// insert them; a quarter of the fingerprints are new, the rest repeat
// earlier ones (2PC generates about 12 successors per unique state, most of
// them already visited). ns/fp is per insert, growths included.
//
//	go test ./consequence -run '^$' -bench FPSetInsert -benchtime 3x
func BenchmarkFPSetInsert(b *testing.B) {
	for _, n := range []int{1_000_000, 8_000_000} {
		fresh := randomHashes(n, 2)
		ops := make([]node.Hash, 0, 4*n)
		for i, h := range fresh {
			ops = append(ops, h, fresh[i/2], fresh[i*3/4], fresh[i/3])
		}
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			var sink uint64
			var bytes uint64
			for b.Loop() {
				s := newFPSet(visitedShardsB)
				for lo := 0; lo < len(ops); lo += touchBatch {
					batch := ops[lo:min(lo+touchBatch, len(ops))]
					for _, h := range batch {
						sink += s.touch(h)
					}
					for _, h := range batch {
						s.insert(h, true)
					}
				}
				if s.len() != n {
					b.Fatalf("len %d", s.len())
				}
				bytes = s.bytes()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ops)), "ns/fp")
			b.ReportMetric(float64(bytes)/float64(n), "B/fp")
			runtime.KeepAlive(sink)
		})
	}
}
