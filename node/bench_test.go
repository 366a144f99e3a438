package node

import (
	"fmt"
	"testing"
)

// BenchmarkStateHash measures the fingerprint hash (canonical encoding +
// xxh3-128) of a state holding maps, swept over their size; maps are the
// expensive case because their entries are sorted.
func BenchmarkStateHash(b *testing.B) {
	for _, n := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("entries=%d", n), func(b *testing.B) {
			r := NewRand(1, 1)
			st := State{Service: fillMapService(n, r.Perm(n)), Rand: NewRand(1, 1)}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Hash(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEnvelope measures the wire encoding and the checked decoding of a
// small message.
func BenchmarkEnvelope(b *testing.B) {
	r := testRegistry(b)
	env := Envelope{From: 13, To: 1, CN: 42, Msg: joinMsg{Joiner: 13, Siblings: []ID{4, 9, 11}}}
	buf, _ := r.AppendEnvelope(nil, env)
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		out := make([]byte, 0, 128)
		for b.Loop() {
			out, _ = r.AppendEnvelope(out[:0], env)
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := r.DecodeEnvelope(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
