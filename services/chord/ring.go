package chord

import (
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/idspace"
)

// ring is the identifier space of a Chord ring: 2^bits positions, with
// arithmetic modulo 2^bits. Intervals are clockwise (increasing
// identifiers, wrapping at 2^bits), as in the Chord paper.
type ring struct {
	mask      uint64
	bits      int
	placement Placement
}

func newRing(o Options) ring {
	return ring{mask: idspace.Mask(o.Bits), bits: o.Bits, placement: o.Placement}
}

// pos is the ring identifier of node id. Both placements are pure
// functions of the ID, so every node computes every other node's position
// and messages need not carry identifiers next to node IDs (Mace's
// fingers carry both because its keys are hashes of addresses).
func (r ring) pos(id node.ID) uint64 { return r.placement.Place(id, r.mask) }

// dist is the clockwise distance from a to b.
func (r ring) dist(a, b uint64) uint64 { return (b - a) & r.mask }

// between reports whether x lies in the open interval (a, b). As in Chord,
// (a, a) is the whole ring but a: a node that is its own successor
// covers every other identifier.
func (r ring) between(x, a, b uint64) bool {
	dx := r.dist(a, x)
	if a&r.mask == b&r.mask {
		return dx != 0
	}
	return dx != 0 && dx < r.dist(a, b)
}

// betweenIncl reports whether x lies in the half-open interval (a, b];
// (a, a] is the whole ring.
func (r ring) betweenIncl(x, a, b uint64) bool {
	if a&r.mask == b&r.mask {
		return true
	}
	dx := r.dist(a, x)
	return dx != 0 && dx <= r.dist(a, b)
}

// fingerStart is the first identifier finger k of a node at p covers:
// p + 2^k.
func (r ring) fingerStart(p uint64, k int) uint64 { return (p + 1<<uint(k)) & r.mask }
