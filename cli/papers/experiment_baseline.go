package papers

import (
	"encoding/json"
	"fmt"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/experiments"
)

// 'experiment macemc-baseline' is the paper's §5.3 (experiments.MaceMCBaseline):
// its online half is this command's emulated run with --mode debug
// (runEmulation: emulate's flags and defaults, but 100 nodes for 1 hour),
// its offline half the library's BFS with the same faults.

// baselineOutput is the --json form of 'experiment macemc-baseline': the
// library's result with the online run beside it.
type baselineOutput struct {
	*experiments.BaselineResult
	Online tool.EmulateOutput `json:"online"`
}

func runMaceMCBaseline(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment macemc-baseline", "experiment macemc-baseline --service chord|randtree [flags]",
		"The paper's §5.3: deep online debugging in an emulated run (as 'crystalball emulate --mode debug', whose flags it takes), then exhaustive BFS from the initial state of --bfs-nodes nodes with the wall-time budget the online predictors used; which online violations BFS finds, and how deep it gets.", stderr)
	p, err := tool.NewEmulation(fs, tool.Program{Services: services()})
	if err != nil {
		return err
	}
	// The paper's 100-node deep online debugging runs.
	fs.Lookup("service").DefValue = ""
	p.SetService("")
	for name, v := range map[string][2]string{"nodes": {"100", "100"}, "duration": {"1h", "1h0m0s"}, "mode": {"debug", "debug"}} {
		if err := fs.Set(name, v[0]); err != nil {
			panic(err) // this function's own flag definitions
		}
		fs.Lookup(name).DefValue = v[1]
	}
	bfsNodes := fs.Int("bfs-nodes", experiments.DefaultBaselineNodes, "nodes of the initial configuration the exhaustive search starts from (the paper: 5)")
	budget := tool.DurationFlag(fs, "budget", 0, "wall-time budget of the exhaustive search (default: the wall time the online predictors spent exploring)")
	maxStates := fs.Int("bfs-states", experiments.DefaultBaselineMaxStates, "unique-state budget of the exhaustive search: it bounds its memory (about 140 B per state on Chord, 1.1 GB at the default); 0: none")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines of the exhaustive search")
	var maxMemory int64
	tool.ByteSizeVar(fs, &maxMemory, "max-memory", "memory budget of the exhaustive search, e.g. 4GiB: it stops with \"memory budget\" before the process holds more (also the Go runtime's soft memory limit; 0: none)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	quiet := tool.QuietFlag(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	service, fix := p.Service()
	if service != "chord" && service != "randtree" {
		return tool.UsageErrorf("--service must be chord or randtree")
	}
	if p.Mode() != "debug" {
		return tool.UsageErrorf("--mode must be debug: the online half predicts and reports")
	}
	if *bfsNodes <= 0 || *bfsNodes > 64 || *budget < 0 || *maxStates < 0 || *workers <= 0 {
		return tool.UsageErrorf("--bfs-nodes must be in 1..64, --workers positive, --budget and --bfs-states not negative")
	}
	if err := tool.RejectNegativeAuto(fs); err != nil {
		return err
	}
	if err := p.Resolve(); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	defer p.ShowProgress(stderr, *quiet, "experiment macemc-baseline: online")()
	if !*asJSON && !*quiet {
		fmt.Fprintf(stderr, "online: emulating %d %s nodes for %v with %v predicting...\n", p.Nodes(), service, p.Duration(), p.Predictors())
	}
	online, err := p.Run(ctx)
	if err != nil {
		return err
	}
	svc, err := lookupService(service, tool.SplitList(fix), *bfsNodes)
	if err != nil {
		return err
	}
	cfg := experiments.BaselineConfig{Spec: svc.Spec, Workload: svc.Workload, Nodes: *bfsNodes, Seed: p.Seed(),
		Faults: p.Faults(),
		Budget: *budget, MaxStates: noneIfZero(*maxStates), Workers: *workers, MaxMemory: maxMemory,
		OnSearch: searchProgress(stderr, *asJSON, *quiet)}
	tune, restoreGC := tool.SearchGCPercent(tool.ServiceGCPercent, nil)
	cfg.OnSearch = tunedSearch(cfg.OnSearch, tune)
	if maxMemory > 0 {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(maxMemory))
	}
	res, err := experiments.MaceMCBaseline(ctx, cfg, baselineOnline(&online))
	restoreGC()
	if err != nil {
		return err
	}
	out := baselineOutput{BaselineResult: res, Online: online}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	printBaselineOnline(stdout, &online, p)
	_, err = io.WriteString(stdout, res.String())
	return err
}

// baselineOnline distils the online run for the library.
func baselineOnline(on *tool.EmulateOutput) experiments.BaselineOnline {
	var b experiments.BaselineOnline
	if st := on.Result.Steering; st != nil {
		b.ExplorationSeconds = st.ExplorationSeconds
	}
	for i, pred := range on.Predictions {
		b.Predictions = append(b.Predictions, experiments.OnlinePrediction{Property: pred.Property, Shape: pred.Shape,
			Depth: len(on.PredictionLog().Entries()[i].Example.Path), FirstPredictedS: pred.FirstPredictedS, Node: pred.Node,
			Happened: pred.Happened != nil})
	}
	return b
}

// printBaselineOnline prints the online half's lines of the table.
func printBaselineOnline(w io.Writer, on *tool.EmulateOutput, p *tool.Emulation) {
	faults := p.Faults()
	st := on.Result.Steering
	fmt.Fprintf(w, "macemc-baseline: %s (%s), seed %d\n\n", on.Service, on.Options, on.Seed)
	fmt.Fprintf(w, "online:  %d nodes, %s emulated, churn %g/min, predictors %v, %d states per search, resets %d (silent), breaks %d, drops %d per path\n",
		on.Nodes, on.Duration, on.ChurnPerMinute, on.Predictors, p.MaxStates(), faults.Resets, faults.Breaks, faults.Drops)
	fmt.Fprintf(w, "         %d rounds, %d states, %.1f s of exploration; %d distinct violations predicted; %.1f s of wall time (%s real time)\n",
		st.Rounds, st.StatesExplored, st.ExplorationSeconds, len(on.Predictions), on.WallSeconds, tool.SpeedFactor(on.Speedup))
}

// tunedSearch returns obs with tune (searchGCPercent's callback, nil when
// GOGC chose the target) called after each level of every search.
func tunedSearch(obs experiments.SearchObserver, tune func(consequence.Progress)) experiments.SearchObserver {
	if tune == nil {
		return obs
	}
	return func(label string) (func(consequence.Progress), func()) {
		level, done := func(consequence.Progress) {}, func() {}
		if obs != nil {
			level, done = obs(label)
		}
		return func(p consequence.Progress) { tune(p); level(p) }, done
	}
}
