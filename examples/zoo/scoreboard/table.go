package scoreboard

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"
)

// String renders the scoreboard for a person: the summary table (one row
// per case, then the total), then one line per case, seed and variant
// with the runs' own figures.
func (r Result) String() string {
	var b strings.Builder
	seeds := make([]string, len(r.Seeds))
	for i, s := range r.Seeds {
		seeds[i] = fmt.Sprint(s)
	}
	fmt.Fprintf(&b, "zoo scoreboard: seeds %s; faults from %v; in time = predicted by %v of emulated time\n\n",
		strings.Join(seeds, ","), r.Warmup, r.Horizon)
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "case\tproperty\tpredicted\tin time\toccurred off\toccurred steer\tprevented\tfalse pos.\ttwin viol.\tliveness lost")
	for _, c := range r.Cases {
		fmt.Fprintf(w, "%s\t%s\t%s\n", c.Name, c.Property, c.Summary.row())
	}
	fmt.Fprintf(w, "total\t\t%s\n", r.Total.row())
	w.Flush()
	b.WriteString("\n")
	for _, c := range r.Cases {
		for _, s := range c.Seeds {
			fmt.Fprintf(&b, "%s seed %d bug:  %s\n", c.Name, s.Seed, s.Bug.line())
			fmt.Fprintf(&b, "%s seed %d twin: %s\n", c.Name, s.Seed, s.Twin.line())
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// row is s's cells of the summary table.
func (s Summary) row() string {
	frac := func(n, of int) string { return fmt.Sprintf("%d/%d", n, of) }
	prevented := "-"
	if s.OccurredOff > 0 {
		prevented = fmt.Sprintf("%d/%d (%.0f%%)", s.Prevented, s.OccurredOff, 100*s.PreventedShare())
	}
	return strings.Join([]string{
		frac(s.Predicted, s.Runs),
		frac(s.PredictedInTime, s.Runs),
		fmt.Sprintf("%s (%d states)", frac(s.OccurredOff, s.Runs), s.ViolatedStatesOff),
		fmt.Sprintf("%s (%d states)", frac(s.OccurredSteer, s.Runs), s.ViolatedStatesSteer),
		prevented,
		frac(s.FalsePositives, s.Runs),
		frac(s.TwinViolations, 3*s.Runs),
		frac(s.LivenessLost, 2*s.Runs),
	}, "\t")
}

// line is one variant's three runs on a line.
func (v Variant) line() string {
	d := v.Debug
	pred := "nothing predicted"
	if d.Predicted {
		pred = fmt.Sprintf("predicted at %s (%d rounds)", clock(d.FirstPrediction), d.PredictingRounds)
	}
	if d.OtherPredictions > 0 {
		pred += fmt.Sprintf(", %d other predictions", d.OtherPredictions)
	}
	return fmt.Sprintf("off %s | debug %s, %s | steer %s, %d filter hits, %d vetoes",
		v.Off.violations(), pred, d.violations(), v.Steer.violations(), v.Steer.FilterHits, v.Steer.Vetoes) + v.starved()
}

// starved names the liveness properties failing at the end of the off and
// steer runs, if any.
func (v Variant) starved() string {
	if len(v.Off.Starved) == 0 && len(v.Steer.Starved) == 0 {
		return ""
	}
	return fmt.Sprintf(" | failing at the end: off %v, steer %v", v.Off.Starved, v.Steer.Starved)
}

// violations says how r violated the case's property (and others).
func (r RunResult) violations() string {
	s := "no violation"
	if r.Violations > 0 {
		s = fmt.Sprintf("%d %s violated from %s", r.Violations, plural(r.Violations, "state"), clock(r.FirstViolation))
	}
	if r.OtherViolations > 0 {
		s += fmt.Sprintf(" (+%d of other properties)", r.OtherViolations)
	}
	return s
}

// clock renders virtual time since the start as m:ss.mmm.
func clock(d time.Duration) string {
	return fmt.Sprintf("%d:%02d.%03d", d/time.Minute, (d%time.Minute)/time.Second, (d%time.Second)/time.Millisecond)
}

// plural returns word, with an s unless n is 1.
func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
