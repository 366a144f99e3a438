package experiments

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// MaceMCBaseline is the paper's §5.3: the violations deep online
// debugging predicts in a long emulated run, against what MaceMC's
// exhaustive search finds from the initial state of 5 nodes with the same
// wall-clock budget the online predictors used. The online half is an
// emulated run with predicting nodes ('crystalball emulate --mode debug',
// which the caller runs and distils into BaselineOnline); MaceMCBaseline
// is the offline half: BFS over the same service with the same faults
// (resets and breaks per path), and the comparison.
//
// A violation found online counts as found offline when BFS violates the
// same property, and as found "with the same ending" when a BFS path to a
// violation of it ends with the online path's events (same shape: kinds,
// message types, roles). A BFS path starts from nothing (every join
// included), so it cannot equal an online path, which starts from a live
// state; the ending is what can match.

// BaselineFormat is the format of a BaselineResult.
const BaselineFormat = "crystalball-experiment-macemc-baseline/1"

// Defaults of BaselineConfig.
const (
	DefaultBaselineNodes     = 5
	DefaultBaselineSeed      = 1 // the seed docs/RESULTS.md uses; not a default: every seed, 0 too, is a seed of its own
	DefaultBaselineMaxStates = 8_000_000
)

// BaselineConfig configures MaceMCBaseline's exhaustive search. Spec is
// required; zero fields take the defaults above.
type BaselineConfig struct {
	// Spec and Workload are the service as the online run ran it.
	Spec     node.Spec
	Workload func(id node.ID, restart bool) []node.Message
	// Nodes is the size of the initial configuration BFS starts from
	// (the paper: 5), at most 64.
	Nodes int
	// Seed seeds the model's nodes. Every value, 0 included, is a seed of
	// its own: a seed has no default.
	Seed uint64
	// Faults are the faults BFS explores per path: those the online
	// predictors explored (zero: none).
	Faults consequence.Faults
	// Budget is BFS's wall-time budget (0: the online predictors'
	// exploration time, BaselineOnline.ExplorationSeconds).
	Budget time.Duration
	// MaxStates bounds BFS's unique states, and so its memory (about 140
	// bytes per state on Chord at 8 million, with the CLI's collector
	// setting; the frontier is packed); negative: none.
	MaxStates int
	// Workers is BFS's goroutines (0: GOMAXPROCS).
	Workers int
	// MaxMemory is BFS's memory budget in bytes (consequence.Options.
	// MaxMemory; 0: none): the search stops with "memory budget" rather
	// than outgrow it.
	MaxMemory int64
	// OnSearch, when non-nil, watches the search.
	OnSearch SearchObserver
}

// DefaultBaselineConfig returns the configuration the zero value means,
// for spec and workload.
func DefaultBaselineConfig(spec node.Spec, workload func(node.ID, bool) []node.Message) BaselineConfig {
	return BaselineConfig{Spec: spec, Workload: workload}.withDefaults()
}

func (c BaselineConfig) withDefaults() BaselineConfig {
	orDefault(&c.Nodes, DefaultBaselineNodes)
	orDefault(&c.MaxStates, DefaultBaselineMaxStates)
	orDefault(&c.Workers, runtime.GOMAXPROCS(0))
	return c
}

// BaselineOnline is what MaceMCBaseline needs of the online run.
type BaselineOnline struct {
	// ExplorationSeconds is the wall time the predictors spent exploring.
	ExplorationSeconds float64
	// Predictions are the distinct violations predicted.
	Predictions []OnlinePrediction
}

// OnlinePrediction is a distinct violation the online run predicted.
type OnlinePrediction struct {
	Property string
	// Shape is the predicted path with nodes as roles (steering.Shape),
	// Depth its length.
	Shape string
	Depth int
	// FirstPredictedS is when it was first predicted (seconds into the
	// run), Node by which node.
	FirstPredictedS float64
	Node            node.ID
	// Happened is set if the property was violated in the run afterwards.
	Happened bool
}

// BaselineResult is the outcome of MaceMCBaseline.
type BaselineResult struct {
	// Format is BaselineFormat; Experiment is "macemc-baseline".
	Format     string      `json:"format"`
	Experiment string      `json:"experiment"`
	Offline    BaselineBFS `json:"offline"`
	// Violations has an entry per distinct violation found online, in the
	// order of BaselineOnline.Predictions.
	Violations  []BaselineViolation `json:"violations"`
	WallSeconds float64             `json:"wall_seconds"`
}

// BaselineBFS is the offline search.
type BaselineBFS struct {
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
	Found []BaselineFound `json:"found"`
}

// BaselineFound is a property BFS violated: the depth of its shortest
// violation, the distinct endings (shapes) seen, and the first path.
type BaselineFound struct {
	Property string   `json:"property"`
	Depth    int      `json:"depth"`
	Paths    int      `json:"paths"`
	Path     []string `json:"path"`
}

// BaselineViolation is one violation found online and whether BFS found it.
type BaselineViolation struct {
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

// MaceMCBaseline runs BFS from the initial state of cfg.Nodes nodes for
// the budget and matches what it finds against the online predictions.
func MaceMCBaseline(ctx context.Context, cfg BaselineConfig, online BaselineOnline) (*BaselineResult, error) {
	cfg = cfg.withDefaults()
	if cfg.Spec.New == nil {
		return nil, errors.New("experiments: macemc-baseline: BaselineConfig.Spec is required")
	}
	if cfg.Nodes < 0 || cfg.Nodes > 64 || cfg.Budget < 0 || cfg.Workers < 0 || cfg.MaxMemory < 0 {
		return nil, errors.New("experiments: macemc-baseline: nodes must be in 1..64, budget, workers and memory not negative")
	}
	start := time.Now()
	budget := cfg.Budget
	if budget == 0 {
		budget = time.Duration(online.ExplorationSeconds * float64(time.Second))
	}
	if budget <= 0 {
		return nil, errors.New("experiments: macemc-baseline: the online run explored nothing (no rounds); set a budget")
	}
	m, err := consequence.NewActorModel(cfg.Spec, consequence.ActorOptions{N: cfg.Nodes, Seed: cfg.Seed, Workload: cfg.Workload, Faults: cfg.Faults})
	if err != nil {
		return nil, fmt.Errorf("experiments: macemc-baseline: %w", err)
	}
	level, done := observe(cfg.OnSearch, fmt.Sprintf("bfs from %d nodes", cfg.Nodes))
	opts := consequence.Options{Strategy: consequence.BFS, Workers: cfg.Workers, MaxStates: max(cfg.MaxStates, 0),
		MaxTime: budget, MaxViolations: 256, Progress: level, MaxMemory: cfg.MaxMemory}
	res, err := consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).
		Properties(m.Properties()...).WithOptions(opts).Run(ctx)
	done()
	if res == nil || (err != nil && ctx.Err() != nil) {
		return nil, fmt.Errorf("experiments: macemc-baseline: %w", err)
	}
	out := &BaselineResult{Format: BaselineFormat, Experiment: "macemc-baseline"}
	out.Offline = BaselineBFS{Nodes: cfg.Nodes, Faults: fmt.Sprintf("resets=%d (silent) breaks=%d", cfg.Faults.Resets, cfg.Faults.Breaks),
		BudgetSeconds: budget.Seconds(), MaxStates: max(cfg.MaxStates, 0), Unique: res.Unique, Depth: res.Depth, Stop: res.Stop.String(),
		Seconds: res.Elapsed.Seconds(), DepthComplete: res.Depth}
	if res.Stop != consequence.StopCompleted && res.Stop != consequence.StopDepthBudget {
		out.Offline.DepthComplete = res.Depth - 1
	}
	paths := violatingPaths(m, res)
	out.Offline.Found = foundProperties(m, paths)
	out.Violations = matchOnline(online.Predictions, paths)
	out.WallSeconds = time.Since(start).Seconds()
	return out, nil
}

// violatingPaths returns the BFS paths, cut at their first violating
// state, by property, one per distinct shape.
func violatingPaths(m *consequence.ActorModel, res *consequence.Result[*consequence.GlobalState, consequence.ActorAction]) map[string][][]consequence.ActorAction {
	paths := map[string][][]consequence.ActorAction{}
	for _, v := range res.Violations {
		path := firstViolating(m, v.Property, v.Start, v.Path)
		if !slices.ContainsFunc(paths[v.Property], func(p []consequence.ActorAction) bool { return steering.Shape(p) == steering.Shape(path) }) {
			paths[v.Property] = append(paths[v.Property], path)
		}
	}
	return paths
}

// foundProperties summarizes paths by property, in the model's order.
func foundProperties(m *consequence.ActorModel, paths map[string][][]consequence.ActorAction) []BaselineFound {
	var found []BaselineFound
	for _, prop := range m.Properties() {
		ps := paths[prop.Name]
		if len(ps) == 0 {
			continue
		}
		f := BaselineFound{Property: prop.Name, Depth: len(ps[0]), Paths: len(ps)}
		for _, q := range ps {
			f.Depth = min(f.Depth, len(q))
		}
		for _, a := range ps[0] {
			f.Path = append(f.Path, a.String())
		}
		found = append(found, f)
	}
	return found
}

// matchOnline tells, for each online prediction, whether BFS violated its
// property and whether one of its paths ends as the prediction's does.
func matchOnline(preds []OnlinePrediction, paths map[string][][]consequence.ActorAction) []BaselineViolation {
	var out []BaselineViolation
	for _, pred := range preds {
		bv := BaselineViolation{Property: pred.Property, Shape: pred.Shape, FirstPredictedS: pred.FirstPredictedS,
			Node: pred.Node, HappenedOnline: pred.Happened}
		for _, q := range paths[pred.Property] {
			if !bv.FoundProperty || len(q) < bv.PropertyDepth {
				bv.PropertyDepth = len(q)
			}
			bv.FoundProperty = true
			if len(q) >= pred.Depth && steering.Shape(q[len(q)-pred.Depth:]) == pred.Shape {
				bv.FoundEnding = true
			}
		}
		out = append(out, bv)
	}
	return out
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

// String renders the offline search and the comparison as 'crystalball
// experiment macemc-baseline' prints them below the online run.
func (r *BaselineResult) String() string {
	var b strings.Builder
	off := r.Offline
	fmt.Fprintf(&b, "offline: exhaustive BFS from the initial state of %d nodes, %s per path, budget %.1f s or %d states\n",
		off.Nodes, off.Faults, off.BudgetSeconds, off.MaxStates)
	fmt.Fprintf(&b, "         %d unique states in %.1f s, depth %d (%d complete), stopped by %s\n", off.Unique, off.Seconds, off.Depth, off.DepthComplete, off.Stop)
	for _, f := range off.Found {
		fmt.Fprintf(&b, "         violates %s first at depth %d (%d distinct endings)\n", f.Property, f.Depth, f.Paths)
	}
	if len(off.Found) == 0 {
		fmt.Fprintln(&b, "         no violation")
	}
	fmt.Fprintln(&b)
	if len(r.Violations) == 0 {
		fmt.Fprintln(&b, "nothing was predicted online")
		return b.String()
	}
	fmt.Fprintf(&b, "%-3s %-24s %-13s %-5s %-9s %-16s %s\n", "#", "violation found online", "predicted at", "by", "happened", "BFS: property", "BFS: same ending")
	for i, v := range r.Violations {
		prop := "no"
		if v.FoundProperty {
			prop = fmt.Sprintf("yes (depth %d)", v.PropertyDepth)
		}
		fmt.Fprintf(&b, "%-3d %-24s %-13s %-5v %-9s %-16s %s\n", i+1, v.Property,
			clock(time.Duration(v.FirstPredictedS*float64(time.Second))), v.Node, yesNo(v.HappenedOnline), prop, yesNo(v.FoundEnding))
	}
	fmt.Fprintln(&b, "\nshapes (the path with nodes as roles):")
	for i, v := range r.Violations {
		fmt.Fprintf(&b, "%3d. %s\n", i+1, v.Shape)
	}
	return b.String()
}

// clock renders a time offset as hh:mm:ss.mmm.
func clock(d time.Duration) string {
	return fmt.Sprintf("%02d:%02d:%02d.%03d", d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second, (d%time.Second)/time.Millisecond)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
