package papers

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/experiments"
)

// experimentCommands are the paper's experiments, by name: each parses its
// flags into a configuration of package experiments, runs it and prints
// its result (--json: the result's JSON).
var experimentCommands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"randtree-prediction": runRandTreePrediction,
	"randtree-churn":      runRandTreeChurn,
	"paxos":               runPaxosExperiment,
	"randtree-liveness":   runRandTreeLiveness,
	"macemc-baseline":     runMaceMCBaseline,
	"bullet-overhead":     runBulletOverhead,
}

// experimentCommand is the experiment command: experiment NAME [flags].
func experimentCommand() tool.Command {
	return tool.Command{Name: "experiment", Summary: "run one of the paper's experiments (experiment NAME; run it without NAME for the list)", Run: runExperiment}
}

func runExperiment(args []string, stdout, stderr io.Writer) error {
	var names []string
	for n := range experimentCommands {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(args) == 0 || experimentCommands[args[0]] == nil {
		return tool.UsageErrorf("usage: %s experiment NAME [flags] (known experiments: %s)", tool.ProgramName(), strings.Join(names, ", "))
	}
	return experimentCommands[args[0]](args[1:], stdout, stderr)
}

// printResult writes an experiment's result: its JSON with --json, else
// its text.
func printResult(w io.Writer, asJSON bool, r fmt.Stringer) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	_, err := io.WriteString(w, r.String())
	return err
}

// interruptible is the experiments' context: SIGINT cancels it.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func runRandTreePrediction(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment randtree-prediction", "experiment randtree-prediction [flags]",
		"The paper's §1.2/§5 comparison: consequence prediction from Figure 2's live state against exhaustive search from the initial 5-node state.", stderr)
	budget := tool.DurationFlag(fs, "budget", experiments.DefaultPredictionBudget, "wall-time budget of each search (0: none)")
	maxStates := fs.Int("max-states", experiments.DefaultPredictionMaxStates, "state budget of each search (0: none)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the tables")
	quiet := tool.QuietFlag(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	if *budget < 0 || *maxStates < 0 {
		return tool.UsageErrorf("--budget and --max-states must not be negative")
	}
	cfg := experiments.PredictionConfig{Budget: noneIfZero(*budget), MaxStates: noneIfZero(*maxStates),
		OnSearch: searchProgress(stderr, *asJSON, *quiet)}
	ctx, stop := interruptible()
	defer stop()
	res, err := experiments.RandTreePrediction(ctx, cfg)
	if err != nil {
		return err
	}
	return printResult(stdout, *asJSON, res)
}

// noneIfZero maps a flag's 0 ("none") to the experiments' negative
// ("none"; their 0 is "the default").
func noneIfZero[T int | float64 | time.Duration](v T) T {
	if v == 0 {
		return -1
	}
	return v
}
