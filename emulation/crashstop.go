package emulation

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Crash crash-stops live node id now: it goes down silently (its machine
// is gone: no RST; Down with silent set), so each peer learns of it when
// a message it had in flight arrives, or at its next write, and every
// write to it while it is down is lost and answered by a transport error
// one RTT later. It comes back after downtime (a reset: EventReset, its
// durable part recovered, then the workload's restart calls), or never
// when downtime is zero. It is what the explorer's crash-stop does
// (consequence.ActCrash, with Faults.Downtime). Trace lines: "down silent
// crash", then "up".
func (e *Emulator) Crash(id node.ID, downtime time.Duration) error {
	n, err := e.liveNode("Crash", id)
	if err != nil {
		return err
	}
	downtime = max(downtime, 0)
	nm := e.nemesisState()
	nm.st.Crashes++
	e.down(n, true, "crash")
	if downtime > 0 {
		e.queueNemesis(e.now+downtime, nemRestart, 0, n.id, n.inc)
	}
	return e.err
}
