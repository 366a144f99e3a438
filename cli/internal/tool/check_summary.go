package tool

import (
	"fmt"
	"io"
	"strings"
)

// The human summary of 'check' (without --json): the header, then the
// random walks' suspect, or the search's figures and violations.

func printCheckSummary(w io.Writer, o checkOutput) {
	fmt.Fprintf(w, "%s (%s), %d nodes, strategy %s, seed %d", o.Target, o.Options, o.Nodes, o.Strategy, o.Seed)
	fmt.Fprint(w, summaryClause(o.Faults != "", ", faults %s", o.Faults))
	fmt.Fprintln(w)
	printWalkWeights(w, o.Weights)
	if o.Liveness != nil {
		printLivenessSummary(w, o)
		return
	}
	printSearchFigures(w, o)
	printViolations(w, o)
}

// printWalkWeights prints the walk weights --weights auto derived, in
// weightKinds' order (nothing without them).
func printWalkWeights(w io.Writer, weights map[string]float64) {
	if len(weights) == 0 {
		return
	}
	fmt.Fprintf(w, "walk weights (auto, from the emulated service):")
	for _, k := range weightKinds {
		if x, ok := weights[k.name]; ok {
			fmt.Fprintf(w, " %s=%.3g", k.name, x)
		}
	}
	fmt.Fprintln(w)
}

// printLivenessSummary prints the random walks' outcome: how many were
// live, and the suspect with its verdict and path.
func printLivenessSummary(w io.Writer, o checkOutput) {
	l := o.Liveness
	fmt.Fprintf(w, "random walks: %d, live %d", l.Walks, l.Live)
	fmt.Fprint(w, summaryClause(l.Periphery > 0, " (half from %d states at depth %d of a bounded search)", l.Periphery, l.PeripheryDepth))
	fmt.Fprintln(w)
	fmt.Fprint(w, summaryClause(o.Stop != "", "stopped: %s\n", o.Stop))
	if l.Suspect == nil {
		fmt.Fprintln(w, "no suspected liveness violation")
		return
	}
	fmt.Fprintf(w, "suspected liveness violation after %d steps: %s\n", len(l.Suspect), strings.Join(l.Failing, "; "))
	fmt.Fprint(w, summaryClause(l.C2 > 0, "(%d of %d suspects judged C2)\n", l.C2, l.Suspects))
	fmt.Fprintf(w, "verdict %s", l.Verdict)
	fmt.Fprint(w, summaryClause(l.Critical >= 0, ": critical transition at step %d: %s", l.Critical+1, l.Action))
	fmt.Fprintln(w)
	printNumberedSteps(w, l.Suspect)
	printDirectedRun(w, l.Confirmed, l.Critical+1)
}

// printNumberedSteps prints a path's steps, numbered from 1.
func printNumberedSteps(w io.Writer, steps []string) {
	for i, a := range steps {
		fmt.Fprintf(w, "  %3d. %s\n", i+1, a)
	}
}

// printSearchFigures prints what a search did and cost: its stop, the
// states it explored and its speed and memory.
func printSearchFigures(w io.Writer, o checkOutput) {
	fmt.Fprintf(w, "stopped: %s\n", o.Stop)
	fmt.Fprintf(w, "states: %d unique, %d generated, %d pruned", o.Unique, o.Generated, o.Pruned)
	fmt.Fprint(w, summaryClause(o.Slept > 0, ", %d slept (partial-order reduction)", o.Slept))
	fmt.Fprint(w, summaryClause(o.SleepSetsOff > 0, ", sleep sets off from depth %d (they did not pay)", o.SleepSetsOff))
	fmt.Fprintf(w, "; max depth %d\n", o.Depth)
	fmt.Fprintf(w, "speed: %.0f unique states/s over %.2fs; memory %d B (%.1f B/state visited)", o.StatesPerSecond, o.WallSeconds, o.MemoryBytes, o.BytesPerState)
	fmt.Fprint(w, summaryClause(o.PeakMemoryBytes > 0, "; heap peak %d B", o.PeakMemoryBytes))
	fmt.Fprintf(w, "; omission probability %.1e\n", o.OmissionProbability)
}

// printViolations prints the search's violations, each with its path and
// its directed run's verdict (--confirm).
func printViolations(w io.Writer, o checkOutput) {
	if len(o.Violations) == 0 {
		fmt.Fprintln(w, "no violation found")
		return
	}
	for i, v := range o.Violations {
		fmt.Fprintf(w, "VIOLATION %s (%s) at depth %d: %s\n", v.Property, v.Kind, v.Depth, v.Error)
		printNumberedSteps(w, v.Path)
		if i < len(o.Confirmed) {
			printDirectedRun(w, &o.Confirmed[i], len(v.Path))
		}
	}
}
