package papers

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"runtime"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/experiments"
	"github.com/seed6eee2ec7/crystalball/steering"
)

func runRandTreeLiveness(args []string, stdout, stderr io.Writer) error {
	cfg, out, err := parseRandTreeLiveness(args, stderr)
	if err != nil {
		return err
	}
	progress, endProgress := runProgress(stderr, out.asJSON, out.quiet, "experiment randtree-liveness")
	defer endProgress()
	cfg.Progress = progress
	ctx, stop := interruptible()
	defer stop()
	res, err := experiments.RandTreeLiveness(ctx, cfg)
	if err != nil {
		return err
	}
	return printResult(stdout, out.asJSON, res)
}

// parseRandTreeLiveness reads the experiment's flags into its
// configuration and its --json and --quiet.
func parseRandTreeLiveness(args []string, stderr io.Writer) (cfg experiments.RandTreeLivenessConfig, out outputFlags, err error) {
	fs := tool.NewFlagSet("experiment randtree-liveness", "experiment randtree-liveness --seed N [flags]",
		"MaceMC's RandTree liveness bug scripted in an emulated tree over many gaps: without CrystalBall, in deep online debugging and with execution steering on every node.", stderr)
	seed := fs.Uint64("seed", 0, "seed of the experiment (required); run r uses a seed derived from it and r")
	runs := fs.Int("runs", 100, "runs; each draws a victim and the gap between its join and its silent reset")
	nodes := fs.Int("nodes", 25, "tree size")
	maxGap := tool.DurationFlag(fs, "max-gap", 0, "upper bound of the gap between the victim's join and its silent reset (default 600ms)")
	snapEvery := tool.DurationFlag(fs, "snapshots", 0, "checkpoint, gather and round interval of every node in the debug and steered runs (default 10s)")
	fix := fs.String("fix", "", "RandTree corrections: all, or a comma-separated list (none: the paper's protocol, with MaceMC's bug)")
	resets := fs.Int("steer-resets", 1, "silent resets a steering round explores along a path")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "runs emulated in parallel (the results do not depend on it)")
	var walk tool.WalkFlags
	walk.Register(fs)
	var rates tool.RateFlags
	rates.Register(fs)
	jsonOut := fs.Bool("json", false, "print one JSON object instead of the summary")
	quiet := tool.QuietFlag(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return cfg, outputFlags{}, err
	}
	if err := tool.FirstNonNilError(
		tool.FirstBrokenRule(
			tool.BrokenIf(!tool.FlagGiven(fs, "seed"), tool.UsageErrorf("--seed is required (the experiment is a pure function of it)")),
			tool.BrokenIf(tool.AnyConditionHolds(*runs <= 0, *nodes < 3, *nodes > emulation.MaxNodes, *workers <= 0, *maxGap < 0, *resets < 0),
				tool.UsageErrorf("--runs and --workers must be positive, --nodes in 3..%d, --max-gap and --steer-resets not negative", emulation.MaxNodes)),
		),
		tool.CheckInterval("snapshots", *snapEvery),
	); err != nil {
		return cfg, outputFlags{}, err
	}
	if err := walk.Validate(); err != nil {
		return cfg, outputFlags{}, err
	}
	sc := steering.Config{Faults: consequence.Faults{Resets: *resets, SilentResets: true}}
	walk.Apply(&sc)
	rates.Apply(&sc)
	cfg = experiments.RandTreeLivenessConfig{Seed: *seed, Runs: *runs, Nodes: *nodes, MaxGap: *maxGap, SnapEvery: *snapEvery,
		Fixes: tool.SplitList(*fix), Steering: sc, Workers: *workers}
	return cfg, outputFlags{asJSON: *jsonOut, quiet: *quiet}, nil
}
