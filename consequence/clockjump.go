package consequence

import (
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Clock jumps (Faults.ClockJumps) and timer skew (ActorOptions.TimerSkew).
//
// A clock jump moves what one node's Env.Now reads, forward or back by
// Faults.ClockJump, for good: the node's clock is then offset from the
// virtual clock (lastingState.offsets). Its timers keep firing after the
// delays they were set with — a monotonic clock's timers do, as Go's do —
// so a jump reorders no timer; what it changes is every comparison the
// service makes with Env.Now (a lease checked against the wall clock, a
// timestamp written into a message). The explorer keeps a node's timers
// and clock in virtual time and shifts them by the offset around each of
// its steps (run): the handler sees its own clock, the virtual clock
// orders every node's timers alike.
//
// Timer skew needs no state: a node's timers fire early or late by up to
// the declared bound, so two nodes' timers due up to twice the bound apart
// may fire in either order — what the virtual clock's skew rule explores
// (clockSkew).

// canJump reports whether g's successors may jump a clock.
func (m *ActorModel) canJump(g *GlobalState) bool {
	return g.ext.count(2) < int32(min(m.opts.Faults.ClockJumps, 1<<20))
}

// offsetOf returns node index i's clock offset in x.
func offsetOf(x *lastingState, i int) time.Duration {
	if x == nil || x.offsets == nil {
		return 0
	}
	return x.offsets[i]
}

// nextJump jumps node i's clock by Faults.ClockJump (back if a.Back).
func (m *ActorModel) nextJump(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	if g.nodes[i].down || !m.canJump(g) {
		return nil, false
	}
	s := newSucc(g)
	x := s.lasting()
	if x.offsets == nil {
		x.offsets = make([]time.Duration, len(m.ids))
	} else {
		x.offsets = slices.Clone(x.offsets)
	}
	d := m.opts.Faults.jump()
	if a.Back {
		d = -d
	}
	x.offsets[i] += d
	x.jumps++
	s.setLasting(x)
	return s.g, true
}

// shiftTimers moves every timer of ts by d, in place.
func shiftTimers(ts []node.Timer, d time.Duration) {
	for k := range ts {
		ts[k].At = ts[k].At.Add(d)
	}
}
