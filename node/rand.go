package node

import (
	"fmt"
	"math/bits"
	mrand "math/rand/v2"
)

// Rand is a node's deterministic pseudo-random source (PCG-DXSM). It is a
// plain value: copying it copies its state, and its state is part of the node
// state that is checkpointed and hashed. The zero value is usable but every
// zero-valued Rand draws the same sequence; cores seed theirs with NewRand.
//
// A Rand is not safe for concurrent use; a handler uses its node's Rand only
// during the call.
type Rand struct {
	pcg mrand.PCG
}

// NewRand returns a Rand seeded with (seed, stream). Distinct streams give
// independent sequences for the same seed; cores use the node ID as stream.
func NewRand(seed, stream uint64) Rand {
	return Rand{pcg: *mrand.NewPCG(seed, stream)}
}

// Uint64 returns a uniformly distributed 64-bit value.
func (r *Rand) Uint64() uint64 { return r.pcg.Uint64() }

// IntN returns a uniform integer in [0, n). It panics if n <= 0, which is a
// bug in the calling handler.
func (r *Rand) IntN(n int) int {
	if n <= 0 {
		panic("node: Rand.IntN: n <= 0")
	}
	return int(r.uint64n(uint64(n)))
}

// uint64n is Lemire's unbiased bounded draw.
func (r *Rand) uint64n(n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// Float64 returns a uniform float in [0, 1).
func (r *Rand) Float64() float64 { return float64(r.Uint64()>>11) / (1 << 53) }

// Shuffle permutes n elements with swap (Fisher–Yates).
func (r *Rand) Shuffle(n int, swap func(i, j int)) {
	for i := n - 1; i > 0; i-- {
		swap(i, r.IntN(i+1))
	}
}

// Perm returns a random permutation of [0, n).
func (r *Rand) Perm(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// AppendBinary appends the generator's state (a fixed 20 bytes) to b, so
// that code outside the node state can record where the stream was
// (package node/replayed logs it with the inputs it replays).
func (r *Rand) AppendBinary(b []byte) ([]byte, error) { return r.appendState(b), nil }

// UnmarshalBinary restores a state AppendBinary wrote. b is untrusted: a
// state of the wrong length or format is an error and leaves r unchanged.
func (r *Rand) UnmarshalBinary(b []byte) error {
	if len(b) != randStateLen {
		return fmt.Errorf("node: random source state of %d bytes, want %d", len(b), randStateLen)
	}
	var next Rand
	if err := next.setState(b); err != nil {
		return fmt.Errorf("node: random source state: %w", err)
	}
	*r = next
	return nil
}

// appendState appends the generator state (a fixed 20 bytes).
func (r *Rand) appendState(b []byte) []byte {
	out, _ := r.pcg.AppendBinary(b) // cannot fail
	return out
}

// randStateLen is the length appendState produces.
const randStateLen = 20

// setState restores a state produced by appendState.
func (r *Rand) setState(b []byte) error {
	return r.pcg.UnmarshalBinary(b)
}
