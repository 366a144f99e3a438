package bullet

import (
	"math/bits"
	"strconv"
	"strings"
)

// A file map is a bitmap of blocks, bit b of word b/64 for block b: what a
// node has, a receiver's view of a sender's map, a sender's shadow map for
// a receiver. Its length is always words(Blocks), so two maps combine
// word by word; a map is never shared between two owners.

// words returns the length of a file map of n blocks.
func words(n int) int { return (n + 63) / 64 }

// newMap returns an empty file map of n blocks.
func newMap(n int) []uint64 { return make([]uint64, words(n)) }

// fullMap returns the file map of all n blocks.
func fullMap(n int) []uint64 {
	m := newMap(n)
	for b := range n {
		set(m, uint32(b))
	}
	return m
}

func has(m []uint64, b uint32) bool { return m[b/64]&(1<<(b%64)) != 0 }

func set(m []uint64, b uint32) { m[b/64] |= 1 << (b % 64) }

// count returns the number of blocks in m.
func count(m []uint64) int {
	n := 0
	for _, w := range m {
		n += bits.OnesCount64(w)
	}
	return n
}

// countAndNot returns the number of blocks in a but not in b.
func countAndNot(a, b []uint64) int {
	n := 0
	for i, w := range a {
		n += bits.OnesCount64(w &^ b[i])
	}
	return n
}

// blocksOf returns the blocks of m, ascending.
func blocksOf(m []uint64) []uint32 {
	out := make([]uint32, 0, count(m))
	for i, w := range m {
		for w != 0 {
			out = append(out, uint32(i*64+bits.TrailingZeros64(w)))
			w &= w - 1
		}
	}
	return out
}

func cloneMap(m []uint64) []uint64 {
	if m == nil {
		return nil
	}
	return append(make([]uint64, 0, len(m)), m...)
}

// formatBlocks renders ascending blocks with runs as ranges: "[0-7 9]".
func formatBlocks(bs []uint32) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < len(bs); {
		j := i
		for j+1 < len(bs) && bs[j+1] == bs[j]+1 {
			j++
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatUint(uint64(bs[i]), 10))
		if j > i {
			b.WriteByte('-')
			b.WriteString(strconv.FormatUint(uint64(bs[j]), 10))
		}
		i = j + 1
	}
	b.WriteByte(']')
	return b.String()
}
