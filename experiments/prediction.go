package experiments

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
)

// PredictionFormat is the format of a PredictionResult.
const PredictionFormat = "crystalball-experiment-randtree-prediction/1"

// Defaults of PredictionConfig.
const (
	DefaultPredictionBudget    = 30 * time.Second
	DefaultPredictionMaxStates = 2_000_000
)

// PredictionConfig configures RandTreePrediction.
type PredictionConfig struct {
	// Budget is the wall-time budget of each search (0:
	// DefaultPredictionBudget; negative: none).
	Budget time.Duration
	// MaxStates is the unique-state budget of each search (0:
	// DefaultPredictionMaxStates; negative: none).
	MaxStates int
	// OnSearch, when non-nil, is called as each search starts with its
	// label; the search reports its completed levels to the level
	// function it returns (nil: none) and calls done, if not nil, when it
	// ends.
	OnSearch SearchObserver
}

// SearchObserver is told of a search as it starts (label names it) and
// returns what watches it: level sees each completed level, done is
// called once when the search ends. Either may be nil.
type SearchObserver func(label string) (level func(consequence.Progress), done func())

// DefaultPredictionConfig returns the configuration the zero value means.
func DefaultPredictionConfig() PredictionConfig {
	return PredictionConfig{Budget: DefaultPredictionBudget, MaxStates: DefaultPredictionMaxStates}
}

func (c PredictionConfig) withDefaults() PredictionConfig {
	orDefault(&c.Budget, DefaultPredictionBudget)
	orDefault(&c.MaxStates, DefaultPredictionMaxStates)
	return c
}

// orDefault sets *v to def if it is the zero value.
func orDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// PredictionResult is the outcome of RandTreePrediction.
type PredictionResult struct {
	// Format is PredictionFormat; Experiment is "randtree-prediction".
	Format     string `json:"format"`
	Experiment string `json:"experiment"`
	// MaxStates and Budget are the searches' budgets (0: none).
	MaxStates int    `json:"max_states"`
	Budget    string `json:"budget"`
	// Prediction is consequence prediction from Figure 2's live state,
	// LiveBFS exhaustive search from that same state, Exhaustive
	// exhaustive search from the initial 5-node state (the paper's MaceMC
	// baseline) and InitialPrediction consequence prediction from the
	// initial state.
	Prediction        SearchReport `json:"prediction"`
	LiveBFS           SearchReport `json:"live_bfs"`
	Exhaustive        SearchReport `json:"exhaustive"`
	InitialPrediction SearchReport `json:"initial_prediction"`
	// DepthTable is, by strategy, the time at which each search from the
	// initial 5-node state completed each level (the paper's Fig. 12
	// shape); the last entry of a search cut off by a budget is the
	// partial level.
	DepthTable map[string][]DepthPoint `json:"depth_table"`
}

// SearchReport is one search of RandTreePrediction.
type SearchReport struct {
	From     string `json:"from"`
	Strategy string `json:"strategy"`
	Found    bool   `json:"found"`
	// Depth is the violation's depth when found, else the deepest level
	// reached (MaxReached).
	Depth int `json:"depth"`
	// Unique is the number of unique states when the violation was found,
	// or explored in all; Seconds the time to the violation, or in all.
	Unique  uint64  `json:"unique"`
	Seconds float64 `json:"seconds"`
	// Stop is why the search ended (consequence.StopReason).
	Stop string `json:"stop"`
	// Path and Violation are the violation's path and error.
	Path       []string `json:"path"`
	Violation  string   `json:"violation"`
	MaxReached int      `json:"max_reached"`
}

// DepthPoint is a search level completed: its depth, the unique states
// then and the time since the search started.
type DepthPoint struct {
	Depth   int     `json:"depth"`
	Unique  uint64  `json:"unique"`
	Seconds float64 `json:"seconds"`
}

// The searches' starting points, as the result names them.
const (
	liveFrom    = "figure 2 live state (n1, n9, n13)"
	initialFrom = "initial state, 5 nodes"
)

// RandTreePrediction runs the paper's §1.2/§5 comparison on RandTree with
// bug 1 (ChildrenSiblingsDisjoint), one silent reset allowed: consequence
// prediction and BFS from Figure 2's live state (reached in emulation),
// then BFS and consequence prediction from the initial state of 5 nodes
// that join through n1. Each search stops at the first violation or at a
// budget.
func RandTreePrediction(ctx context.Context, cfg PredictionConfig) (*PredictionResult, error) {
	cfg = cfg.withDefaults()
	spec := randtree.NewSpec(randtree.DefaultOptions())
	faults := consequence.Faults{Resets: 1, SilentResets: true}
	live, err := figure2Model(spec, faults)
	if err != nil {
		return nil, err
	}
	initial, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 5,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
		Faults: faults})
	if err != nil {
		return nil, fmt.Errorf("experiments: randtree-prediction: %w", err)
	}
	out := &PredictionResult{Format: PredictionFormat, Experiment: "randtree-prediction",
		MaxStates: max(cfg.MaxStates, 0), Budget: max(cfg.Budget, 0).String(), DepthTable: map[string][]DepthPoint{}}
	searches := []struct {
		m        *consequence.ActorModel
		strategy consequence.Strategy
		from     string
		report   *SearchReport
	}{
		{live, consequence.Consequence, liveFrom, &out.Prediction},
		{live, consequence.BFS, liveFrom, &out.LiveBFS},
		{initial, consequence.BFS, initialFrom, &out.Exhaustive},
		{initial, consequence.Consequence, initialFrom, &out.InitialPrediction},
	}
	for _, sr := range searches {
		var table []DepthPoint
		*sr.report, table, err = searchFor(ctx, sr.m, sr.strategy, cfg, sr.from)
		if err != nil {
			return nil, err
		}
		if sr.m == initial {
			out.DepthTable[sr.strategy.String()] = table
		}
	}
	return out, nil
}

// figure2Model returns the actor model of the live state of the first row
// of the paper's Figure 2, reached in emulation by the figure's joins
// (figure2Emulated, seed 1) and built from the checkpoints and
// in-flight messages a snapshot gathered there would hold, with faults
// allowed. A node the explorer resets rejoins as it did in the figure.
func figure2Model(spec node.Spec, faults consequence.Faults) (*consequence.ActorModel, error) {
	cps, inFlight, err := figure2Emulated(spec, 1)
	if err != nil {
		return nil, err
	}
	m, err := consequence.NewActorModelFromCheckpoints(spec, cps, inFlight, consequence.ActorOptions{Faults: faults, Workload: paper.Figure2Workload})
	if err != nil {
		return nil, fmt.Errorf("experiments: figure 2 model: %w", err)
	}
	return m, nil
}

// searchFor searches m for a violation of ChildrenSiblingsDisjoint and
// reports when it was found, with the depth reached over time.
func searchFor(ctx context.Context, m *consequence.ActorModel, s consequence.Strategy, cfg PredictionConfig, from string) (SearchReport, []DepthPoint, error) {
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == randtree.ChildrenSiblingsDisjoint {
			props = append(props, p)
		}
	}
	level, done := observe(cfg.OnSearch, s.String()+" from "+from)
	defer done()
	var table []DepthPoint
	res, err := consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).
		Properties(props...).Strategy(s).MaxStates(max(cfg.MaxStates, 0)).MaxTime(max(cfg.Budget, 0)).StopOnViolation(true).
		Progress(func(p consequence.Progress) {
			table = append(table, DepthPoint{Depth: p.Depth, Unique: p.Unique, Seconds: p.Elapsed.Seconds()})
			level(p)
		}).
		Run(ctx)
	if res == nil {
		return SearchReport{}, nil, fmt.Errorf("experiments: randtree-prediction: %w", err)
	}
	r := SearchReport{From: from, Strategy: s.String(), Depth: res.Depth, MaxReached: res.Depth, Unique: res.Unique,
		Seconds: res.Elapsed.Seconds(), Stop: res.Stop.String(), Path: []string{}}
	if v, ok := res.Violated(randtree.ChildrenSiblingsDisjoint); ok {
		r.Found, r.Depth, r.Violation = true, v.Depth, v.Err.Error()
		for _, a := range v.Path {
			r.Path = append(r.Path, a.Act.String())
		}
	}
	if err != nil {
		return r, table, fmt.Errorf("experiments: randtree-prediction: %w", err)
	}
	return r, table, nil
}

// observe starts watching a search with o (nil: nobody) and returns a
// level callback and a done function that are never nil.
func observe(o SearchObserver, label string) (func(consequence.Progress), func()) {
	level, done := func(consequence.Progress) {}, func() {}
	if o == nil {
		return level, done
	}
	l, d := o(label)
	if l != nil {
		level = l
	}
	if d != nil {
		done = d
	}
	return level, done
}

// String renders the result as 'crystalball experiment randtree-prediction'
// prints it: the four searches, the paths found, and the depth reached
// over time from the initial state.
func (r *PredictionResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "randtree-prediction: ChildrenSiblingsDisjoint (bug 1), one silent reset allowed; budget %s or %d states per search\n\n", r.Budget, r.MaxStates)
	fmt.Fprintf(&b, "%-34s %-12s %-6s %6s %10s %9s  %s\n", "from", "strategy", "found", "depth", "states", "seconds", "stopped by")
	for _, s := range []SearchReport{r.Prediction, r.LiveBFS, r.Exhaustive, r.InitialPrediction} {
		fmt.Fprintf(&b, "%-34s %-12s %-6v %6d %10d %9.3f  %s\n", s.From, s.Strategy, s.Found, s.Depth, s.Unique, s.Seconds, s.Stop)
	}
	fmt.Fprintln(&b, "(depth: of the violation when found, else the deepest level reached)")
	for _, s := range []SearchReport{r.Prediction, r.InitialPrediction} {
		if s.Found {
			fmt.Fprintf(&b, "\npath found by consequence prediction from the %s:\n  %s\n", s.From, strings.Join(s.Path, ",\n  "))
		}
	}
	fmt.Fprintf(&b, "\ndepth reached over time from the initial 5-node state:\n%6s %14s %14s\n", "depth", "bfs (s)", "consequence (s)")
	maxDepth := 0
	for _, t := range r.DepthTable {
		for _, p := range t {
			maxDepth = max(maxDepth, p.Depth)
		}
	}
	cell := func(t []DepthPoint, d int) string {
		for _, p := range t {
			if p.Depth == d {
				return fmt.Sprintf("%.3f", p.Seconds)
			}
		}
		return "-"
	}
	for d := 1; d <= maxDepth; d++ {
		fmt.Fprintf(&b, "%6d %14s %14s\n", d, cell(r.DepthTable["bfs"], d), cell(r.DepthTable["consequence"], d))
	}
	for _, s := range []SearchReport{r.Exhaustive, r.InitialPrediction} {
		if s.Stop == consequence.StopCompleted.String() {
			fmt.Fprintf(&b, "(%s from the %s explored all it could reach: %d states, depth %d)\n", s.Strategy, s.From, s.Unique, s.MaxReached)
		}
	}
	return b.String()
}
