package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// 'experiment macemc-baseline' is the paper's §5.3: the violations deep
// online debugging predicts in a long emulated run, against what MaceMC's
// exhaustive search finds from the initial state of 5 nodes with the same
// wall-clock budget the online predictors used. The online half is
// 'emulate --mode debug' (its flags and defaults: 100 nodes, 1 hour, churn
// 1/m, two predictors); the offline half is BFS over the same service with
// the same faults (resets and breaks per path).
//
// A violation found online counts as found offline when BFS violates the
// same property, and as found "with the same ending" when a BFS path to a
// violation of it ends with the online path's events (same shape: kinds,
// message types, roles). A BFS path starts from nothing (every join
// included), so it cannot equal an online path, which starts from a live
// state; the ending is what can match.

// baselineOutput is the --json form of 'experiment macemc-baseline'.
type baselineOutput struct {
	Experiment string        `json:"experiment"`
	Online     emulateOutput `json:"online"`
	Offline    baselineBFS   `json:"offline"`
	// Violations has one entry per distinct violation found online.
	Violations  []baselineViolation `json:"violations"`
	WallSeconds float64             `json:"wall_seconds"`
}

// baselineBFS is the offline search.
type baselineBFS struct {
	Nodes         int     `json:"nodes"`
	Faults        string  `json:"faults"`
	BudgetSeconds float64 `json:"budget_s"`
	MaxStates     int     `json:"max_states"`
	Unique        uint64  `json:"unique"`
	Depth         int     `json:"depth"`
	// DepthComplete is the deepest level explored completely.
	DepthComplete int     `json:"depth_complete"`
	Stop          string  `json:"stop"`
	Seconds       float64 `json:"seconds"`
	// Found are the properties BFS violated, with the depth of the first
	// (shortest) violation of each and how many distinct endings it saw.
	Found []baselineFound `json:"found"`
}

type baselineFound struct {
	Property string   `json:"property"`
	Depth    int      `json:"depth"`
	Paths    int      `json:"paths"`
	Path     []string `json:"path"`
}

// baselineViolation is one violation found online and whether BFS found it.
type baselineViolation struct {
	Property        string  `json:"property"`
	Shape           string  `json:"shape"`
	FirstPredictedS float64 `json:"first_predicted_s"`
	Node            node.ID `json:"node"`
	HappenedOnline  bool    `json:"happened_online"`
	// FoundProperty is set when BFS violated the property at all (at
	// depth PropertyDepth); FoundEnding when one of its paths ends with
	// the online path's events.
	FoundProperty bool `json:"found_property"`
	PropertyDepth int  `json:"property_depth,omitempty"`
	FoundEnding   bool `json:"found_ending"`
}

func runMaceMCBaseline(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment macemc-baseline", stderr)
	var p emulateParams
	p.register(fs)
	// The paper's 100-node deep online debugging runs.
	fs.Lookup("service").DefValue, p.service = "", ""
	must(fs.Set("nodes", "100"))
	fs.Lookup("nodes").DefValue = "100"
	must(fs.Set("duration", "1h"))
	fs.Lookup("duration").DefValue = "1h0m0s"
	must(fs.Set("mode", "debug"))
	fs.Lookup("mode").DefValue = "debug"
	bfsNodes := fs.Int("bfs-nodes", 5, "nodes of the initial configuration the exhaustive search starts from (the paper: 5)")
	budget := durationFlag(fs, "budget", 0, "wall-time budget of the exhaustive search (default: the wall time the online predictors spent exploring)")
	maxStates := fs.Int("bfs-states", 8_000_000, "unique-state budget of the exhaustive search: it bounds its memory (about 1.7 KB per state on Chord, 14 GB at the default: the frontier holds whole global states); 0: none")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "goroutines of the exhaustive search")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: crystalball experiment macemc-baseline --service chord|randtree [flags]")
		fmt.Fprintln(fs.Output(), "The paper's §5.3: deep online debugging in an emulated run (as 'crystalball emulate --mode debug', whose flags it takes), then exhaustive BFS from the initial state of --bfs-nodes nodes with the wall-time budget the online predictors used; which online violations BFS finds, and how deep it gets.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if p.service != "chord" && p.service != "randtree" {
		return usagef("--service must be chord or randtree")
	}
	if p.modeName != "debug" {
		return usagef("--mode must be debug: the online half predicts and reports")
	}
	if *bfsNodes <= 0 || *bfsNodes > 64 || *budget < 0 || *maxStates < 0 || *workers <= 0 {
		return usagef("--bfs-nodes must be in 1..64, --workers positive, --budget and --bfs-states not negative")
	}
	if err := p.resolve(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	start := time.Now()

	if !*asJSON {
		fmt.Fprintf(stderr, "online: emulating %d %s nodes for %v with %v predicting...\n", p.nodes, p.service, p.duration, p.predicting)
	}
	online, err := runEmulation(ctx, &p)
	if err != nil {
		return err
	}
	out := baselineOutput{Experiment: "macemc-baseline", Online: online}
	b := *budget
	if b == 0 && online.Result.Steering != nil {
		b = time.Duration(online.Result.Steering.ExplorationSeconds * float64(time.Second))
	}
	if b <= 0 {
		return fmt.Errorf("experiment macemc-baseline: the online run explored nothing (no rounds); set --budget")
	}

	svc, err := lookupService(p.service, splitList(p.fix), *bfsNodes)
	if err != nil {
		return err
	}
	faults := consequence.Faults{Resets: p.steerResets, SilentResets: true, Breaks: p.steerBreaks}
	m, err := serviceModel(svc, *bfsNodes, p.seed, faults)
	if err != nil {
		return err
	}
	opts := consequence.Options{Strategy: consequence.BFS, Workers: *workers, MaxStates: *maxStates, MaxTime: b, MaxViolations: 256}
	if !*asJSON {
		fmt.Fprintf(stderr, "offline: exhaustive BFS from %d nodes for %v...\n", *bfsNodes, b.Round(time.Millisecond))
		progress := newProgress(stderr, "")
		opts.Progress = progress.level
		defer progress.close()
	}
	res, err := consequence.NewChecker(m).
		Properties(m.Properties()...).WithOptions(opts).Run(ctx)
	if res == nil {
		return fmt.Errorf("experiment macemc-baseline: %w", err)
	}
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("experiment macemc-baseline: %w", err)
	}
	out.Offline = baselineBFS{Nodes: *bfsNodes, Faults: fmt.Sprintf("resets=%d (silent) breaks=%d", faults.Resets, faults.Breaks),
		BudgetSeconds: b.Seconds(), MaxStates: *maxStates, Unique: res.Unique, Depth: res.Depth, Stop: res.Stop.String(),
		Seconds: res.Elapsed.Seconds(), DepthComplete: res.Depth}
	if res.Stop != consequence.StopCompleted && res.Stop != consequence.StopDepthBudget {
		out.Offline.DepthComplete = res.Depth - 1
	}
	// The BFS paths, cut at their first violating state, by property.
	paths := map[string][][]consequence.ActorAction{}
	for _, v := range res.Violations {
		path := firstViolating(m, v.Property, v.Start, v.Path)
		if !slices.ContainsFunc(paths[v.Property], func(p []consequence.ActorAction) bool { return steering.Shape(p) == steering.Shape(path) }) {
			paths[v.Property] = append(paths[v.Property], path)
		}
	}
	for _, prop := range m.Properties() {
		ps := paths[prop.Name]
		if len(ps) == 0 {
			continue
		}
		f := baselineFound{Property: prop.Name, Depth: len(ps[0]), Paths: len(ps)}
		for _, q := range ps {
			f.Depth = min(f.Depth, len(q))
		}
		for _, a := range ps[0] {
			f.Path = append(f.Path, a.String())
		}
		out.Offline.Found = append(out.Offline.Found, f)
	}
	log := online.predictionLog
	for i, pred := range online.Predictions {
		bv := baselineViolation{Property: pred.Property, Shape: pred.Shape, FirstPredictedS: pred.FirstPredictedS,
			Node: pred.Node, HappenedOnline: pred.Happened != nil}
		tail := log.Entries()[i].Example.Path
		for _, q := range paths[pred.Property] {
			if !bv.FoundProperty || len(q) < bv.PropertyDepth {
				bv.PropertyDepth = len(q)
			}
			bv.FoundProperty = true
			if len(q) >= len(tail) && steering.Shape(q[len(q)-len(tail):]) == pred.Shape {
				bv.FoundEnding = true
			}
		}
		out.Violations = append(out.Violations, bv)
	}
	out.WallSeconds = time.Since(start).Seconds()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	printBaseline(stdout, &out, &p)
	return nil
}

// firstViolating replays path from start and returns its shortest prefix
// that reaches a state violating property (BFS explores on from violating
// states, so a recorded path can extend an earlier violation).
func firstViolating(m *consequence.ActorModel, property string, start *consequence.GlobalState, path []consequence.Action[consequence.ActorAction]) []consequence.ActorAction {
	out := make([]consequence.ActorAction, len(path))
	for i, a := range path {
		out[i] = a.Act
	}
	var check func(*consequence.GlobalState) error
	for _, p := range m.Properties() {
		if p.Name == property {
			check = p.Check
		}
	}
	if check == nil {
		return out
	}
	g := start
	for i, a := range out {
		next, ok := m.Next(g, a)
		if !ok {
			break
		}
		if g = next; check(g) != nil {
			return out[:i+1]
		}
	}
	return out
}

func printBaseline(w io.Writer, out *baselineOutput, p *emulateParams) {
	on := out.Online
	st := on.Result.Steering
	fmt.Fprintf(w, "macemc-baseline: %s (%s), seed %d\n\n", on.Service, on.Options, on.Seed)
	fmt.Fprintf(w, "online:  %d nodes, %s emulated, churn %g/min, predictors %v, %d states per search, resets %d (silent), breaks %d per path\n",
		on.Nodes, on.Duration, on.ChurnPerMinute, on.Predictors, p.steerStates, p.steerResets, p.steerBreaks)
	fmt.Fprintf(w, "         %d rounds, %d states, %.1f s of exploration; %d distinct violations predicted; %.1f s of wall time (%.0fx real time)\n",
		st.Rounds, st.StatesExplored, st.ExplorationSeconds, len(on.Predictions), on.WallSeconds, on.Speedup)
	off := out.Offline
	fmt.Fprintf(w, "offline: exhaustive BFS from the initial state of %d nodes, %s per path, budget %.1f s or %d states\n",
		off.Nodes, off.Faults, off.BudgetSeconds, off.MaxStates)
	fmt.Fprintf(w, "         %d unique states in %.1f s, depth %d (%d complete), stopped by %s\n", off.Unique, off.Seconds, off.Depth, off.DepthComplete, off.Stop)
	for _, f := range off.Found {
		fmt.Fprintf(w, "         violates %s first at depth %d (%d distinct endings)\n", f.Property, f.Depth, f.Paths)
	}
	if len(off.Found) == 0 {
		fmt.Fprintln(w, "         no violation")
	}
	fmt.Fprintln(w)
	if len(out.Violations) == 0 {
		fmt.Fprintln(w, "nothing was predicted online")
		return
	}
	fmt.Fprintf(w, "%-3s %-24s %-13s %-5s %-9s %-16s %s\n", "#", "violation found online", "predicted at", "by", "happened", "BFS: property", "BFS: same ending")
	for i, v := range out.Violations {
		prop := "no"
		if v.FoundProperty {
			prop = fmt.Sprintf("yes (depth %d)", v.PropertyDepth)
		}
		fmt.Fprintf(w, "%-3d %-24s %-13s %-5v %-9s %-16s %s\n", i+1, v.Property,
			clock(time.Duration(v.FirstPredictedS*float64(time.Second))), v.Node, yesNo(v.HappenedOnline), prop, yesNo(v.FoundEnding))
	}
	fmt.Fprintln(w, "\nshapes (the path with nodes as roles):")
	for i, v := range out.Violations {
		fmt.Fprintf(w, "%3d. %s\n", i+1, v.Shape)
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// must panics on an error that would be a bug in this file's own flag
// definitions.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
