package emulation

import (
	"fmt"
	"strings"
	"time"
)

// String renders the Result for a person, one aspect per line: the run,
// its events by kind, messages, link usage (with bandwidth), failures
// and churn, every safety and
// liveness property, and the snapshot and steering totals when present.
// It leaves out WallTime and SteeringResult.ExplorationSeconds, the two
// measured fields, so two runs of the same seed print alike.
func (r Result) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %d nodes, %v virtual: %d events (", r.Seed, r.Nodes, r.VirtualDuration, r.Events)
	first := true
	for _, k := range kindNames {
		if n := r.EventsByKind[k]; n > 0 {
			if !first {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s %d", k, n)
			first = false
		}
	}
	b.WriteString(")\n")
	m := r.Messages
	fmt.Fprintf(&b, "messages: sent %d, delivered %d, dropped %d, filtered %d, in flight %d, retransmissions %d\n",
		m.Sent, m.Delivered, m.Dropped, m.Filtered, m.InFlight, m.Retransmissions)
	if d := m.Datagrams; d != nil {
		fmt.Fprintf(&b, "datagrams: sent %d, delivered %d, lost %d, dropped %d, filtered %d, in flight %d\n",
			d.Sent, d.Delivered, d.Lost, d.Dropped, d.Filtered, d.InFlight)
	}
	if l := r.Links; l != nil {
		fmt.Fprintf(&b, "links: service %d B in %d messages, layer %d B in %d messages, refused %d, uplink wait mean %v max %v, downlink wait mean %v max %v\n",
			l.ServiceBytes, l.ServiceMessages, l.LayerBytes, l.LayerMessages, l.Refused,
			l.UplinkWaitMean, l.UplinkWaitMax, l.DownlinkWaitMean, l.DownlinkWaitMax)
	}
	fmt.Fprintf(&b, "transport errors %d, resets %d, churn leaves %d (%d silent), rejoins %d",
		r.TransportErrors, r.Resets, r.Churn.Leaves, r.Churn.SilentLeaves, r.Churn.Rejoins)
	if k := r.Breaks; k.Broken > 0 || k.Skipped > 0 {
		// Only runs with a break schedule say so: runs without print as
		// they always did.
		fmt.Fprintf(&b, ", connection breaks %d (%d skipped)", k.Broken, k.Skipped)
	}
	if n := r.Nemesis; n != nil {
		fmt.Fprintf(&b, ", crashes %d (%d restarted), partitions %d (%d heals), clock jumps %d, %d faults skipped",
			n.Crashes, n.Restarts, n.Partitions, n.Heals, n.ClockJumps, n.Skipped)
	}
	b.WriteString("\n")
	for _, s := range r.Safety {
		if s.ViolatedStates == 0 {
			fmt.Fprintf(&b, "safety %s: holds\n", s.Name)
			continue
		}
		fmt.Fprintf(&b, "safety %s: violated in %d state%s (%d episode%s), first at %v by %s\n",
			s.Name, s.ViolatedStates, plural(s.ViolatedStates), s.Episodes, plural(s.Episodes), s.FirstViolation.Round(time.Millisecond), s.FirstEvent)
	}
	for _, l := range r.Liveness {
		if l.Holds {
			fmt.Fprintf(&b, "liveness %s: holds at the end\n", l.Name)
		} else {
			fmt.Fprintf(&b, "liveness %s: fails at the end: %s\n", l.Name, l.Error)
		}
	}
	writeTimed(&b, r.Timed, r.VirtualDuration)
	writeHistory(&b, r.History)
	if s := r.Snapshots; s != nil {
		fmt.Fprintf(&b, "snapshots: %d gathered, %d failed, %d checkpoints, %d protocol messages\n",
			s.Gathers, s.Failures, s.Totals.Periodic+s.Totals.Forced+s.Totals.Requested, s.ProtocolMessages)
	}
	if s := r.Steering; s != nil {
		fmt.Fprintf(&b, "steering: %d rounds, %d states, %d predicted, %d filters installed (%d unhelpful), %d filter hits, %d vetoes, %d overrides, %.2f%% of %d actions changed\n",
			s.Rounds, s.StatesExplored, s.Predictions(), s.FiltersInstalled, s.FiltersUnhelpful, s.FilterHits, s.Vetoes, s.Overrides, 100*s.ChangedShare(), s.Events)
		if s.Walks > 0 {
			fmt.Fprintf(&b, "liveness search: %d walks, %d steps (in the states above), %d dead ends (global check: %d confirmed, %d retracted, %d pending; nodes' views: %d confirmed, %d retracted)\n",
				s.Walks, s.WalkSteps, s.DeadEnds, s.Global.Confirmed, s.Global.Retracted, s.Global.Pending, s.DeadEndsConfirmed, s.DeadEndsRetracted)
		}
		if s.Lifts > 0 {
			fmt.Fprintf(&b, "steering lifted for liveness: %s\n", s.LiftsLine())
		}
		if s.SafetyWalks > 0 {
			fmt.Fprintf(&b, "safety walks: %d walks, %d steps (in the states above), %d predictions the searches had not made\n",
				s.SafetyWalks, s.SafetyWalkSteps, s.SafetyWalkPredictions)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// plural is "s" unless n is one.
func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}
