package servicetest

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// BenchHash is the body of a benchmark of st.Hash, allocations reported.
func BenchHash(b *testing.B, st node.State) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Hash(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchAppendCheckpoint is the body of a benchmark of st.AppendCheckpoint
// into a reused buffer of capacity bufCap, allocations and the
// checkpoint's size ("bytes/checkpoint") reported.
func BenchAppendCheckpoint(b *testing.B, st node.State, bufCap int) {
	b.ReportAllocs()
	buf := make([]byte, 0, bufCap)
	var size int
	for b.Loop() {
		out, err := st.AppendCheckpoint(buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(size), "bytes/checkpoint")
}

// BenchClone is the body of a benchmark of st.Clone(nil), allocations
// reported.
func BenchClone(b *testing.B, st node.State) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := st.Clone(nil); err != nil {
			b.Fatal(err)
		}
	}
}
