package consequence_test

import (
	"cmp"
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// reference is an independent, deliberately plain implementation of the
// searches the checker performs: the paper's Fig. 5 (BFS) and Fig. 8
// (consequence prediction) with a FIFO queue and Go maps, one state at a
// time, plus the checker's documented budget and stopping rules. The engine
// must agree with it on everything, for every number of workers.
type refViolation[A any] struct {
	prop  string
	depth int
	index int
	order int
	fp    node.Hash
	path  []A
}

type refResult[A any] struct {
	unique, generated, pruned uint64
	depthCounts               []uint64
	stop                      consequence.StopReason
	violations                []refViolation[A]
}

type refEntry[S, A any] struct {
	s    S
	fp   node.Hash
	path []A
}

func reference[S any, A comparable](m consequence.Model[S, A], props []consequence.Property[S], o consequence.Options) refResult[A] {
	maxViol := max(o.MaxViolations, 1)
	var res refResult[A]
	fpOf := func(s S) node.Hash {
		h := m.Fingerprint(s)
		if h == (node.Hash{}) {
			h = node.Hash{Hi: 1} // any fixed value: only equality matters here
		}
		return h
	}
	seen := map[node.Hash]bool{}
	type lkey struct {
		n int
		h node.Hash
	}
	localExplored := map[lkey]bool{}
	found := make([]int, len(props))
	levelViols := 0
	record := func(pi int, e refEntry[S, A], depth, index int, kind node.PropertyKind) {
		if props[pi].Kind != kind || found[pi] >= maxViol || props[pi].Check(e.s) == nil {
			return
		}
		found[pi]++
		levelViols++
		res.violations = append(res.violations, refViolation[A]{prop: props[pi].Name, depth: depth, index: index, order: pi, fp: e.fp, path: slices.Clone(e.path)})
	}
	full := func() bool { return o.MaxStates > 0 && res.unique >= uint64(o.MaxStates) }
	refused := false
	var cur []refEntry[S, A]
	starts := m.Init()
	res.generated = uint64(len(starts))
	for _, s := range starts {
		fp := fpOf(s)
		if seen[fp] {
			continue
		}
		if full() {
			refused = true
			break
		}
		seen[fp] = true
		res.unique++
		e := refEntry[S, A]{s: s, fp: fp}
		for pi := range props {
			record(pi, e, 0, len(cur), node.Safety)
		}
		cur = append(cur, e)
	}
	res.depthCounts = append(res.depthCounts, uint64(len(cur)))
	allViolated := func() bool {
		if len(props) == 0 {
			return false
		}
		for _, n := range found {
			if n < maxViol {
				return false
			}
		}
		return true
	}
	endLevel := func(size int) bool {
		defer func() { levelViols = 0 }()
		switch {
		case refused:
			res.stop = consequence.StopStateBudget
		case o.StopOnViolation && levelViols > 0, allViolated():
			res.stop = consequence.StopViolations
		case size == 0:
			res.stop = consequence.StopCompleted
		default:
			return false
		}
		return true
	}
	if endLevel(len(cur)) {
		return finish(res)
	}
	for depth := 0; ; depth++ {
		if o.MaxDepth > 0 && depth >= o.MaxDepth {
			res.stop = consequence.StopDepthBudget
			return finish(res)
		}
		var next []refEntry[S, A]
		for i, e := range cur {
			acts := m.Actions(e.s, nil)
			decided := map[int]bool{}
			moved, prunedHere := false, false
			for _, a := range acts {
				if a.Local && o.Strategy == consequence.Consequence {
					allowed, ok := decided[a.Node]
					if !ok {
						k := lkey{a.Node, m.LocalFingerprint(e.s, a.Node)}
						allowed = !localExplored[k]
						localExplored[k] = true
						decided[a.Node] = allowed
					}
					if !allowed && (a.Fault || depth >= o.FullDepth) {
						res.pruned++
						prunedHere = true
						continue
					}
				}
				ns, ok := m.Next(e.s, a.Act)
				if !ok {
					continue
				}
				res.generated++
				fp := fpOf(ns)
				if fp != e.fp {
					moved = true
				}
				if seen[fp] {
					continue
				}
				if refused || full() {
					refused = true
					continue
				}
				seen[fp] = true
				res.unique++
				ne := refEntry[S, A]{s: ns, fp: fp, path: append(slices.Clone(e.path), a.Act)}
				for pi := range props {
					record(pi, ne, depth+1, len(next), node.Safety)
				}
				next = append(next, ne)
			}
			if !moved && !prunedHere {
				for pi := range props {
					record(pi, e, depth, i, node.Liveness)
				}
			}
			if refused {
				break
			}
		}
		if len(next) > 0 {
			res.depthCounts = append(res.depthCounts, uint64(len(next)))
		}
		if endLevel(len(next)) {
			return finish(res)
		}
		cur = next
	}
}

func finish[A any](res refResult[A]) refResult[A] {
	slices.SortStableFunc(res.violations, func(a, b refViolation[A]) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.index, b.index), cmp.Compare(a.order, b.order))
	})
	return res
}
