package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
)

// experimentOutput is the --json form of 'experiment randtree-prediction'.
type experimentOutput struct {
	Experiment string `json:"experiment"`
	MaxStates  int    `json:"max_states"`
	Budget     string `json:"budget"`
	// Prediction is consequence prediction from Figure 2's live state,
	// LiveBFS exhaustive search from that same state, Exhaustive exhaustive
	// search from the initial 5-node state (the paper's MaceMC baseline)
	// and InitialPrediction consequence prediction from the initial state.
	Prediction        searchReport `json:"prediction"`
	LiveBFS           searchReport `json:"live_bfs"`
	Exhaustive        searchReport `json:"exhaustive"`
	InitialPrediction searchReport `json:"initial_prediction"`
	// DepthTable is the time at which each search from the initial 5-node
	// state completed each level (the paper's Fig. 12 shape); the last
	// entry of a search cut off by a budget is the partial level.
	DepthTable map[string][]depthPoint `json:"depth_table"`
}

// searchReport is one search of the experiment.
type searchReport struct {
	From       string   `json:"from"`
	Strategy   string   `json:"strategy"`
	Found      bool     `json:"found"`
	Depth      int      `json:"depth"`       // of the violation, or reached
	Unique     uint64   `json:"unique"`      // states when found, or explored
	Seconds    float64  `json:"seconds"`     // to the violation, or in all
	Stop       string   `json:"stop"`        // why the search ended
	Path       []string `json:"path"`        // of the violation
	Violation  string   `json:"violation"`   // its error
	MaxReached int      `json:"max_reached"` // deepest level explored
}

type depthPoint struct {
	Depth   int     `json:"depth"`
	Unique  uint64  `json:"unique"`
	Seconds float64 `json:"seconds"`
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
	return consequence.NewActorModelFromCheckpoints(spec, cps, inFlight, consequence.ActorOptions{Faults: faults, Workload: paper.Figure2Workload})
}

// experiments are the paper's experiments, by name.
var experiments = map[string]func(args []string, stdout, stderr io.Writer) error{
	"randtree-prediction": runRandTreePrediction,
	"randtree-churn":      runRandTreeChurn,
	"paxos":               runPaxosExperiment,
	"macemc-baseline":     runMaceMCBaseline,
}

func runExperiment(args []string, stdout, stderr io.Writer) error {
	var names []string
	for n := range experiments {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(args) == 0 || experiments[args[0]] == nil {
		return usagef("usage: crystalball experiment NAME [flags] (known experiments: %s)", strings.Join(names, ", "))
	}
	return experiments[args[0]](args[1:], stdout, stderr)
}

func runRandTreePrediction(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment randtree-prediction", stderr)
	budget := durationFlag(fs, "budget", 30*time.Second, "wall-time budget of each search")
	maxStates := fs.Int("max-states", 2_000_000, "state budget of each search")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the tables")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: crystalball experiment randtree-prediction [flags]")
		fmt.Fprintln(fs.Output(), "The paper's §1.2/§5 comparison: consequence prediction from Figure 2's live state against exhaustive search from the initial 5-node state.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *budget < 0 || *maxStates < 0 {
		return usagef("--budget and --max-states must not be negative")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	spec := randtree.NewSpec(randtree.DefaultOptions())
	faults := consequence.Faults{Resets: 1, SilentResets: true}
	out := experimentOutput{Experiment: "randtree-prediction", MaxStates: *maxStates, Budget: budget.String(), DepthTable: map[string][]depthPoint{}}

	live, err := figure2Model(spec, faults)
	if err != nil {
		return err
	}
	initial, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 5,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
		Faults: faults})
	if err != nil {
		return err
	}
	const liveFrom, initialFrom = "figure 2 live state (n1, n9, n13)", "initial state, 5 nodes"
	searches := []struct {
		m        *consequence.ActorModel
		strategy consequence.Strategy
		from     string
		report   *searchReport
	}{
		{live, consequence.Consequence, liveFrom, &out.Prediction},
		{live, consequence.BFS, liveFrom, &out.LiveBFS},
		{initial, consequence.BFS, initialFrom, &out.Exhaustive},
		{initial, consequence.Consequence, initialFrom, &out.InitialPrediction},
	}
	for _, sr := range searches {
		var progress *progressPrinter
		if !*asJSON {
			progress = newProgress(stderr, sr.strategy.String()+" from "+sr.from)
		}
		var table []depthPoint
		*sr.report, table, err = searchFor(ctx, sr.m, sr.strategy, *maxStates, *budget, sr.from, progress)
		if progress != nil {
			progress.close()
		}
		if err != nil {
			return err
		}
		if sr.m == initial {
			out.DepthTable[sr.strategy.String()] = table
		}
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "randtree-prediction: ChildrenSiblingsDisjoint (bug 1), one silent reset allowed; budget %v or %d states per search\n\n", budget, *maxStates)
	fmt.Fprintf(stdout, "%-34s %-12s %-6s %6s %10s %9s  %s\n", "from", "strategy", "found", "depth", "states", "seconds", "stopped by")
	for _, r := range []searchReport{out.Prediction, out.LiveBFS, out.Exhaustive, out.InitialPrediction} {
		fmt.Fprintf(stdout, "%-34s %-12s %-6v %6d %10d %9.3f  %s\n", r.From, r.Strategy, r.Found, r.Depth, r.Unique, r.Seconds, r.Stop)
	}
	fmt.Fprintln(stdout, "(depth: of the violation when found, else the deepest level reached)")
	for _, r := range []searchReport{out.Prediction, out.InitialPrediction} {
		if r.Found {
			fmt.Fprintf(stdout, "\npath found by consequence prediction from the %s:\n  %s\n", r.From, strings.Join(r.Path, ",\n  "))
		}
	}
	fmt.Fprintf(stdout, "\ndepth reached over time from the initial 5-node state:\n%6s %14s %14s\n", "depth", "bfs (s)", "consequence (s)")
	maxDepth := 0
	for _, t := range out.DepthTable {
		for _, p := range t {
			maxDepth = max(maxDepth, p.Depth)
		}
	}
	for d := 1; d <= maxDepth; d++ {
		cell := func(t []depthPoint) string {
			for _, p := range t {
				if p.Depth == d {
					return fmt.Sprintf("%.3f", p.Seconds)
				}
			}
			return "-"
		}
		fmt.Fprintf(stdout, "%6d %14s %14s\n", d, cell(out.DepthTable["bfs"]), cell(out.DepthTable["consequence"]))
	}
	for _, r := range []searchReport{out.Exhaustive, out.InitialPrediction} {
		if r.Stop == consequence.StopCompleted.String() {
			fmt.Fprintf(stdout, "(%s from the %s explored all it could reach: %d states, depth %d)\n", r.Strategy, r.From, r.Unique, r.MaxReached)
		}
	}
	return nil
}

// searchFor searches m for a violation of ChildrenSiblingsDisjoint and
// reports when it was found, with the depth reached over time.
// progress, if not nil, is shown the search's levels.
func searchFor(ctx context.Context, m *consequence.ActorModel, s consequence.Strategy, maxStates int, budget time.Duration, from string, progress *progressPrinter) (searchReport, []depthPoint, error) {
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == randtree.ChildrenSiblingsDisjoint {
			props = append(props, p)
		}
	}
	var table []depthPoint
	res, err := consequence.NewChecker(m).
		Properties(props...).Strategy(s).MaxStates(maxStates).MaxTime(budget).StopOnViolation(true).
		Progress(func(p consequence.Progress) {
			table = append(table, depthPoint{Depth: p.Depth, Unique: p.Unique, Seconds: p.Elapsed.Seconds()})
			if progress != nil {
				progress.level(p)
			}
		}).
		Run(ctx)
	if err != nil && res == nil {
		return searchReport{}, nil, err
	}
	r := searchReport{From: from, Strategy: s.String(), Depth: res.Depth, MaxReached: res.Depth, Unique: res.Unique,
		Seconds: res.Elapsed.Seconds(), Stop: res.Stop.String(), Path: []string{}}
	if v, ok := res.Violated(randtree.ChildrenSiblingsDisjoint); ok {
		r.Found, r.Depth, r.Violation = true, v.Depth, v.Err.Error()
		for _, a := range v.Path {
			r.Path = append(r.Path, a.Act.String())
		}
	}
	return r, table, err
}
