package tool

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
)

// traceInput is what 'trace debug' reads its commands from; tests replace
// it with a script.
var traceInput io.Reader = os.Stdin

// traceFlags are the flags of 'trace show' and 'trace debug'.
type traceFlags struct {
	debug       bool // 'trace debug', or 'trace show -i'
	violation   int
	step, node  string
	diff, graph string
	out         string
	live        bool
}

// parseTraceFlags parses the flags of 'trace SUB' and its one FILE
// (before or after the flags).
func parseTraceFlags(cat *catalog, sub string, args []string, stderr io.Writer) (*traceFlags, string, error) {
	f := &traceFlags{debug: sub == "debug"}
	fs := newFlagSet("trace "+sub, stderr)
	fs.IntVar(&f.violation, "violation", 1, "which violation of a check --json file to show (1 is the first)")
	fs.StringVar(&f.step, "step", "", "print every node's state, field by field, after step N (0: the start; critical: a liveness report's critical step; end); with -i, the step to start at (default: the critical step of a liveness report, else 0)")
	fs.StringVar(&f.node, "node", "", "follow one node (e.g. n3): only its events (its timers and calls, deliveries to it) and its state")
	fs.StringVar(&f.diff, "diff", "", "print the field-level diff of the node states after steps A and B (A,B)")
	fs.BoolVar(&f.live, "live", false, "print the dead path against the nearest live path at the critical step, field by field (a liveness report; the default output includes it)")
	fs.StringVar(&f.graph, "graph", "", "write the event graph: text (a ladder diagram), svg (the web view's drawing, no other program needed) or dot (for Graphviz's dot)")
	fs.StringVar(&f.out, "out", "", "write the event graph to this file instead of standard output")
	interactive := fs.Bool("i", false, "debug interactively (as 'trace debug')")
	synopsis := "trace " + sub + " [flags] FILE"
	setUsage(fs, synopsis, "Replays a run step by step, as MaceMC's Mdb: FILE is the output of 'crystalball check --json' (a violation found from the initial state, or a walk check's liveness suspect), a prediction report written by 'crystalball node|emulate --reports DIR' (a violation predicted from a gathered snapshot), or a trace of 'crystalball emulate --trace FILE' (events only: it holds no node states). 'trace show' prints the path, or what the flags ask; 'trace debug' (or -i) reads Mdb commands from standard input (help lists them).")
	files, err := parseFlagsAndFiles(fs, args)
	if err != nil {
		return nil, "", err
	}
	if len(files) != 1 {
		return nil, "", usagef("want exactly one FILE")
	}
	f.debug = f.debug || *interactive
	if err := f.checkCombination(); err != nil {
		return nil, "", err
	}
	return f, files[0], nil
}

// parseFlagsAndFiles parses args into fs accepting files anywhere among
// the flags: the flag package stops at the first positional argument,
// so it parses on after it (until more than one file is seen).
func parseFlagsAndFiles(fs *flag.FlagSet, args []string) ([]string, error) {
	var files []string
	rest := args
	for {
		if startsWithOperand(rest) {
			files, rest = append(files, rest[0]), rest[1:]
			continue
		}
		if err := parseFlagsOnly(fs, rest); err != nil {
			return nil, err
		}
		if rest = fs.Args(); len(rest) == 0 || len(files) > 1 {
			return files, nil
		}
	}
}

// startsWithOperand reports whether args begins with a positional
// argument: one the flag package stops at, so "-" alone and "" too (left
// to parseFlagsOnly, they would come back in fs.Args for ever).
func startsWithOperand(args []string) bool {
	return len(args) > 0 && (len(args[0]) < 2 || args[0][0] != '-')
}

// checkCombination checks --graph's format and the flags that need or
// exclude others.
func (f *traceFlags) checkCombination() error {
	return FirstBrokenRule(
		UsageRule{!slices.Contains([]string{"", "text", "dot", "svg"}, f.graph), usagef("--graph %s: want text, svg or dot", quoteShort(f.graph))},
		UsageRule{f.out != "" && f.graph == "", usagef("--out needs --graph")},
		UsageRule{f.debug && AnyConditionHolds(f.diff != "", f.live, f.graph != ""),
			usagef("--diff, --live and --graph are commands of the interactive loop (diff, live, graph): not with 'trace debug' or -i")},
	)
}

// run applies the flags to tl: the Mdb loop, or what 'trace show' prints.
func (f *traceFlags) run(tl *timeline, stdout io.Writer) error {
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	d := &mdb{tl: tl, w: w, cur: tl.critical}
	if err := f.position(d); err != nil {
		return err
	}
	if f.drawingOnly() {
		return d.graph(w, f.graph) // the drawing alone, for a pipe into dot or a file
	}
	for _, l := range tl.head {
		fmt.Fprintln(w, l)
	}
	if f.debug {
		return f.debugLoop(d, w)
	}
	return f.show(d)
}

// position applies --node and --step to d and checks --diff's range.
func (f *traceFlags) position(d *mdb) error {
	if f.node != "" {
		id, err := d.parseNode(f.node)
		if err != nil {
			return usagef("--node: %v", err)
		}
		d.only = id
	}
	if f.step != "" {
		n, err := d.parseStep(f.step)
		if err != nil {
			return usagef("--step: %v", err)
		}
		d.cur = n
	}
	return f.checkDiffRange(d)
}

// checkDiffRange checks that --diff (if given) names two steps of d.
func (f *traceFlags) checkDiffRange(d *mdb) error {
	if f.diff == "" {
		return nil
	}
	if _, _, err := d.parseRange(f.diff); err != nil {
		return usagef("--diff: %v", err)
	}
	return nil
}

// drawingOnly reports whether the output is the DOT or SVG drawing alone,
// to standard output.
func (f *traceFlags) drawingOnly() bool {
	return (f.graph == "dot" || f.graph == "svg") && f.out == ""
}

// debugLoop runs the interactive Mdb loop on d, reading traceInput.
func (f *traceFlags) debugLoop(d *mdb, w *bufio.Writer) error {
	fmt.Fprintf(w, "%d steps; 'help' lists the commands\n", len(d.tl.steps))
	d.where()
	if err := w.Flush(); err != nil {
		return err
	}
	return d.repl(&flushReader{traceInput, w})
}

// show prints what 'trace show' was asked: the graph, a step's states, a
// diff, the live comparison; or, with none of them, the path (and a
// liveness report's comparison with its nearest live path).
func (f *traceFlags) show(d *mdb) error {
	if !AnyConditionHolds(f.graph != "", f.step != "", f.diff != "", f.live) {
		return f.showPath(d)
	}
	return firstFailingStep(
		func() error { return f.showGraph(d) },
		func() error { return f.showStep(d) },
		func() error { return f.showDiff(d) },
		func() error { return f.showLive(d) },
	)
}

// showGraph writes the event graph --graph asks for (none without it).
func (f *traceFlags) showGraph(d *mdb) error {
	if f.graph == "" {
		return nil
	}
	return f.writeGraph(d)
}

// showStep prints every node's state after the --step step (none
// without it).
func (f *traceFlags) showStep(d *mdb) error {
	if f.step == "" {
		return nil
	}
	if err := d.prepare(d.cur); err != nil {
		return err
	}
	d.where()
	return d.states(d.cur)
}

// showDiff prints the --diff diff (none without it).
func (f *traceFlags) showDiff(d *mdb) error {
	if f.diff == "" {
		return nil
	}
	a, b, _ := d.parseRange(f.diff) // checked by run
	return d.diff(a, b)
}

// showLive prints the --live comparison (none without it).
func (f *traceFlags) showLive(d *mdb) error {
	if !f.live {
		return nil
	}
	if err := d.live(); err != nil {
		return usagef("--live: %v", err)
	}
	return nil
}

// showPath prints the path, the client history and, for a liveness
// report with a nearest live path, one comparison of the dead path with
// it: the field-level one --live prints.
func (f *traceFlags) showPath(d *mdb) error {
	d.listing()
	printHistory(d.w, d.tl) // serve_history.go
	if d.tl.dead != nil && d.tl.critical > 0 && d.tl.live != nil {
		return d.live()
	}
	return nil
}

// writeGraph writes the event graph where --out says.
func (f *traceFlags) writeGraph(d *mdb) error {
	if f.out == "" {
		return d.graph(d.w, f.graph)
	}
	out, err := os.Create(f.out)
	if err != nil {
		return usagef("--out: %v", err)
	}
	bw := bufio.NewWriter(out)
	err = d.graph(bw, f.graph)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", f.out, err)
	}
	fmt.Fprintf(d.w, "wrote the event graph (%s) to %s\n", f.graph, f.out)
	return nil
}

// flushReader flushes w before every read, so the prompt shows before the
// loop waits for a command.
type flushReader struct {
	r io.Reader
	w *bufio.Writer
}

func (f *flushReader) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}
