package steering

import (
	"fmt"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// String renders the prediction on one line: the property, whether the
// path was replayed from an earlier round, the filter that stops it at
// this node (or "no filter"), and the path, e.g.
//
//	ChildrenSiblingsDisjoint (filter n9: drop+break randtree.Join from n13): n13 reset silent; n13 app randtree.JoinOverlay; ...
func (p Prediction) String() string {
	var b strings.Builder
	b.WriteString(p.Property)
	b.WriteString(" (")
	if c := p.Critical; c != nil {
		fmt.Fprintf(&b, "dead end %v at step %d, ", c.Verdict, c.Step+1)
	}
	if p.Replayed {
		b.WriteString("replayed, ")
	}
	if p.Filter != nil {
		b.WriteString("filter " + p.Filter.String())
	} else {
		b.WriteString("no filter")
	}
	b.WriteString("):")
	critical := -1
	if c := p.Critical; c != nil {
		critical = c.Step
	}
	writeReportPath(&b, p.Report.Path, critical)
	return b.String()
}

// writeReportPath writes the path's steps as text, the step at index
// critical (-1: none) marked.
func writeReportPath(b *strings.Builder, path []consequence.ActionRecord, critical int) {
	for i, s := range path {
		if i > 0 {
			b.WriteString(";")
		}
		b.WriteString(" " + s.Text)
		if i == critical {
			b.WriteString(" [critical]")
		}
	}
}

// String renders the round: its snapshot, the states it explored, then a
// line per prediction and the filters it installs.
func (r *RoundReport) String() string {
	if r == nil {
		return "no round"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "round at %v cut %d over %v: %d states, %d predicted, %d filters, %d unhelpful", r.Gatherer, r.CN, r.Members, r.States, len(r.Predictions), len(r.Installed), r.Unhelpful)
	if l := r.Liveness; l != nil {
		writeLivenessOutcome(&b, l)
	}
	if r.Reused {
		b.WriteString(" (reused)")
	}
	if len(r.Present) > 0 {
		fmt.Fprintf(&b, "; already violated: %s", strings.Join(r.Present, ", "))
	}
	writeRoundLines(&b, r)
	return b.String()
}

// writeLivenessOutcome writes the summary of a round's liveness search.
func writeLivenessOutcome(b *strings.Builder, l *LivenessOutcome) {
	fmt.Fprintf(b, "; %d walks (%d live, %d suspects: %d undecided, %d at a fault, %d open; %d steps)", l.Walks, l.Live, l.Suspects, l.Undecided, l.FaultDeadEnds, l.Open, l.Steps)
	if len(l.DeadAtStart) > 0 {
		fmt.Fprintf(b, ", dead at the start: %s", strings.Join(l.DeadAtStart, ", "))
	}
	if l.BudgetSpent {
		b.WriteString(", step budget spent")
	}
	if l.Err != nil {
		fmt.Fprintf(b, ", stopped: %v", l.Err)
	}
}

// writeRoundLines writes a line per prediction of the round, then one
// per filter it installs.
func writeRoundLines(b *strings.Builder, r *RoundReport) {
	for _, p := range r.Predictions {
		b.WriteString("\n  predicted " + p.String())
	}
	for _, f := range r.Installed {
		b.WriteString("\n  filter " + f.String())
	}
}
