package pastry

import (
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/idspace"
)

// space is Pastry's identifier space: 2^bits identifiers on a circle, read
// as digits of digitBits bits each, most significant first. Identifiers
// are a pure function of node IDs (the placement), so messages carry node
// IDs only.
type space struct {
	mask      uint64
	bits      int
	digitBits int
	digits    int
	placement Placement
}

func newSpace(o Options) space {
	return space{mask: idspace.Mask(o.Bits), bits: o.Bits, digitBits: o.DigitBits, digits: o.Bits / o.DigitBits, placement: o.Placement}
}

// cols is the number of routing-table columns: the digit base.
func (sp space) cols() int { return 1 << uint(sp.digitBits) }

// pos is the identifier of node id.
func (sp space) pos(id node.ID) uint64 { return sp.placement.Place(id, sp.mask) }

// cw is the clockwise distance from a to b.
func (sp space) cw(a, b uint64) uint64 { return (b - a) & sp.mask }

// dist is the numerical distance between a and b on the circle.
func (sp space) dist(a, b uint64) uint64 { return min(sp.cw(a, b), sp.cw(b, a)) }

// digit is digit row of key (row 0 the most significant).
func (sp space) digit(key uint64, row int) int {
	shift := uint(sp.bits - (row+1)*sp.digitBits)
	return int((key >> shift) & uint64(sp.cols()-1))
}

// prefix is the number of leading digits a and b share (digits when equal).
func (sp space) prefix(a, b uint64) int {
	for r := 0; r < sp.digits; r++ {
		if sp.digit(a, r) != sp.digit(b, r) {
			return r
		}
	}
	return sp.digits
}

// closer reports whether node x is numerically closer to key than node y,
// ties broken by the smaller node ID so that every node agrees on the
// closest one.
func (sp space) closer(key uint64, x, y node.ID) bool {
	dx, dy := sp.dist(sp.pos(x), key), sp.dist(sp.pos(y), key)
	if dx != dy {
		return dx < dy
	}
	return x < y
}

// formatIDs renders a node list as "[n1 n2]".
func formatIDs(ids []node.ID) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id.String())
	}
	b.WriteByte(']')
	return b.String()
}
