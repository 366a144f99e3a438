package papers

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

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

// baselineFlags are the flags 'experiment macemc-baseline' adds to
// emulate's: the exhaustive half's budgets and the output.
type baselineFlags struct {
	bfsNodes, maxStates, workers *int
	budget                       *time.Duration
	maxMemory                    int64
	asJSON, quiet                *bool
}

// register defines f's flags on fs.
func (f *baselineFlags) register(fs *flag.FlagSet) {
	f.bfsNodes = fs.Int("bfs-nodes", experiments.DefaultBaselineNodes, "nodes of the initial configuration the exhaustive search starts from (the paper: 5)")
	f.budget = tool.DurationFlag(fs, "budget", 0, "wall-time budget of the exhaustive search (default: the wall time the online predictors spent exploring)")
	f.maxStates = fs.Int("bfs-states", experiments.DefaultBaselineMaxStates, "unique-state budget of the exhaustive search: it bounds its memory (about 140 B per state on Chord, 1.1 GB at the default); 0: none")
	f.workers = fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines of the exhaustive search")
	tool.ByteSizeVar(fs, &f.maxMemory, "max-memory", "memory budget of the exhaustive search, e.g. 4GiB: it stops with \"memory budget\" before the process holds more (also the Go runtime's soft memory limit; 0: none)")
	f.asJSON = fs.Bool("json", false, "print one JSON object instead of the table")
	f.quiet = tool.QuietFlag(fs)
}

// setBaselineDefaults gives emulate's flags on fs the paper's 100-node
// deep online debugging runs as defaults, and no default service.
func setBaselineDefaults(fs *flag.FlagSet, p *tool.Emulation) {
	fs.Lookup("service").DefValue = ""
	p.SetService("")
	for name, v := range map[string][2]string{"nodes": {"100", "100"}, "duration": {"1h", "1h0m0s"}, "mode": {"debug", "debug"}} {
		if err := fs.Set(name, v[0]); err != nil {
			panic(err) // this function's own flag definitions
		}
		fs.Lookup(name).DefValue = v[1]
	}
}

// check checks the service, the mode and the exhaustive half's budgets,
// then resolves emulate's flags (p).
func (f *baselineFlags) check(fs *flag.FlagSet, p *tool.Emulation, service string) error {
	if err := tool.FirstBrokenRule(
		tool.BrokenIf(!slices.Contains([]string{"chord", "randtree"}, service), tool.UsageErrorf("--service must be chord or randtree")),
		tool.BrokenIf(p.Mode() != "debug", tool.UsageErrorf("--mode must be debug: the online half predicts and reports")),
		tool.BrokenIf(tool.AnyConditionHolds(*f.bfsNodes <= 0, *f.bfsNodes > 64, *f.budget < 0, *f.maxStates < 0, *f.workers <= 0),
			tool.UsageErrorf("--bfs-nodes must be in 1..64, --workers positive, --budget and --bfs-states not negative")),
	); err != nil {
		return err
	}
	if err := tool.RejectNegativeAuto(fs); err != nil {
		return err
	}
	return p.Resolve()
}

func runMaceMCBaseline(args []string, stdout, stderr io.Writer) error {
	fs := tool.NewFlagSet("experiment macemc-baseline", "experiment macemc-baseline --service chord|randtree [flags]",
		"The paper's §5.3: deep online debugging in an emulated run (as 'crystalball emulate --mode debug', whose flags it takes), then exhaustive BFS from the initial state of --bfs-nodes nodes with the wall-time budget the online predictors used; which online violations BFS finds, and how deep it gets.", stderr)
	p, err := tool.NewEmulation(fs, tool.Program{Services: services()})
	if err != nil {
		return err
	}
	setBaselineDefaults(fs, p)
	var f baselineFlags
	f.register(fs)
	if err := tool.ParseFlags(fs, args); err != nil {
		return err
	}
	service, fix := p.Service()
	if err := f.check(fs, p, service); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	defer p.ShowProgress(stderr, *f.quiet, "experiment macemc-baseline: online")()
	online, err := f.runOnline(ctx, p, service, stderr)
	if err != nil {
		return err
	}
	res, restoreMemory, err := f.runOffline(ctx, p, service, fix, &online, stderr)
	defer restoreMemory()
	if err != nil {
		return err
	}
	return f.print(stdout, res, &online, p)
}

// runOnline runs the online half, the emulation p, announcing it on
// stderr (not with --json or --quiet).
func (f *baselineFlags) runOnline(ctx context.Context, p *tool.Emulation, service string, stderr io.Writer) (tool.EmulateOutput, error) {
	if !*f.asJSON && !*f.quiet {
		fmt.Fprintf(stderr, "online: emulating %d %s nodes for %v with %v predicting...\n", p.Nodes(), service, p.Duration(), p.Predictors())
	}
	return p.Run(ctx)
}

// print prints both halves' results: one JSON object with --json, else
// the table.
func (f *baselineFlags) print(stdout io.Writer, res *experiments.BaselineResult, online *tool.EmulateOutput, p *tool.Emulation) error {
	if *f.asJSON {
		return json.NewEncoder(stdout).Encode(baselineOutput{BaselineResult: res, Online: *online})
	}
	printBaselineOnline(stdout, online, p)
	_, err := io.WriteString(stdout, res.String())
	return err
}

// runOffline runs the exhaustive half: BFS from the initial state of
// --bfs-nodes nodes of service, with the online run's faults and
// wall-time budget, the garbage collector tuned for the search. With
// --max-memory the Go runtime's memory limit is set for the search and
// the rest of the command: restoreMemory (never nil) sets it back.
func (f *baselineFlags) runOffline(ctx context.Context, p *tool.Emulation, service, fix string, online *tool.EmulateOutput, stderr io.Writer) (res *experiments.BaselineResult, restoreMemory func(), err error) {
	restoreMemory = func() {}
	svc, err := lookupService(service, tool.SplitList(fix), *f.bfsNodes)
	if err != nil {
		return nil, restoreMemory, err
	}
	cfg := experiments.BaselineConfig{Spec: svc.Spec, Workload: svc.Workload, Nodes: *f.bfsNodes, Seed: p.Seed(),
		Faults: p.Faults(),
		Budget: *f.budget, MaxStates: noneIfZero(*f.maxStates), Workers: *f.workers, MaxMemory: f.maxMemory,
		OnSearch: searchProgress(stderr, *f.asJSON, *f.quiet)}
	tune, restoreGC := tool.SearchGCPercent(tool.ServiceGCPercent, nil)
	cfg.OnSearch = tunedSearch(cfg.OnSearch, tune)
	if f.maxMemory > 0 {
		old := debug.SetMemoryLimit(f.maxMemory)
		restoreMemory = func() { debug.SetMemoryLimit(old) }
	}
	res, err = experiments.MaceMCBaseline(ctx, cfg, baselineOnline(online))
	restoreGC()
	return res, restoreMemory, err
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
