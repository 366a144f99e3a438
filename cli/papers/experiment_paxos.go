package papers

import (
	"bufio"
	"flag"
	"fmt"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/experiments"
)

// paxosFlags are the flags of 'experiment paxos'.
type paxosFlags struct {
	bug, tracePath                         string
	runs, maxStates, resets, workers, only int
	seed                                   uint64
	snapEvery, lastKnown, maxGap           *time.Duration
	asJSON                                 bool
	quiet                                  *bool
}

// register defines f's flags on fs.
func (f *paxosFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.bug, "bug", "", "the injected bug: 1 (the leader proposes the last Promise's value) or 2 (promises are not kept across a reset)")
	fs.IntVar(&f.runs, "runs", experiments.DefaultPaxosRuns, "runs; each draws the time between the rounds uniformly from [0, --max-gap)")
	fs.Uint64Var(&f.seed, "seed", experiments.DefaultPaxosSeed, "seed of the experiment; run r uses a seed derived from it and r")
	fs.IntVar(&f.maxStates, "max-states", experiments.DefaultPaxosMaxStates, "unique states per search of a steering round")
	fs.IntVar(&f.resets, "resets", experiments.DefaultPaxosResets, "node resets the steering controllers explore along a path")
	f.snapEvery = tool.DurationFlag(fs, "snapshots", experiments.DefaultPaxosSnapshots, "checkpoint and gather interval of every node")
	f.lastKnown = tool.DurationFlag(fs, "last-known", experiments.DefaultPaxosLastKnown, "a member a gather cannot reach enters steering rounds and the immediate check frozen at its last checkpoint seen at most this long before (0: left out, as in the paper)")
	f.maxGap = tool.DurationFlag(fs, "max-gap", experiments.DefaultPaxosMaxGap, "upper bound of the time between the rounds (the paper: 60s)")
	fs.IntVar(&f.workers, "workers", runtime.GOMAXPROCS(0), "runs emulated in parallel (the results do not depend on it)")
	fs.IntVar(&f.only, "run", -1, "run only this run of the experiment (0-based, as per_run[].run numbers them): the same seed and gap as in the full experiment")
	fs.StringVar(&f.tracePath, "trace", "", "with --run, write the per-event trace of the steered configuration (steering rounds, predictions, filters, interventions) to this file")
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON object instead of the table")
	f.quiet = tool.QuietFlag(fs)
}

// bugName is the experiment's name of --bug: "bug1" for 1 or bug1.
func (f *paxosFlags) bugName() string { return "bug" + strings.TrimPrefix(f.bug, "bug") }

// check checks the flags, in the order their errors are reported.
func (f *paxosFlags) check() error {
	return tool.FirstNonNilError(
		tool.FirstBrokenRule(
			tool.BrokenIf(!slices.Contains([]string{"bug1", "bug2"}, f.bugName()), tool.UsageErrorf("--bug must be 1 or 2")),
			tool.BrokenIf(tool.AnyConditionHolds(f.runs <= 0, f.maxStates <= 0, *f.snapEvery <= 0, f.workers <= 0, *f.maxGap < 0, f.resets < 0, *f.lastKnown < 0),
				tool.UsageErrorf("--runs, --max-states, --snapshots and --workers must be positive, --max-gap, --resets and --last-known not negative")),
		),
		tool.CheckInterval("snapshots", *f.snapEvery),
		tool.FirstBrokenRule(
			tool.BrokenIf(f.only < -1, tool.UsageErrorf("--run must be a run number (0 or more)")),
			tool.BrokenIf(f.tracePath != "" && f.only < 0, tool.UsageErrorf("--trace needs --run: it traces one run")),
		),
	)
}

// config checks the flags and builds the experiment's configuration.
func (f *paxosFlags) config() (experiments.PaxosConfig, error) {
	if err := f.check(); err != nil {
		return experiments.PaxosConfig{}, err
	}
	cfg := experiments.PaxosConfig{Bug: f.bugName(), Runs: f.runs, Seed: f.seed, MaxStates: f.maxStates, Resets: noneIfZero(f.resets),
		Snapshots: *f.snapEvery, LastKnown: noneIfZero(*f.lastKnown), MaxGap: noneIfZero(*f.maxGap), Workers: f.workers}
	if f.only >= 0 {
		cfg.Indices = []int{f.only}
	}
	return cfg, nil
}

func runPaxosExperiment(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment paxos", "experiment paxos --bug 1|2 [flags]",
		"The paper's §5.4.2 (Fig. 13/14): Figure 13's two rounds on 3 Paxos nodes, with execution steering and the immediate safety check on every node, with the check alone, and without CrystalBall.", stderr)
	var f paxosFlags
	f.register(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	cfg, err := f.config()
	if err != nil {
		return err
	}
	trace, closeTrace, err := createPaxosTrace(f.tracePath, stderr)
	if err != nil {
		return err
	}
	defer closeTrace()
	cfg.Trace = trace
	progress, endProgress := runProgress(stderr, f.asJSON, *f.quiet, "experiment paxos")
	defer endProgress()
	cfg.Progress = progress
	ctx, stop := interruptible()
	defer stop()
	res, err := experiments.Paxos(ctx, cfg)
	if err != nil {
		return err
	}
	return printResult(stdout, f.asJSON, res)
}

// createPaxosTrace creates the --trace file (path; none, a nil writer,
// for ""), buffered; closeTrace flushes and closes it, reporting a failed
// flush on stderr.
func createPaxosTrace(path string, stderr io.Writer) (trace io.Writer, closeTrace func(), err error) {
	if path == "" {
		return nil, func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, nil, fmt.Errorf("experiment paxos: %w", err)
	}
	w := bufio.NewWriter(f)
	return w, func() {
		if err := w.Flush(); err != nil {
			fmt.Fprintf(stderr, "experiment paxos: writing %s: %v\n", path, err)
		}
		f.Close()
	}, nil
}
