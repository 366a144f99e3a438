package pastry

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// A node's routing state: its leaf set (Left and Right) and its routing
// table. learn adds a node a node has heard of, purge removes one it
// declared failed (or, with the correction, a rejoining node's previous
// incarnation).

// sideDist is x's distance from self on one side of the leaf set:
// clockwise for the right side, counter-clockwise for the left.
func (s *State) sideDist(self, x node.ID, right bool) uint64 {
	me, px := s.sp.pos(self), s.sp.pos(x)
	if right {
		return s.sp.cw(me, px)
	}
	return s.sp.cw(px, me)
}

// insertSide inserts x into one side, which stays sorted by distance from
// self (ties by node ID) and at most LeafSize/2 long. It reports whether
// the side changed.
func (s *State) insertSide(side *[]node.ID, self, x node.ID, right bool) bool {
	d := s.sideDist(self, x, right)
	i := len(*side)
	for j, y := range *side {
		if y == x {
			return false
		}
		if dy := s.sideDist(self, y, right); i == len(*side) && (d < dy || d == dy && x < y) {
			i = j
		}
	}
	half := s.opts.LeafSize / 2
	if i >= half {
		return false
	}
	*side = slices.Insert(*side, i, x)
	if len(*side) > half {
		*side = (*side)[:half]
	}
	return true
}

// wants reports whether learning x would change the leaf set or fill an
// empty routing-table slot.
func (s *State) wants(self, x node.ID) bool {
	half := s.opts.LeafSize / 2
	for _, right := range []bool{false, true} {
		side := s.Left
		if right {
			side = s.Right
		}
		if len(side) < half {
			return true
		}
		d, far := s.sideDist(self, x, right), side[len(side)-1]
		if df := s.sideDist(self, far, right); d < df || d == df && x < far {
			return true
		}
	}
	r, c, ok := s.slot(self, x)
	return ok && s.Table[r*s.sp.cols()+c] == node.None
}

// learn records that x exists: it enters the leaf set where it is among
// the L/2 nearest on a side, and the routing table slot it belongs to when
// that slot is empty. It reports whether the leaf set changed.
func (s *State) learn(self, x node.ID) bool {
	if x == node.None || x == self {
		return false
	}
	changed := s.insertSide(&s.Left, self, x, false)
	if s.insertSide(&s.Right, self, x, true) {
		changed = true
	}
	if r, c, ok := s.slot(self, x); ok && s.Table[r*s.sp.cols()+c] == node.None {
		s.Table[r*s.sp.cols()+c] = x
	}
	s.dropMisses(self)
	return changed
}

// slot is the routing-table row and column of x in self's table: the row
// is the length of the prefix they share, the column x's next digit. A
// node with self's identifier has no slot.
func (s *State) slot(self, x node.ID) (row, col int, ok bool) {
	if len(s.Table) != s.sp.digits*s.sp.cols() {
		return 0, 0, false
	}
	px := s.sp.pos(x)
	row = s.sp.prefix(s.sp.pos(self), px)
	if row >= s.sp.digits {
		return 0, 0, false
	}
	return row, s.sp.digit(px, row), true
}

// purge removes x from the leaf set, the routing table and the probe
// bookkeeping, and refills the leaf set from the nodes it still knows. It
// returns which sides lost x.
func (s *State) purge(self, x node.ID) (left, right bool) {
	if i := slices.Index(s.Left, x); i >= 0 {
		s.Left = slices.Delete(s.Left, i, i+1)
		left = true
	}
	if i := slices.Index(s.Right, x); i >= 0 {
		s.Right = slices.Delete(s.Right, i, i+1)
		right = true
	}
	for i, y := range s.Table {
		if y == x {
			s.Table[i] = node.None
		}
	}
	if left || right {
		// Refill the sides from the nodes still known: a node that did
		// not fit one side before may belong there now.
		for _, y := range s.known() {
			s.learn(self, y)
		}
	}
	if len(s.Left) == 0 {
		s.Left = nil
	}
	if len(s.Right) == 0 {
		s.Right = nil
	}
	s.dropMisses(self)
	return left, right
}

// leaves returns the leaf set's nodes, both sides, ascending and without
// repeats (on a small ring a node can be on both sides).
func (s *State) leaves() []node.ID {
	out := make([]node.ID, 0, len(s.Left)+len(s.Right))
	out = addSorted(out, s.Left...)
	return addSorted(out, s.Right...)
}

// known returns every node of the leaf set and the routing table,
// ascending and without repeats.
func (s *State) known() []node.ID {
	out := s.leaves()
	for _, x := range s.Table {
		if x != node.None {
			out = addSorted(out, x)
		}
	}
	return out
}

// knows reports whether x is in the leaf set or the routing table.
func (s *State) knows(x node.ID) bool {
	return slices.Contains(s.Left, x) || slices.Contains(s.Right, x) || slices.Contains(s.Table, x)
}

// addSorted inserts ids into the ascending list out, skipping repeats and
// None.
func addSorted(out []node.ID, ids ...node.ID) []node.ID {
	for _, id := range ids {
		if id == node.None {
			continue
		}
		if i, ok := slices.BinarySearch(out, id); !ok {
			out = slices.Insert(out, i, id)
		}
	}
	return out
}

// inLeafRange reports whether key falls within the leaf set's range: from
// the farthest left leaf to the farthest right leaf through self. A side
// with fewer than L/2 nodes means the node knows every node on that side,
// so its range extends to the whole circle.
func (s *State) inLeafRange(self node.ID, key uint64) bool {
	half := s.opts.LeafSize / 2
	if len(s.Left) < half || len(s.Right) < half {
		return true
	}
	for _, x := range s.Left {
		if slices.Contains(s.Right, x) {
			// The sides meet: the leaf set spans the whole circle.
			return true
		}
	}
	lo := s.sp.pos(s.Left[len(s.Left)-1])
	hi := s.sp.pos(s.Right[len(s.Right)-1])
	return s.sp.cw(lo, key) <= s.sp.cw(lo, hi)
}
