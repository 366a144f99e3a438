package tool

import (
	"fmt"
	"io"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// printTimed prints the run's properties over time — each liveness and
// bounded property's availability and outages — and its history
// properties' verdicts, for a service that declares them.
func printTimed(w io.Writer, r emulation.Result) {
	if len(r.Timed) > 0 {
		printAvailability(w, r.Timed)
	}
	if len(r.History) > 0 {
		printHistoryVerdicts(w, r.History)
	}
}

// printAvailability prints each timed property's share of the run and
// its longest outage, names and kinds aligned.
func printAvailability(w io.Writer, timed []emulation.TimedResult) {
	fmt.Fprintln(w, "  over time — the share of the run each held, outages (longest):")
	width, kw := 0, 0
	kinds := make([]string, len(timed))
	for i, t := range timed {
		width = max(width, len(t.Name))
		kinds[i] = t.Kind
		if t.Bound > 0 {
			kinds[i] = fmt.Sprintf("%s %v", t.Kind, t.Bound)
		}
		kw = max(kw, len(kinds[i]))
	}
	for i, t := range timed {
		line := fmt.Sprintf("    %-*s %-*s %6.1f%%", width, t.Name, kw, kinds[i], 100*t.Availability)
		fmt.Fprintln(w, line+outageClause(t))
	}
}

// outageClause describes t's outages and the longest ("" for none).
func outageClause(t emulation.TimedResult) string {
	if t.Outages <= 0 {
		return ""
	}
	l := t.Longest
	s := fmt.Sprintf("  %d outages, longest %v from %s", t.Outages, l.Length.Round(time.Millisecond), clock(l.Start))
	if l.Ongoing {
		s += " (ongoing)"
	}
	if l.Error != "" {
		s += ": " + l.Error
	}
	return s
}

// printHistoryVerdicts prints each history property's verdict on the
// client operations of the whole run.
func printHistoryVerdicts(w io.Writer, history []emulation.HistoryResult) {
	fmt.Fprintln(w, "  history — the client operations of the whole run:")
	width := 0
	for _, h := range history {
		width = max(width, len(h.Name))
	}
	for _, h := range history {
		verdict := "holds"
		if !h.Holds {
			verdict = fmt.Sprintf("violated (first by the response at %s): %s", clock(h.FirstViolation), h.Error)
		}
		fmt.Fprintf(w, "    %-*s %d operations (%d open): %s\n", width, h.Name, h.Operations, h.Open, verdict)
	}
}
