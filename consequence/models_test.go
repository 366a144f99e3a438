package consequence_test

import (
	"fmt"
	"sync/atomic"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// graph is a pseudo-random transition system on the states 0..size-1: state
// s has a few actions, each to a pseudo-random state (cycles, self loops,
// back edges and diamonds all occur), each tagged with a node 0..nodes-1 and
// local or not. A node's "local state" is a few bits of s, so localExplored
// pruning bites. It is a deterministic function of (seed, s).
type graph struct {
	seed   uint64
	size   uint64
	nodes  int
	fanout int
}

type gAct struct {
	To uint64
}

func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

func (g *graph) Init() []uint64 { return []uint64{0, 1 % g.size, 0} }

func (g *graph) Actions(s uint64, out []consequence.Action[gAct]) []consequence.Action[gAct] {
	h := mix(s ^ g.seed)
	k := 1 + int(h%uint64(g.fanout))
	for i := range k {
		r := mix(h + uint64(i)*0x9e3779b97f4a7c15)
		to := r % g.size
		if r>>60 == 0 {
			to = s // a stutter now and then
		}
		out = append(out, consequence.Action[gAct]{Node: int(r>>8) % g.nodes, Local: r>>20&1 == 1, Fault: r>>20&3 == 3, Act: gAct{To: to}})
	}
	return out
}

func (g *graph) Next(s uint64, a gAct) (uint64, bool) {
	if a.To%17 == 16 {
		return s, false // some actions turn out disabled
	}
	return a.To, true
}

func (g *graph) Fingerprint(s uint64) node.Hash {
	return node.Hash{Hi: mix(s ^ 0xabc), Lo: mix(s ^ 0x123456)}
}

func (g *graph) LocalFingerprint(s uint64, n int) node.Hash {
	local := (s >> (2 * uint(n))) & 7
	return node.Hash{Hi: mix(local), Lo: uint64(n)}
}

// graphProps are properties of graph states: a safety property failing on
// states divisible by 97, and a liveness property (checked on quiescent
// states) failing on odd states.
func graphProps() []consequence.Property[uint64] {
	return []consequence.Property[uint64]{
		consequence.Always("not97", func(s uint64) error {
			if s != 0 && s%97 == 0 {
				return fmt.Errorf("state %d is divisible by 97", s)
			}
			return nil
		}),
		consequence.Always("not1000", func(s uint64) error {
			if s%1000 == 999 {
				return fmt.Errorf("state %d ends in 999", s)
			}
			return nil
		}),
		consequence.Eventually("even", func(s uint64) error {
			if s%2 == 1 {
				return fmt.Errorf("state %d is odd", s)
			}
			return nil
		}),
	}
}

// counters: node i has counter c_i in 0..max; its local action increments
// it. No messages. With 2 nodes and max 2 BFS finds 9 states.
type counters struct {
	nodes, max int
}

type cAct struct{ Node int }

func (c counters) Init() []uint64 { return []uint64{0} }

func (c counters) get(s uint64, i int) int { return int(s>>(8*uint(i))) & 0xff }

func (c counters) Actions(s uint64, out []consequence.Action[cAct]) []consequence.Action[cAct] {
	for i := range c.nodes {
		if c.get(s, i) < c.max {
			out = append(out, consequence.Action[cAct]{Node: i, Local: true, Act: cAct{Node: i}})
		}
	}
	return out
}

func (c counters) Next(s uint64, a cAct) (uint64, bool) {
	if c.get(s, a.Node) >= c.max {
		return s, false
	}
	return s + 1<<(8*uint(a.Node)), true
}

func (c counters) Fingerprint(s uint64) node.Hash { return node.Hash{Hi: mix(s), Lo: mix(^s)} }

func (c counters) LocalFingerprint(s uint64, n int) node.Hash {
	return node.Hash{Hi: mix(uint64(c.get(s, n))), Lo: 7}
}

// hooked wraps a model and calls hook before every Next (for panics,
// cancellation and nondeterminism tests).
type hooked[S, A any] struct {
	consequence.Model[S, A]
	calls   atomic.Int64
	hook    func(call int64, s S)
	actions func(call int64, acts []consequence.Action[A]) []consequence.Action[A]
}

func (h *hooked[S, A]) Next(s S, a A) (S, bool) {
	n := h.calls.Add(1)
	if h.hook != nil {
		h.hook(n, s)
	}
	return h.Model.Next(s, a)
}

func (h *hooked[S, A]) Actions(s S, out []consequence.Action[A]) []consequence.Action[A] {
	out = h.Model.Actions(s, out)
	if h.actions != nil {
		out = h.actions(h.calls.Load(), out)
	}
	return out
}
