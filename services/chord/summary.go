package chord

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
)

// Summary is a few statistics of the ring in a view, for progress lines
// and experiment tables.
type Summary struct {
	// Nodes is the number of Chord nodes in the view.
	Nodes int
	// Joined is how many of them are joined.
	Joined int
	// Ring is the number of joined nodes on the cycle of successor pointers
	// through the joined node with the smallest ID; 0 when the pointers
	// from it never come back (OneRing holds when Ring == Joined).
	Ring int
	// SuccessorsCorrect is how many joined nodes have as successor the
	// next joined node clockwise (the node itself when it is the only one).
	SuccessorsCorrect int
	// PredecessorsCorrect is how many joined nodes have as predecessor the
	// previous joined node clockwise.
	PredecessorsCorrect int
}

// Summarize computes the Summary of v. It allocates, so it is meant for
// reporting, not for the explorer's per-state path.
func Summarize(v node.View) Summary {
	var sum Summary
	type member struct {
		id  node.ID
		pos uint64
		s   *State
	}
	var joined []member
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		sum.Nodes++
		if s.Status == StatusJoined {
			joined = append(joined, member{id: id, pos: s.ring.pos(id), s: s})
		}
	}
	sum.Joined = len(joined)
	if sum.Joined == 0 {
		return sum
	}
	slices.SortFunc(joined, func(a, b member) int {
		if c := cmp.Compare(a.pos, b.pos); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	for i, m := range joined {
		next := joined[(i+1)%len(joined)].id
		prev := joined[(i+len(joined)-1)%len(joined)].id
		if m.s.successor(m.id) == next {
			sum.SuccessorsCorrect++
		}
		if m.s.Pred == prev {
			sum.PredecessorsCorrect++
		}
	}
	start := joined[0].id
	for _, m := range joined {
		start = min(start, m.id)
	}
	id := start
	for steps := 1; steps <= len(joined); steps++ {
		s := viewstate.Of[*State](v, id)
		next := s.successor(id)
		ns := viewstate.Of[*State](v, next)
		if ns == nil || ns.Status != StatusJoined {
			break
		}
		if next == start {
			sum.Ring = steps
			break
		}
		id = next
	}
	return sum
}

// String renders the summary, e.g. "joined 25/25, ring of 25, successors
// 25/25 and predecessors 25/25 correct".
func (s Summary) String() string {
	return fmt.Sprintf("joined %d/%d, ring of %d, successors %d/%d and predecessors %d/%d correct",
		s.Joined, s.Nodes, s.Ring, s.SuccessorsCorrect, s.Joined, s.PredecessorsCorrect, s.Joined)
}
