package cli

import (
	"bytes"
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
	if len(args) == 0 || args[0] != "show" {
		return usagef("usage: crystalball trace show [--violation N] FILE (FILE: the output of 'crystalball check --json', or a prediction report of 'crystalball node|emulate --reports DIR')")
	}
	fs := newFlagSet("trace show", stderr)
	which := fs.Int("violation", 1, "which violation of the file to show (1 is the first)")
	setUsage(fs, "trace show [--violation N] FILE", "Replays a violation step by step, printing each step's changed node states. FILE is the output of 'crystalball check --json' (a violation found from the initial state), or a prediction report written by 'crystalball node --reports DIR' or 'crystalball emulate --reports DIR' (a violation predicted from a gathered snapshot).")
	// Accept the file before or after the flags.
	rest := args[1:]
	var file string
	if len(rest) > 0 && len(rest[0]) > 0 && rest[0][0] != '-' {
		file, rest = rest[0], rest[1:]
	}
	if err := parseFlagsOnly(fs, rest); err != nil {
		return err
	}
	if file == "" && fs.NArg() == 1 {
		file = fs.Arg(0)
	} else if fs.NArg() > 0 || file == "" {
		return usagef("want exactly one FILE")
	}
	b, err := readReport(file)
	if err != nil {
		return err
	}
	var probe struct {
		Format string `json:"format"`
	}
	if err := report.Unmarshal(b, &probe); err != nil {
		return usagef("%s: not a JSON report: %v", file, err)
	}
	switch probe.Format {
	case report.PredictionFormat:
		return showPrediction(cat, file, b, stdout)
	case checkFormat, "": // check --json wrote no format before crystalball-check/1
		return showCheck(cat, file, b, *which, stdout)
	}
	return usagef("%s: unknown report format %s (this crystalball reads %q and %q)", file, report.Quote(probe.Format), checkFormat, report.PredictionFormat)
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
	return cat.lookup(name, splitList(fix), nodes)
}

// showCheck replays violation which (1 is the first) of a check --json
// output.
func showCheck(cat *catalog, file string, b []byte, which int, stdout io.Writer) error {
	co, rep, err := readCheckOutput(file, b, which)
	if err != nil {
		return err
	}
	svc, err := lookupReported(cat, file, co.Target, co.Fix, co.Nodes)
	if err != nil {
		return err
	}
	m, err := serviceModel(svc, co.Nodes, co.Seed, consequence.Faults{Resets: co.Resets, SilentResets: co.Silent, Breaks: co.Breaks, Drops: co.Drops})
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	// Check the whole report first (fingerprint and property error).
	if _, _, err := m.ReplayReport(rep, m.Properties()); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(stdout, "%s (%s), %d nodes, faults %s\n", co.Target, co.Options, co.Nodes, co.Faults)
	return printSteps(stdout, m, rep, 0)
}

// showPrediction replays a prediction report of 'node --reports' or
// 'emulate --reports' from the snapshot it holds.
func showPrediction(cat *catalog, file string, b []byte, stdout io.Writer) error {
	doc, err := report.ReadPrediction(bytes.NewReader(b), traceLimits)
	if err != nil {
		return usagef("%s: not a prediction report: %v", file, err)
	}
	svc, err := lookupReported(cat, file, doc.Service, doc.Fix, doc.Nodes)
	if err != nil {
		return err
	}
	m, err := doc.Model(svc.spec, svc.workload)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	if _, _, err := m.ReplayReport(doc.Report, m.Properties()); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Fprintf(stdout, "%s (%s), predicted by %v (mode %s) from its snapshot of %v at cut %d, faults resets=%d silent=%v stale-connections=%v breaks=%d\n",
		doc.Service, doc.Options, doc.Node, doc.Mode, m.Nodes(), doc.Snapshot.CN, doc.Resets, doc.Silent, doc.StaleConnections, doc.Breaks)
	if doc.Filter != "" {
		fmt.Fprintf(stdout, "filter: %s\n", doc.Filter)
	}
	if l := doc.Likelihood; l != nil {
		fmt.Fprintf(stdout, "rank %d among its round's predictions: %d faults, %d timers and calls, %d messages in flight at the snapshot, %d sent on the way (cost %g)\n",
			doc.Rank, l.Faults, l.Local, l.InFlight, l.Spawned, l.Cost)
	}
	critical := 0
	if d := doc.Liveness; d != nil {
		critical = d.CriticalStep // within the path: ReadPrediction checked
		fmt.Fprintf(stdout, "dead end (%s): after step %d no walk reaches a state where every liveness property holds (%d of the round's %d walks did from the snapshot)\n",
			d.Verdict, d.CriticalStep, d.Live, d.Walks)
	}
	if err := printSteps(stdout, m, doc.Report, critical); err != nil {
		return err
	}
	if doc.Liveness != nil {
		if err := printLiveDiff(stdout, m, doc.Report.Path, doc.Liveness); err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
	}
	return nil
}

// printLiveDiff prints MaceMC's Mdb comparison of a dead end: at the
// critical step, the step the nearest live path took instead, and the
// node states after each where they differ; then how long the live path
// took to reach a live state.
func printLiveDiff(stdout io.Writer, m *consequence.ActorModel, dead []consequence.ActionRecord, d *report.DeadEnd) error {
	k := d.CriticalStep - 1
	if len(d.LivePath) < k {
		return fmt.Errorf("the nearest live path has %d steps, fewer than the %d before the critical step", len(d.LivePath), k)
	}
	if len(d.LivePath) == k {
		if _, err := replayRecords(m, d.LivePath); err != nil {
			return fmt.Errorf("nearest live path: %w", err)
		}
		fmt.Fprintf(stdout, "nearest live path: the first %d steps; the state they reach is live (every liveness property holds), and step %d leaves it for good\n", k, d.CriticalStep)
		return nil
	}
	before, err := replayRecords(m, d.LivePath[:k])
	if err != nil {
		return fmt.Errorf("nearest live path: %w", err)
	}
	deadAfter, err := replayRecords(m, dead[:k+1])
	if err != nil {
		return err
	}
	liveAfter, err := replayRecords(m, d.LivePath[:k+1])
	if err != nil {
		return fmt.Errorf("nearest live path: %w", err)
	}
	if _, err := replayRecords(m, d.LivePath); err != nil {
		return fmt.Errorf("nearest live path: %w", err)
	}
	fmt.Fprintf(stdout, "nearest live path: the same first %d steps, then at step %d\n", k, d.CriticalStep)
	fmt.Fprintf(stdout, "  dead: %s\n  live: %s\n", dead[k].Text, d.LivePath[k].Text)
	fmt.Fprintln(stdout, "  states after the step, where they differ (dead / live):")
	same := true
	for _, id := range before.Nodes() {
		if x, y := describeNode(deadAfter, id), describeNode(liveAfter, id); x != y {
			fmt.Fprintf(stdout, "    dead %s\n    live %s\n", x, y)
			same = false
		}
	}
	if same {
		fmt.Fprintln(stdout, "    (the node states agree: the difference is in messages in flight or pending calls)")
	}
	fmt.Fprintf(stdout, "  the live path reaches a live state %d steps later\n", len(d.LivePath)-k-1)
	return nil
}

// replayRecords replays recorded actions from m's start.
func replayRecords(m *consequence.ActorModel, recs []consequence.ActionRecord) (*consequence.GlobalState, error) {
	g := m.Start()
	for i, rec := range recs {
		a, err := m.Action(rec)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		next, ok := m.Next(g, a)
		if !ok {
			return nil, fmt.Errorf("step %d (%v) is not enabled", i+1, a)
		}
		g = next
	}
	return g, nil
}

// printSteps prints a replayed violation: the start state, then every step
// with the node states it changed. Step critical (1-based; 0: none) is
// marked as the critical transition of a dead end.
func printSteps(stdout io.Writer, m *consequence.ActorModel, rep consequence.ActorReport, critical int) error {
	fmt.Fprintf(stdout, "violation of %s (%s) at depth %d: %s\n", rep.Property, rep.Kind, rep.Depth, rep.Error)
	g := m.Start()
	fmt.Fprintln(stdout, "start:")
	for _, id := range g.Nodes() {
		fmt.Fprintf(stdout, "    %s\n", describeNode(g, id))
	}
	for i, rec := range rep.Path {
		a, err := m.Action(rec)
		if err != nil {
			return err
		}
		next, ok := m.Next(g, a)
		if !ok {
			return fmt.Errorf("step %d (%v) is not enabled", i+1, a)
		}
		mark := ""
		if i+1 == critical {
			mark = "   <- critical transition"
		}
		fmt.Fprintf(stdout, "%3d. %s%s\n", i+1, a, mark)
		for _, id := range next.Nodes() {
			if before, after := describeNode(g, id), describeNode(next, id); before != after {
				fmt.Fprintf(stdout, "    %s\n", after)
			}
		}
		if c := next.Crash(); c != nil {
			fmt.Fprintf(stdout, "    crash: %v\n", c)
		}
		g = next
	}
	return nil
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
	s := fmt.Sprintf("%v: %v timers=%v", id, st.Service, timers)
	if p := g.Pending(id); len(p) > 0 {
		s += fmt.Sprintf(" pending=%d", len(p))
	}
	return s
}
