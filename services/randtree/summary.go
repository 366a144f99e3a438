package randtree

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
)

// Summary is a few statistics of the trees in a view, for progress lines and
// experiment tables.
type Summary struct {
	// Nodes is the number of RandTree nodes in the view.
	Nodes int
	// Joined is how many of them are joined.
	Joined int
	// Roots is how many joined nodes are roots (1 in a healthy tree).
	Roots int
	// Root is the smallest root, None when there is none.
	Root node.ID
	// TreeSize is the number of nodes in Root's tree, Root included,
	// counting only joined nodes and links both ends agree on (the parent
	// lists the child and the child names the parent).
	TreeSize int
	// Depth is the number of links on the longest path down from Root in
	// that tree: 0 for a lone root.
	Depth int
}

// Summarize computes the Summary of v. It allocates, so it is meant for
// reporting, not for the explorer's per-state path.
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
		if s.Root == id {
			sum.Roots++
			if sum.Root == node.None || id < sum.Root {
				sum.Root = id
			}
		}
	}
	if sum.Root == node.None {
		return sum
	}
	// Breadth-first down agreed links; the visited set guards against
	// the inconsistent states (loops, shared children) this package exists
	// to find.
	visited := map[node.ID]bool{sum.Root: true}
	level := []node.ID{sum.Root}
	sum.TreeSize = 1
	for depth := 0; len(level) > 0; depth++ {
		sum.Depth = depth
		var next []node.ID
		for _, p := range level {
			for _, c := range viewstate.Of[*State](v, p).Children {
				cs := viewstate.Of[*State](v, c)
				if cs == nil || cs.Status != StatusJoined || cs.Parent != p || visited[c] {
					continue
				}
				visited[c] = true
				next = append(next, c)
				sum.TreeSize++
			}
		}
		level = next
	}
	return sum
}

// String renders the summary, e.g.
// "joined 25/25, 1 root (n1), tree of 25 nodes, depth 3".
func (s Summary) String() string {
	roots := "roots"
	if s.Roots == 1 {
		roots = "root"
	}
	return fmt.Sprintf("joined %d/%d, %d %s (%v), tree of %d nodes, depth %d",
		s.Joined, s.Nodes, s.Roots, roots, s.Root, s.TreeSize, s.Depth)
}
