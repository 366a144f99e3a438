package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// churnOutput is the --json form of 'experiment randtree-churn'.
type churnOutput struct {
	Experiment string     `json:"experiment"`
	Nodes      int        `json:"nodes"`
	Duration   string     `json:"duration"`
	Churn      string     `json:"churn"`
	Seed       uint64     `json:"seed"`
	Snapshots  string     `json:"snapshot_interval"`
	MaxStates  int        `json:"max_states"`
	Runs       []churnRun `json:"runs"`
}

// churnRun is one configuration's run.
type churnRun struct {
	Config string `json:"config"`
	// InconsistentStates sums the safety properties' violated states
	// (the paper's "states that contain inconsistencies").
	InconsistentStates int64            `json:"inconsistent_states"`
	ByProperty         map[string]int64 `json:"by_property"`
	// Predicted counts predicted violations; Unhelpful the filters whose
	// check still found one; FiltersInstalled the filters installed;
	// FilterHits the events filters changed; Vetoes the immediate check's.
	Rounds           uint64  `json:"rounds"`
	RoundsReused     uint64  `json:"rounds_reused"`
	StatesExplored   uint64  `json:"states_explored"`
	Predicted        uint64  `json:"predicted"`
	Unhelpful        uint64  `json:"unhelpful"`
	FiltersInstalled uint64  `json:"filters_installed"`
	FilterHits       uint64  `json:"filter_hits"`
	Vetoes           uint64  `json:"immediate_check_vetoes"`
	Actions          uint64  `json:"actions"`
	ChangedShare     float64 `json:"changed_share"`
	// Joins, JoinMean and JoinStd describe the time from a node's join
	// call to its joining the tree, in seconds.
	Joins    int     `json:"joins"`
	JoinMean float64 `json:"join_mean_s"`
	JoinStd  float64 `json:"join_std_s"`
	// AllJoined reports RandTree's AllJoined at the end of the run, after
	// the heal phase; NotLive lists every liveness property that does not
	// hold then (empty: the tree healed completely).
	AllJoined   bool     `json:"all_joined"`
	NotLive     []string `json:"not_live"`
	WallSeconds float64  `json:"wall_seconds"`
}

// churnConfigs are the configurations 'randtree-churn' compares, as the
// paper's §5.4.1 does.
var churnConfigs = []struct {
	name      string
	mode      steering.Mode
	immediate bool
}{
	{"off", steering.Off, false},
	{"immediate", steering.Off, true},
	{"steer+immediate", steering.Steer, true},
}

func runRandTreeChurn(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment randtree-churn", stderr)
	nodes := fs.Int("nodes", 25, "RandTree nodes")
	duration := durationFlag(fs, "duration", 84*time.Minute, "emulated time of each run (the paper: 1.4h)")
	churn := fs.String("churn", "1/m", "leave-and-rejoin events per unit of time")
	seed := fs.Uint64("seed", 1, "seed of every run (the same network, churn and node randomness in each configuration)")
	snapEvery := durationFlag(fs, "snapshots", 10*time.Second, "checkpoint and gather interval of every node")
	maxStates := fs.Int("max-states", 2000, "unique states per search of a steering round")
	configs := fs.String("configs", "off,immediate,steer+immediate", "configurations to run, a comma list")
	maxInterventions := fs.Int("max-interventions", 5, "times per minute the same kind of event may be kept from a handler before it runs anyway (negative: no bound)")
	breakConn := fs.Bool("break-connection", false, "filters and vetoes also break the connection to a dropped message's sender (the paper's TCP reset)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: crystalball experiment randtree-churn [flags]")
		fmt.Fprintln(fs.Output(), "The paper's §5.4.1: RandTree under churn without CrystalBall, with the immediate safety check only, and with execution steering plus the check.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	rate, err := parseRate(*churn)
	if err != nil {
		return usagef("--churn: %v", err)
	}
	heal := min(*duration/4, 5*time.Minute)
	if *nodes <= 0 || *nodes > 1000 || *maxStates <= 0 || *snapEvery <= 0 || *duration-heal <= churnWarmup {
		return usagef("--nodes must be in 1..1000, --max-states and --snapshots positive, --duration longer than %v", churnWarmup+heal)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	want := map[string]bool{}
	for _, c := range splitList(*configs) {
		want[c] = true
	}
	out := churnOutput{Experiment: "randtree-churn", Nodes: *nodes, Duration: duration.String(), Churn: *churn,
		Seed: *seed, Snapshots: snapEvery.String(), MaxStates: *maxStates}
	for _, c := range churnConfigs {
		if !want[c.name] {
			continue
		}
		delete(want, c.name)
		if !*asJSON {
			fmt.Fprintf(stderr, "running %s...\n", c.name)
		}
		run, err := churnExperimentRun(ctx, c.name, c.mode, c.immediate, *nodes, *duration, heal, rate, *seed, *snapEvery, *maxStates, *breakConn, *maxInterventions)
		if err != nil {
			return err
		}
		out.Runs = append(out.Runs, run)
	}
	for name := range want {
		return usagef("--configs: unknown configuration %q (known: off, immediate, steer+immediate)", name)
	}
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	fmt.Fprintf(stdout, "randtree-churn: %d nodes, %v emulated, churn %s, seed %d, snapshots every %v, %d states per search\n\n",
		out.Nodes, *duration, out.Churn, out.Seed, *snapEvery, out.MaxStates)
	fmt.Fprintf(stdout, "%-16s %12s %9s %9s %9s %9s %8s %8s %16s %6s  %s\n",
		"config", "inconsistent", "predicted", "unhelpful", "filters", "hits", "vetoes", "changed", "join s (mean±sd)", "wall s", "liveness at the end")
	for _, r := range out.Runs {
		live := "all hold"
		if len(r.NotLive) > 0 {
			live = "FAILS: " + strings.Join(r.NotLive, ", ")
		}
		fmt.Fprintf(stdout, "%-16s %12d %9d %9d %9d %9d %8d %7.2f%% %8.2f ± %-5.2f %6.1f  %s\n",
			r.Config, r.InconsistentStates, r.Predicted, r.Unhelpful, r.FiltersInstalled, r.FilterHits, r.Vetoes,
			100*r.ChangedShare, r.JoinMean, r.JoinStd, r.WallSeconds, live)
	}
	fmt.Fprintln(stdout, "\ninconsistent states by property:")
	for _, r := range out.Runs {
		var parts []string
		for _, p := range randtree.SafetyProperties() {
			parts = append(parts, fmt.Sprintf("%s=%d", p.Name, r.ByProperty[p.Name]))
		}
		fmt.Fprintf(stdout, "  %-16s %s\n", r.Config, strings.Join(parts, " "))
	}
	return nil
}

// churnExperimentRun runs one configuration.
func churnExperimentRun(ctx context.Context, name string, mode steering.Mode, immediate bool, nodes int, duration, heal time.Duration, rate float64, seed uint64, snapEvery time.Duration, maxStates int, breakConn bool, maxInterventions int) (churnRun, error) {
	svc, err := lookupService(randtree.Name, nil, nodes)
	if err != nil {
		return churnRun{}, err
	}
	joinStart := map[node.ID]time.Duration{}
	var joins []float64
	cfg := emulation.Config{
		Spec:     svc.spec,
		Nodes:    nodes,
		Seed:     seed,
		Duration: duration,
		Workload: svc.workload,
		Churn: emulation.ChurnConfig{
			Rate:  rate,
			After: churnWarmup,
			Until: duration - heal,
		},
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: snapEvery, GatherInterval: snapEvery}},
		OnStep: func(s emulation.Step) {
			st, ok := s.Service.(*randtree.State)
			if !ok {
				return
			}
			switch {
			case s.Event.Kind == node.EventApp:
				if _, isJoin := s.Event.Msg.(randtree.JoinOverlay); isJoin && st.Status != randtree.StatusJoined {
					joinStart[s.Node] = s.At
				}
			case s.Event.Kind == node.EventReset:
				delete(joinStart, s.Node)
			}
			if t0, ok := joinStart[s.Node]; ok && st.Status == randtree.StatusJoined {
				joins = append(joins, (s.At - t0).Seconds())
				delete(joinStart, s.Node)
			}
		},
	}
	if mode != steering.Off || immediate {
		cfg.Steering = &emulation.SteeringConfig{
			Controller: steering.Config{
				Mode:             mode,
				Faults:           consequence.Faults{Resets: 1, SilentResets: true},
				MaxStates:        maxStates,
				BreakConnection:  breakConn,
				MaxInterventions: maxInterventions,
			},
			Immediate: immediate,
		}
	}
	e, err := emulation.New(cfg)
	if err != nil {
		return churnRun{}, err
	}
	start := time.Now()
	res, err := e.Run(ctx)
	if err != nil {
		return churnRun{}, err
	}
	run := churnRun{Config: name, ByProperty: map[string]int64{}, WallSeconds: time.Since(start).Seconds()}
	for _, s := range res.Safety {
		run.InconsistentStates += s.ViolatedStates
		run.ByProperty[s.Name] = s.ViolatedStates
	}
	if s := res.Steering; s != nil {
		run.Rounds, run.RoundsReused, run.StatesExplored = s.Rounds, s.RoundsReused, s.StatesExplored
		for _, n := range s.Predicted {
			run.Predicted += n
		}
		run.Unhelpful, run.FiltersInstalled = s.Unhelpful, s.FiltersInstalled
		run.FilterHits, run.Vetoes, run.Actions = s.FilterHits, s.Vetoes, s.Handled
		run.ChangedShare = s.ChangedShare()
	}
	run.NotLive = []string{}
	for _, l := range res.Liveness {
		if l.Name == randtree.AllJoined {
			run.AllJoined = l.Holds
		}
		if !l.Holds {
			run.NotLive = append(run.NotLive, l.Name)
		}
	}
	run.Joins = len(joins)
	run.JoinMean, run.JoinStd = meanStd(joins)
	return run, nil
}

// meanStd returns the mean and the standard deviation of xs.
func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	var sq float64
	for _, x := range xs {
		sq += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(sq / float64(len(xs)))
}
