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
		fmt.Fprintln(w, "  over time — the share of the run each held, outages (longest):")
		width, kw := 0, 0
		kinds := make([]string, len(r.Timed))
		for i, t := range r.Timed {
			width = max(width, len(t.Name))
			kinds[i] = t.Kind
			if t.Bound > 0 {
				kinds[i] = fmt.Sprintf("%s %v", t.Kind, t.Bound)
			}
			kw = max(kw, len(kinds[i]))
		}
		for i, t := range r.Timed {
			line := fmt.Sprintf("    %-*s %-*s %6.1f%%", width, t.Name, kw, kinds[i], 100*t.Availability)
			if t.Outages > 0 {
				l := t.Longest
				line += fmt.Sprintf("  %d outages, longest %v from %s", t.Outages, l.Length.Round(time.Millisecond), clock(l.Start))
				if l.Ongoing {
					line += " (ongoing)"
				}
				if l.Error != "" {
					line += ": " + l.Error
				}
			}
			fmt.Fprintln(w, line)
		}
	}
	if len(r.History) > 0 {
		fmt.Fprintln(w, "  history — the client operations of the whole run:")
		width := 0
		for _, h := range r.History {
			width = max(width, len(h.Name))
		}
		for _, h := range r.History {
			verdict := "holds"
			if !h.Holds {
				verdict = fmt.Sprintf("violated (first by the response at %s): %s", clock(h.FirstViolation), h.Error)
			}
			fmt.Fprintf(w, "    %-*s %d operations (%d open): %s\n", width, h.Name, h.Operations, h.Open, verdict)
		}
	}
}
