package papers

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/experiments"
)

func runRandTreeChurn(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment randtree-churn", "experiment randtree-churn [flags]",
		"The paper's §5.4.1: RandTree under churn without CrystalBall, with the immediate safety check only, and with execution steering plus the check.", stderr)
	nodes := fs.Int("nodes", experiments.DefaultChurnNodes, "RandTree nodes")
	duration := tool.DurationFlag(fs, "duration", experiments.DefaultChurnDuration, "emulated time of each run (the paper: 1.4h)")
	churn := fs.String("churn", "1/m", "leave-and-rejoin events per unit of time")
	seed := fs.Uint64("seed", experiments.DefaultChurnSeed, "seed of every run (the same network, churn and node randomness in each configuration)")
	snapEvery := tool.DurationFlag(fs, "snapshots", experiments.DefaultChurnSnapshots, "checkpoint and gather interval of every node")
	maxStates := fs.Int("max-states", experiments.DefaultChurnMaxStates, "unique states per search of a steering round")
	configs := fs.String("configs", "off,immediate,steer+immediate", "configurations to run, a comma list")
	maxInterventions := fs.Int("max-interventions", experiments.DefaultChurnMaxInterventions, "times per minute the same kind of event may be kept from a handler before it runs anyway (negative: no bound)")
	vetoHold := fs.String("veto-hold", "", "how long at most an event kind the immediate check keeps vetoing is held once its budget is spent: a duration; default: until the check passes or the liveness guard releases it")
	breakConn := fs.Bool("break-connection", false, "filters and vetoes also break the connection to a dropped message's sender (the paper's TCP reset)")
	resetKinds := fs.String("reset-kinds", "silent", "kinds of reset a steering round explores: rst, silent or both")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	quiet := tool.QuietFlag(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	rate, kinds, hold, err := parseChurnEvents(*churn, *resetKinds, *vetoHold)
	if err != nil {
		return err
	}
	cfg := experiments.ChurnConfig{Nodes: *nodes, Duration: *duration, ChurnPerMinute: noneIfZero(rate), Seed: *seed, Snapshots: *snapEvery,
		MaxStates: *maxStates, MaxInterventions: *maxInterventions, VetoHold: hold, BreakConnection: *breakConn, ResetKinds: kinds, Configs: tool.SplitList(*configs)}
	if err := tool.FirstNonNilError(tool.CheckInterval("snapshots", *snapEvery), checkChurnBounds(cfg), checkChurnConfigs(cfg.Configs)); err != nil {
		return err
	}
	progress, endProgress := runProgress(stderr, *asJSON, *quiet, "experiment randtree-churn")
	defer endProgress()
	cfg.Progress = progress
	ctx, stop := interruptible()
	defer stop()
	res, err := experiments.RandTreeChurn(ctx, cfg)
	if err != nil {
		return err
	}
	return printResult(stdout, *asJSON, res)
}

// parseChurnEvents parses --churn (events per minute), --reset-kinds
// and --veto-hold.
func parseChurnEvents(churn, resetKinds, vetoHold string) (rate float64, kinds consequence.ResetKinds, hold time.Duration, err error) {
	if rate, err = tool.ParseRate(churn); err != nil {
		return 0, kinds, 0, tool.UsageErrorf("--churn: %v", err)
	}
	if kinds, err = consequence.ParseResetKinds(resetKinds); err != nil {
		return 0, kinds, 0, tool.UsageErrorf("--reset-kinds: %q is not rst, silent or both", resetKinds)
	}
	if hold, err = parseVetoHold(vetoHold); err != nil {
		return 0, kinds, 0, err
	}
	return rate, kinds, hold, nil
}

// checkChurnBounds checks the tree size, the search budget, the
// snapshot interval and that the run outlasts its warm-up and heal phase.
func checkChurnBounds(cfg experiments.ChurnConfig) error {
	heal := min(cfg.Duration/4, 5*time.Minute)
	if tool.AnyConditionHolds(cfg.Nodes <= 0, cfg.Nodes > 1000, cfg.MaxStates <= 0, cfg.Snapshots <= 0, cfg.Duration-heal <= experiments.ChurnWarmup) {
		return tool.UsageErrorf("--nodes must be in 1..1000, --max-states and --snapshots positive, --duration longer than %v", experiments.ChurnWarmup+heal)
	}
	return nil
}

// checkChurnConfigs checks that --configs names known configurations.
func checkChurnConfigs(configs []string) error {
	for _, c := range configs {
		if !slices.Contains(experiments.ChurnConfigs, c) {
			return tool.UsageErrorf("--configs: unknown configuration %q (known: off, immediate, steer+immediate)", c)
		}
	}
	return nil
}

// parseVetoHold reads --veto-hold: a positive duration, or empty (and
// "unbounded") for no bound in time (ChurnConfig.VetoHold zero).
func parseVetoHold(s string) (time.Duration, error) {
	if s == "" || s == "unbounded" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, tool.UsageErrorf("--veto-hold: %q is not a positive duration or 'unbounded'", s)
	}
	return d, nil
}
