package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// The classes of a miss: a killed mutant that no part of the toolchain
// caught before it bit. The first word says when it bit, the rest why
// the offline check and (for a later bite) the rounds did not catch it.
const (
	// missOriginalsFinding: the offline check found a violation, but the
	// original's check finds the same property broken, so the finding
	// does not tell the mutant from the service it came from.
	missOriginalsFinding = "offline finds only the original's finding"
	// missSearchCompleted: breadth-first search explored every reachable
	// state of the model and the liveness walks found no dead end: the
	// bug is outside the model (its faults, timing or workload).
	missSearchCompleted = "offline search completed, nothing found"
	// missSearchBudget: the search ran out of its state budget (or the
	// walks of their steps) before it reached the bug.
	missSearchBudget = "offline search out of budget, nothing found"
	// missSearchError: the model could not be explored (a
	// nondeterministic handler, say).
	missSearchError = "offline search failed"
	// missLate: the rounds predicted a killing property, after the bite.
	missLate = "predicted after the bite"
	// missUnpredicted: no round predicted a killing property.
	missUnpredicted = "not predicted"
)

// missClass is the class of a killed mutant's miss ("" when it is not a
// miss): "at start: " or "later: " and the offline check's reason, with,
// for a later bite, the rounds' reason after it.
func (o outcome) missClass() string {
	if !o.Killed || o.Crash != "" || o.CaughtBeforeBite {
		return ""
	}
	why := o.offlineMiss()
	if o.AtStart {
		return "at start: " + why
	}
	online := missUnpredicted
	if o.Predicted {
		online = missLate
	}
	return "later: " + why + "; " + online
}

// offlineMiss is why the offline check did not catch o.
func (o outcome) offlineMiss() string {
	switch {
	case o.Offline.Found:
		return missOriginalsFinding
	case o.Offline.Stop == consequence.StopCompleted.String():
		return missSearchCompleted
	case strings.HasPrefix(o.Offline.Stop, "error:"):
		return missSearchError
	}
	return missSearchBudget
}

// missTable prints the misses by class, most frequent first.
func missTable(w io.Writer, byMiss map[string]int) {
	if len(byMiss) == 0 {
		return
	}
	classes := make([]string, 0, len(byMiss))
	for c := range byMiss {
		classes = append(classes, c)
	}
	sort.Slice(classes, func(i, j int) bool {
		if byMiss[classes[i]] != byMiss[classes[j]] {
			return byMiss[classes[i]] > byMiss[classes[j]]
		}
		return classes[i] < classes[j]
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "killed, not caught before the bite, by class\truns\n")
	for _, c := range classes {
		fmt.Fprintf(tw, "%s\t%d\n", c, byMiss[c])
	}
	tw.Flush()
}
