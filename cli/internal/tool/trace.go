package tool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
)

// runTrace dispatches the trace subcommands.
func runTrace(cat *catalog, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "show" && args[0] != "debug") {
		return usagef("usage: crystalball trace show|debug [flags] FILE (FILE: the output of 'crystalball check --json', a prediction report of 'crystalball node|emulate --reports DIR', or a trace of 'crystalball emulate --trace FILE')")
	}
	f, file, err := parseTraceFlags(cat, args[0], args[1:], stderr)
	if err != nil {
		return err
	}
	tl, err := loadTimeline(cat, file, f.violation)
	if err != nil {
		return err
	}
	out := newTermSafe(stdout) // a report's text must not drive the terminal
	err = f.run(tl, out)
	return errors.Join(err, out.Flush())
}

// loadTimeline reads file — a check --json output, a prediction report or
// an emulation trace — and replays it.
func loadTimeline(cat *catalog, file string, which int) (*timeline, error) {
	if isEmulationTrace(file) {
		return readEmulationTrace(cat, file)
	}
	b, format, err := readFormatted(file)
	if err != nil {
		return nil, err
	}
	switch format {
	case report.PredictionFormat:
		return predictionTimeline(cat, file, b)
	case checkFormat, "": // check --json wrote no format before crystalball-check/1
		return checkTimeline(cat, file, b, which)
	}
	return nil, usagef("%s: unknown report format %s (this crystalball reads %q and %q, and emulation traces)", file, report.Quote(format), checkFormat, report.PredictionFormat)
}

// readFormatted reads a JSON document (readReport) and its "format" field
// ("" when it has none).
func readFormatted(file string) ([]byte, string, error) {
	b, err := readReport(file)
	if err != nil {
		return nil, "", err
	}
	var probe struct {
		Format string `json:"format"`
	}
	if err := report.Unmarshal(b, &probe); err != nil {
		return nil, "", usagef("%s: not a JSON report: %v", file, err)
	}
	return b, probe.Format, nil
}

// traceLimits bound what 'trace show' reads (the zero value: report's
// defaults); tests lower them to exercise the bounds with small files.
var traceLimits report.Limits

// readReport reads a report file within traceLimits: a file too large, or
// not a JSON object, is a usage error quoting at most a short prefix.
func readReport(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, usagef("%v", err)
	}
	defer f.Close()
	b, err := report.ReadDocument(f, traceLimits)
	if err != nil {
		return nil, usagef("%s: %v", file, err)
	}
	return b, nil
}

// lookupReported resolves the service a report names among cat's, with the
// flags it records; a report of a service the program does not serve is
// bad usage naming the services it does.
func lookupReported(cat *catalog, file, name, fix string, nodes int) (serviceRun, error) {
	if !cat.has(name) {
		return serviceRun{}, usagef("%s: a report of service %q, which this program does not serve (known: %s)", file, name, cat.list())
	}
	return cat.lookup(name, SplitList(fix), nodes)
}

// checkTimeline replays violation which (1 is the first) of a check
// --json output, or its liveness suspect (a walk check's report).
func checkTimeline(cat *catalog, file string, b []byte, which int) (*timeline, error) {
	co, rep, err := readCheckOutput(file, b, which)
	if err != nil {
		return nil, err
	}
	tl, err := replayCheckOutput(cat, file, co, rep)
	if err != nil {
		return nil, err
	}
	tl.head = []string{fmt.Sprintf("%s (%s), %d nodes, faults %s", co.Target, co.Options, co.Nodes, co.Faults)}
	if hasWalkSuspect(co) {
		if err := tl.withSuspect(co.Liveness); err != nil {
			return nil, usagef("%s: %v", file, err)
		}
	}
	tl.head = append(tl.head, violationLine(rep))
	return tl, nil
}

// replayCheckOutput replays rep, a violation of the check --json output
// co, on the model co describes (its service, fix, nodes and faults).
func replayCheckOutput(cat *catalog, file string, co checkOutput, rep consequence.ActorReport) (*timeline, error) {
	svc, err := lookupReported(cat, file, co.Target, co.Fix, co.Nodes)
	if err != nil {
		return nil, err
	}
	m, err := checkOutputModel(svc, co)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return replayWholeReport(file, m, rep)
}

// hasWalkSuspect reports whether co is a walk check's output whose one
// report is its liveness suspect, with a dead end.
func hasWalkSuspect(co checkOutput) bool {
	l := co.Liveness
	return l != nil && l.DeadEnd != nil && len(co.Reports) == 0
}

// replayWholeReport checks the whole report rep of file against m first
// (fingerprint and property error), then replays its path.
func replayWholeReport(file string, m *consequence.ActorModel, rep consequence.ActorReport) (*timeline, error) {
	if err := replayReport(m, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tl, err := replayTimeline(m, rep.Path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tl.rep = rep
	return tl, nil
}

// withSuspect adds a walk check's liveness suspect l to tl: the walks'
// verdict in the header, the dead end's critical step.
func (tl *timeline) withSuspect(l *livenessOutput) error {
	d := l.DeadEnd
	tl.head = append(tl.head, fmt.Sprintf("random walks: %d, live %d; suspect judged %s", l.Walks, l.Live, d.Verdict))
	if err := tl.withDeadEnd(d); err != nil {
		return err
	}
	if d.CriticalStep > 0 {
		tl.head = append(tl.head, fmt.Sprintf("dead end (%s): after step %d no walk reaches a state where every liveness property holds", d.Verdict, d.CriticalStep))
	}
	return nil
}

// violationLine is the line naming a report's violation.
func violationLine(rep consequence.ActorReport) string {
	return fmt.Sprintf("violation of %s (%s) at depth %d: %s", rep.Property, rep.Kind, rep.Depth, rep.Error)
}

// predictionTimeline replays a prediction report of 'node --reports' or
// 'emulate --reports' from the snapshot it holds.
func predictionTimeline(cat *catalog, file string, b []byte) (*timeline, error) {
	doc, err := report.ReadPrediction(bytes.NewReader(b), traceLimits)
	if err != nil {
		return nil, usagef("%s: not a prediction report: %v", file, err)
	}
	svc, err := lookupReported(cat, file, doc.Service, doc.Fix, doc.Nodes)
	if err != nil {
		return nil, err
	}
	m, err := doc.Model(svc.spec, svc.workload)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tl, err := replayWholeReport(file, m, doc.Report)
	if err != nil {
		return nil, err
	}
	tl.head = append(tl.head, predictionHead(&doc, m)...)
	if d := doc.Liveness; d != nil {
		if err := tl.withDeadEnd(d); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	tl.head = append(tl.head, violationLine(doc.Report))
	return tl, nil
}

// predictionHead is the header of a prediction report's timeline: who
// predicted it from which snapshot with which faults, its filter, its
// rank and its dead end.
func predictionHead(doc *report.Prediction, m *consequence.ActorModel) []string {
	first := fmt.Sprintf("%s (%s), predicted by %v (mode %s) from its snapshot of %v at cut %d, faults resets=%d silent=%v stale-connections=%v breaks=%d",
		doc.Service, doc.Options, doc.Node, doc.Mode, m.Nodes(), doc.Snapshot.CN, doc.Resets, doc.Silent, doc.StaleConnections, doc.Breaks)
	if doc.Refusals > 0 {
		first += fmt.Sprintf(" refusals=%d", doc.Refusals)
	}
	head := []string{first}
	if doc.Filter != "" {
		head = append(head, "filter: "+doc.Filter)
	}
	if l := doc.Likelihood; l != nil {
		head = append(head, fmt.Sprintf("rank %d among its round's predictions: %d faults, %d timers and calls, %d messages in flight at the snapshot, %d sent on the way (cost %g)",
			doc.Rank, l.Faults, l.Local, l.InFlight, l.Spawned, l.Cost))
	}
	if d := doc.Liveness; d != nil {
		head = append(head, fmt.Sprintf("dead end (%s): after step %d no walk reaches a state where every liveness property holds (%d of the round's %d walks did from the snapshot)",
			d.Verdict, d.CriticalStep, d.Live, d.Walks))
	}
	return head
}

// describeNode renders a node's service state and timers on one line.
func describeNode(g *consequence.GlobalState, id node.ID) string {
	st, _, ok := g.NodeState(id)
	if !ok {
		return id.String() + ": not in the state"
	}
	var timers []string
	for _, t := range st.Timers {
		timers = append(timers, t.Name)
	}
	slices.Sort(timers)
	s := fmt.Sprintf("%v: %s timers=%v", id, node.Summary(st.Service), timers)
	if p := g.Pending(id); len(p) > 0 {
		s += fmt.Sprintf(" pending=%d", len(p))
	}
	return s
}
