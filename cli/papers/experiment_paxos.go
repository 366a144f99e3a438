package papers

import (
	"bufio"
	"fmt"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/seed6eee2ec7/crystalball/experiments"
)

func runPaxosExperiment(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment paxos", "experiment paxos --bug 1|2 [flags]",
		"The paper's §5.4.2 (Fig. 13/14): Figure 13's two rounds on 3 Paxos nodes, with execution steering and the immediate safety check on every node, with the check alone, and without CrystalBall.", stderr)
	bug := fs.String("bug", "", "the injected bug: 1 (the leader proposes the last Promise's value) or 2 (promises are not kept across a reset)")
	runs := fs.Int("runs", experiments.DefaultPaxosRuns, "runs; each draws the time between the rounds uniformly from [0, --max-gap)")
	seed := fs.Uint64("seed", experiments.DefaultPaxosSeed, "seed of the experiment; run r uses a seed derived from it and r")
	maxStates := fs.Int("max-states", experiments.DefaultPaxosMaxStates, "unique states per search of a steering round")
	resets := fs.Int("resets", experiments.DefaultPaxosResets, "node resets the steering controllers explore along a path")
	snapEvery := tool.DurationFlag(fs, "snapshots", experiments.DefaultPaxosSnapshots, "checkpoint and gather interval of every node")
	lastKnown := tool.DurationFlag(fs, "last-known", experiments.DefaultPaxosLastKnown, "a member a gather cannot reach enters steering rounds and the immediate check frozen at its last checkpoint seen at most this long before (0: left out, as in the paper)")
	maxGap := tool.DurationFlag(fs, "max-gap", experiments.DefaultPaxosMaxGap, "upper bound of the time between the rounds (the paper: 60s)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "runs emulated in parallel (the results do not depend on it)")
	only := fs.Int("run", -1, "run only this run of the experiment (0-based, as per_run[].run numbers them): the same seed and gap as in the full experiment")
	tracePath := fs.String("trace", "", "with --run, write the per-event trace of the steered configuration (steering rounds, predictions, filters, interventions) to this file")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	quiet := tool.QuietFlag(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	name := "bug" + strings.TrimPrefix(*bug, "bug")
	if name != "bug1" && name != "bug2" {
		return tool.UsageErrorf("--bug must be 1 or 2")
	}
	if *runs <= 0 || *maxStates <= 0 || *snapEvery <= 0 || *workers <= 0 || *maxGap < 0 || *resets < 0 || *lastKnown < 0 {
		return tool.UsageErrorf("--runs, --max-states, --snapshots and --workers must be positive, --max-gap, --resets and --last-known not negative")
	}
	if err := tool.CheckInterval("snapshots", *snapEvery); err != nil {
		return err
	}
	cfg := experiments.PaxosConfig{Bug: name, Runs: *runs, Seed: *seed, MaxStates: *maxStates, Resets: *resets,
		Snapshots: *snapEvery, LastKnown: noneIfZero(*lastKnown), MaxGap: noneIfZero(*maxGap), Workers: *workers}
	if *resets == 0 {
		cfg.Resets = -1 // none
	}
	switch {
	case *only >= 0:
		cfg.Indices = []int{*only}
	case *only != -1:
		return tool.UsageErrorf("--run must be a run number (0 or more)")
	}
	if *tracePath != "" {
		if *only < 0 {
			return tool.UsageErrorf("--trace needs --run: it traces one run")
		}
		f, err := os.Create(*tracePath)
		if err != nil {
			return fmt.Errorf("experiment paxos: %w", err)
		}
		w := bufio.NewWriter(f)
		defer func() {
			if err := w.Flush(); err != nil {
				fmt.Fprintf(stderr, "experiment paxos: writing %s: %v\n", *tracePath, err)
			}
			f.Close()
		}()
		cfg.Trace = w
	}
	progress, endProgress := runProgress(stderr, *asJSON, *quiet, "experiment paxos")
	defer endProgress()
	cfg.Progress = progress
	ctx, stop := interruptible()
	defer stop()
	res, err := experiments.Paxos(ctx, cfg)
	if err != nil {
		return err
	}
	return printResult(stdout, *asJSON, res)
}
