package permits

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// owned sums the permits the nodes of v have: their own and those on loan
// to them.
func owned(v node.View) int {
	sum := 0
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok {
			sum += s.Owned + len(s.Borrowed)
		}
	}
	return sum
}

// atMostLimit: the nodes own at most limit permits between them.
func atMostLimit(v node.View, limit int) error {
	if sum := owned(v); sum > limit {
		return fmt.Errorf("the nodes own %d permits, the limit is %d", sum, limit)
	}
	return nil
}

// noBorrowerStuck: no node waits for the answer to a Borrow.
func noBorrowerStuck(v node.View) error {
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.Asking != node.None {
			return fmt.Errorf("%v waits for %v to answer its Borrow", id, s.Asking)
		}
	}
	return nil
}

// permitsSettled: every permit is at a node, none on its way or lost.
func permitsSettled(v node.View, limit int) error {
	if sum := owned(v); sum != limit {
		return fmt.Errorf("the nodes own %d permits of %d", sum, limit)
	}
	return nil
}
