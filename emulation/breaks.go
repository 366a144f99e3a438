package emulation

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// BreakConfig schedules connection breaks beside churn: network failures
// that cut one open connection between two live nodes, as a middlebox
// timeout or a link failure would, while both processes stay up. Breaks
// form a Poisson process. Its zero value means no breaks, and it has no
// other defaults.
type BreakConfig struct {
	// Rate is the mean number of connection breaks per minute of virtual
	// time. Zero disables breaks; it must be finite and not negative.
	Rate float64
	// After delays breaks: the first is drawn after this offset from
	// Epoch (e.g. to let the system form first). Zero starts at Epoch.
	After time.Duration
	// Until ends breaks: none happens at or after this offset from Epoch.
	// Zero means breaks never end; otherwise it must be greater than
	// After.
	Until time.Duration
}

// BreakStats counts the scheduled connection breaks (BreakConfig); breaks
// by steering verdicts and BreakConnection are only in
// Result.EventsByKind["break"], with these.
type BreakStats struct {
	// Broken is the number of connections the schedule broke.
	Broken int64 `json:"broken"`
	// Skipped counts scheduled breaks that found no open connection
	// between two live nodes.
	Skipped int64 `json:"skipped"`
}

// validate checks c the way ChurnConfig is checked: no negative offsets, a
// finite non-negative rate, Until after After.
func (c BreakConfig) validate() error {
	if c.After < 0 || c.Until < 0 {
		return fmt.Errorf("emulation: Config.Breaks.After and Breaks.Until must not be negative, got %v and %v", c.After, c.Until)
	}
	if math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0 {
		return fmt.Errorf("emulation: Config.Breaks.Rate must be a finite, non-negative number of breaks per minute, got %v", c.Rate)
	}
	if c.Until > 0 && c.Until <= c.After {
		return fmt.Errorf("emulation: Config.Breaks.Until (%v) must be greater than Breaks.After (%v)", c.Until, c.After)
	}
	return nil
}

// scheduleBreak queues the next scheduled break after from, unless the
// break phase is over by then.
func (e *Emulator) scheduleBreak(from time.Duration) {
	gap := e.breaks.ExpFloat64() * float64(time.Minute) / e.cfg.Breaks.Rate
	at := from + time.Duration(gap)
	if e.cfg.Breaks.Until > 0 && at >= e.cfg.Breaks.Until {
		return
	}
	it := e.q.alloc()
	it.kind, it.at = itemBreak, at
	e.q.push(it)
}

// networkBreak breaks one open connection, drawn uniformly together with
// the end that notices first, the way BreakConnection does: what is in
// flight both ways is lost, the first end gets a transport error now and
// the other after the one-way latency. Draw order (part of the contract):
// the connection end, then the next gap.
func (e *Emulator) networkBreak() bool {
	ends := e.openEnds()
	if len(ends) == 0 {
		e.st.breaksSkipped++
		e.scheduleBreak(e.now)
		return false
	}
	end := ends[e.breaks.IntN(len(ends))]
	e.scheduleBreak(e.now)
	e.st.breaks++
	if err := e.breakConnection(end[0], end[1], " network"); err != nil && err != e.err {
		// openEnds listed only live nodes holding the connection.
		panic(fmt.Sprintf("emulation: scheduled break of %v-%v: %v", end[0], end[1], err))
	}
	return true
}

// openEnds lists every end (a, b) of an established connection between
// two live nodes that neither end has given up yet: each connection twice,
// once from each end, in ascending order of a then b, so one uniform draw
// picks a connection and the end that breaks it. Pending connections (the
// first message still on its way) are left out: the receiver has no
// socket to lose yet.
func (e *Emulator) openEnds() [][2]node.ID {
	var ends [][2]node.ID
	for _, a := range e.live {
		na := e.nodes[a]
		ids := e.scratch[:0]
		for b, p := range na.peers {
			if p.conn != nil {
				ids = append(ids, b)
			}
		}
		slices.Sort(ids) // map order must not leak into the schedule
		for _, b := range ids {
			if e.open(na, na.peers[b].conn, b) {
				ends = append(ends, [2]node.ID{a, b})
			}
		}
		e.scratch = ids[:0]
	}
	return ends
}

// open reports whether c, which live node na holds for peer b, is
// established and intact at both ends.
func (e *Emulator) open(na *emNode, c *conn, b node.ID) bool {
	nb := e.node(b)
	if c.broken || c.pending || nb == nil || !nb.live || c.doomed(na.id) || c.doomed(b) {
		return false
	}
	if na.inc != c.incOf(na.id) || nb.inc != c.incOf(b) {
		return false
	}
	bp := nb.peers[na.id]
	return bp != nil && bp.conn == c
}
