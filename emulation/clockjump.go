package emulation

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// A node's clock. Every node reads virtual time (Env.Now) but for its
// clock offset, which JumpClock moves: the node's core, its layers and its
// checkpoints see Epoch + now + offset (clockOf), as a live node's see its
// own wall clock. Its timers keep firing after the delays they were set
// with — a monotonic clock's timers do — so a jump reorders no timer; it
// changes every comparison the service makes with Env.Now. A node's timer
// skew (NemesisConfig.TimerSkew) is the other way round: every timer of
// the node fires that much after its deadline (before it, when negative),
// while its clock reads true.

// clockOf is node n's clock now: what its core, layers and checkpoints
// read.
func (e *Emulator) clockOf(n *emNode) time.Time { return Epoch.Add(e.now + n.clockOffset) }

// timerDue is when a timer node n set to fire at deadline (on its own
// clock) fires on virtual time: after the delay it was set with, skewed
// by the node's skew, and never before now.
func (e *Emulator) timerDue(n *emNode, deadline time.Time) time.Duration {
	return max(deadline.Sub(Epoch)-n.clockOffset+n.skew, e.now)
}

// JumpClock moves node id's clock by d (forward, or back when d is
// negative), now and for good: from its next event on, Env.Now reads d
// later (earlier) than it did; its timers still fire after the delays
// they were set with. A node that is down jumps too (its clock is its
// machine's). It is the explorer's clock jump (consequence.ActClockJump).
// Trace line: "clock-jump +10s".
func (e *Emulator) JumpClock(id node.ID, d time.Duration) error {
	if e.err != nil {
		return e.err
	}
	n := e.node(id)
	if n == nil {
		return fmt.Errorf("emulation: JumpClock: no node %v", id)
	}
	if d == 0 {
		return nil
	}
	n.clockOffset += d
	if n.started {
		// The core's clock only moves forward with the events it steps; a
		// jump back must be set.
		n.core.SetState(*n.core.State(), e.clockOf(n))
	}
	nm := e.nemesisState()
	nm.st.ClockJumps++
	if e.cfg.Trace != nil {
		sign := "+"
		if d < 0 {
			sign = ""
		}
		e.traceLabel(id, "clock-jump "+sign+d.String())
	}
	e.syncPipe(n)
	return e.err
}

// ClockOffset returns how far node id's clock is off virtual time (the
// sum of its clock jumps).
func (e *Emulator) ClockOffset(id node.ID) time.Duration {
	if n := e.node(id); n != nil {
		return n.clockOffset
	}
	return 0
}

// TimerSkew returns node id's timer skew (NemesisConfig.TimerSkew).
func (e *Emulator) TimerSkew(id node.ID) time.Duration {
	if n := e.node(id); n != nil {
		return n.skew
	}
	return 0
}
