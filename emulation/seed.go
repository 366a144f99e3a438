package emulation

import (
	mrand "math/rand/v2"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Subsystem stream labels. Each subsystem draws from its own generator,
// derived from the run seed and its label, so adding or removing draws in one
// subsystem never shifts the numbers another one sees. The values are part of
// the reproducibility contract: changing one changes every trace.
const (
	streamTopology uint64 = 0x746f706f6c6f6779 // "topology"
	streamStart    uint64 = 0x7374617274000000 // "start"
	streamChurn    uint64 = 0x636875726e000000 // "churn"
	streamCores    uint64 = 0x636f726573000000 // "cores"
	streamNetwork  uint64 = 0x6e6574776f726b00 // "network"
	streamDatagram uint64 = 0x646174616772616d // "datagram"
	streamBreaks   uint64 = 0x627265616b730000 // "breaks"
	streamDelivery uint64 = 0x64656c6976657279 // "delivery"
)

// splitmix64 is the SplitMix64 finaliser: a bijective, well-mixing hash of
// one 64-bit word.
func splitmix64(x uint64) uint64 { return node.Mix64(x + node.Golden64) }

// deriveSeed derives an independent 64-bit seed from seed and a sequence of
// labels (a subsystem stream, then e.g. node IDs).
func deriveSeed(seed uint64, labels ...uint64) uint64 {
	h := splitmix64(seed)
	for _, l := range labels {
		h = splitmix64(h ^ splitmix64(l))
	}
	return h
}

// newStream returns the generator of one subsystem for seed.
func newStream(seed, stream uint64) *mrand.Rand {
	return mrand.New(mrand.NewPCG(deriveSeed(seed, stream), stream))
}

// unitFloat maps a 64-bit draw to a uniform float in [0, 1).
func unitFloat(x uint64) float64 { return float64(x>>11) / (1 << 53) }
