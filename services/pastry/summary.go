package pastry

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
	"github.com/seed6eee2ec7/crystalball/services/internal/violation"
)

// Summary is a few statistics of the overlay in a view, for progress lines
// and experiment tables.
type Summary struct {
	// Nodes is the number of Pastry nodes in the view.
	Nodes int
	// Joined is how many of them are joined.
	Joined int
	// Consistent is how many joined nodes have a consistent leaf set (see
	// LeafSetsConsistent); the overlay is one ring when Consistent ==
	// Joined == Nodes.
	Consistent int
	// Stale is the number of leaf-set entries, over all joined nodes, that
	// name a node of the view that is not joined: a rejoining node's old
	// entry, the trace of MaceMC's bug.
	Stale int
}

// Summarize computes the Summary of v. It allocates on inconsistent
// views, so it is meant for reporting, not for the explorer's per-state
// path.
func Summarize(v node.View) Summary {
	var sum Summary
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		sum.Nodes++
		if s.Status != StatusJoined {
			continue
		}
		sum.Joined++
		var vs violation.List
		s.checkConsistentSide(&vs, v, id, s.Left, false)
		s.checkConsistentSide(&vs, v, id, s.Right, true)
		if vs.Len() == 0 {
			sum.Consistent++
		}
		for _, x := range s.leaves() {
			if xs := viewstate.Of[*State](v, x); xs != nil && xs.Status != StatusJoined {
				sum.Stale++
			}
		}
	}
	return sum
}

// String renders the summary, e.g. "joined 4/5, leaf sets consistent 3/4,
// stale entries 3".
func (s Summary) String() string {
	return fmt.Sprintf("joined %d/%d, leaf sets consistent %d/%d, stale entries %d",
		s.Joined, s.Nodes, s.Consistent, s.Joined, s.Stale)
}
