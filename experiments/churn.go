package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// ChurnFormat is the format of a ChurnResult.
const ChurnFormat = "crystalball-experiment-randtree-churn/1"

// Defaults of ChurnConfig (the paper's §5.4.1: 25 nodes, 1.4 hours, one
// churn event a minute).
const (
	DefaultChurnNodes            = 25
	DefaultChurnDuration         = 84 * time.Minute
	DefaultChurnPerMinute        = 1.0
	DefaultChurnSeed             = 1 // the seed docs/RESULTS.md uses; not a default: every seed, 0 too, is a seed of its own
	DefaultChurnSnapshots        = 10 * time.Second
	DefaultChurnMaxStates        = 2000
	DefaultChurnMaxInterventions = 5
)

// ChurnWarmup is how long churn waits after the start of a run, so the
// tree forms before nodes start leaving.
const ChurnWarmup = 30 * time.Second

// ChurnConfigs are the configurations RandTreeChurn compares, in order:
// without CrystalBall, with the immediate safety check alone, and with
// execution steering plus the check.
var ChurnConfigs = []string{"off", "immediate", "steer+immediate"}

// ChurnConfig configures RandTreeChurn. Zero fields take the defaults
// above.
type ChurnConfig struct {
	// Nodes is the number of RandTree nodes, at most 1000.
	Nodes int
	// Duration is the emulated time of each run; the last quarter of it
	// (at most 5 minutes) is churn-free healing, and it must leave time
	// for churn after ChurnWarmup.
	Duration time.Duration
	// ChurnPerMinute is the rate of leave-and-rejoin events (negative:
	// no churn).
	ChurnPerMinute float64
	// Seed seeds every run: each configuration sees the same network,
	// churn and node randomness. Every value, 0 included, is a seed of its
	// own: a seed has no default.
	Seed uint64
	// Snapshots is every node's checkpoint and gather interval.
	Snapshots time.Duration
	// MaxStates is the unique-state budget of a steering round's search.
	MaxStates int
	// MaxInterventions is how many times per minute the same kind of
	// event may be kept from a handler before it runs anyway (negative:
	// no bound).
	MaxInterventions int
	// VetoHold, when positive, bounds how long an event kind the
	// immediate check keeps vetoing is held once its budget is spent
	// (steering.Config.VetoHold); zero holds it until the check passes or
	// the liveness guard releases it (steering's default). Negative is an
	// error.
	VetoHold time.Duration
	// BreakConnection makes filters and vetoes also break the connection
	// to a dropped message's sender (the paper's TCP reset).
	BreakConnection bool
	// ResetKinds are the kinds of reset a steering round explores (its
	// one reset per path); zero means silent resets, the paper's Figure 2
	// power failure.
	ResetKinds consequence.ResetKinds
	// Configs names the configurations to run, of ChurnConfigs (nil: all).
	Configs []string
	// Progress, when non-nil, gets a line as each configuration starts.
	Progress io.Writer
}

// vetoHoldText renders a ChurnConfig.VetoHold.
func vetoHoldText(d time.Duration) string {
	if d == 0 {
		return "until the check passes"
	}
	return d.String()
}

// DefaultChurnConfig returns the configuration the zero value means.
func DefaultChurnConfig() ChurnConfig {
	return ChurnConfig{}.withDefaults()
}

func (c ChurnConfig) withDefaults() ChurnConfig {
	orDefault(&c.Nodes, DefaultChurnNodes)
	orDefault(&c.MaxStates, DefaultChurnMaxStates)
	orDefault(&c.MaxInterventions, DefaultChurnMaxInterventions)
	orDefault(&c.Duration, DefaultChurnDuration)
	orDefault(&c.ChurnPerMinute, DefaultChurnPerMinute)
	orDefault(&c.Snapshots, DefaultChurnSnapshots)
	if c.Configs == nil {
		c.Configs = slices.Clone(ChurnConfigs)
	}
	return c
}

// heal is the churn-free time at the end of a run.
func (c ChurnConfig) heal() time.Duration { return min(c.Duration/4, 5*time.Minute) }

// validate checks a configuration with its defaults filled in.
func (c ChurnConfig) validate() error {
	if c.Nodes <= 0 || c.Nodes > 1000 || c.MaxStates <= 0 || c.Snapshots <= 0 || math.IsNaN(c.ChurnPerMinute) || c.Duration-c.heal() <= ChurnWarmup {
		return fmt.Errorf("experiments: randtree-churn: nodes must be in 1..1000, max states and snapshot interval positive, duration longer than %v", ChurnWarmup+c.heal())
	}
	for _, name := range c.Configs {
		if !slices.Contains(ChurnConfigs, name) {
			return fmt.Errorf("experiments: randtree-churn: unknown configuration %q (known: %s)", name, strings.Join(ChurnConfigs, ", "))
		}
	}
	return nil
}

// ChurnResult is the outcome of RandTreeChurn.
type ChurnResult struct {
	// Format is ChurnFormat; Experiment is "randtree-churn".
	Format         string  `json:"format"`
	Experiment     string  `json:"experiment"`
	Nodes          int     `json:"nodes"`
	Duration       string  `json:"duration"`
	ChurnPerMinute float64 `json:"churn_per_minute"`
	Seed           uint64  `json:"seed"`
	Snapshots      string  `json:"snapshot_interval"`
	MaxStates      int     `json:"max_states"`
	ResetKinds     string  `json:"reset_kinds"`
	// VetoHold is ChurnConfig.VetoHold as a duration, or "until the check
	// passes".
	VetoHold string `json:"veto_hold"`
	// Runs has a run per configuration run, in ChurnConfigs order.
	Runs []ChurnRun `json:"runs"`

	// Headline is the figure to read first, beside the paper's; Charts
	// the charts that carry the experiment's figures ('crystalball serve'
	// leads the experiment's page with them).
	Headline Headline        `json:"headline"`
	Charts   []webview.Chart `json:"charts"`
}

// ChurnRun is one configuration's run.
type ChurnRun struct {
	Config string `json:"config"`
	// InconsistentStates sums the safety properties' violated states
	// (the paper's "states that contain inconsistencies").
	InconsistentStates int64            `json:"inconsistent_states"`
	ByProperty         map[string]int64 `json:"by_property"`
	// Episodes counts the runs of consecutive violating states of one
	// property; ByTrigger splits the inconsistent states by the kind of
	// event that opened their episode ("transport-error", "message
	// randtree.Join", "timer recovery", …): what steering would have to
	// stop.
	Episodes  int64            `json:"episodes"`
	ByTrigger map[string]int64 `json:"by_trigger"`
	// Stats are the run's steering counters summed over the nodes (zero
	// for the run off), and ChangedShare the share of the events offered
	// to the gate that steering changed (steering.Stats.ChangedShare).
	steering.Stats
	ChangedShare float64 `json:"changed_share"`
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

// RandTreeChurn runs the paper's §5.4.1: RandTree (every node joining
// through n1) under churn, emulated once per configuration with the same
// seed, counting the states that violate its safety properties and
// whether the tree heals by the end.
func RandTreeChurn(ctx context.Context, cfg ChurnConfig) (*ChurnResult, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	out := &ChurnResult{Format: ChurnFormat, Experiment: "randtree-churn", Nodes: cfg.Nodes, Duration: cfg.Duration.String(),
		ChurnPerMinute: max(cfg.ChurnPerMinute, 0), Seed: cfg.Seed, Snapshots: cfg.Snapshots.String(), MaxStates: cfg.MaxStates,
		ResetKinds: consequence.Faults{SilentResets: true, ResetKinds: cfg.ResetKinds}.Kinds().String(), VetoHold: vetoHoldText(cfg.VetoHold)}
	for _, name := range ChurnConfigs {
		if !slices.Contains(cfg.Configs, name) {
			continue
		}
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "running %s...\n", name)
		}
		run, err := churnRun(ctx, cfg, name)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, run)
	}
	out.Headline, out.Charts = churnHeadline(out), churnCharts(out)
	return out, nil
}

// bootstrapJoin is RandTree's workload in the experiments: every node
// joins through n1 when it starts and after every restart.
func bootstrapJoin(node.ID, bool) []node.Message {
	return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
}

// joinTimer measures, from an emulated run's steps, the time from each
// join call of a node not in the tree to its joining.
type joinTimer struct {
	start map[node.ID]time.Duration
	joins []float64
}

func (j *joinTimer) step(s emulation.Step) {
	st, ok := s.Service.(*randtree.State)
	if !ok {
		return
	}
	switch {
	case s.Event.Kind == node.EventApp:
		if _, isJoin := s.Event.Msg.(randtree.JoinOverlay); isJoin && st.Status != randtree.StatusJoined {
			j.start[s.Node] = s.At
		}
	case s.Event.Kind == node.EventReset:
		delete(j.start, s.Node)
	}
	if t0, ok := j.start[s.Node]; ok && st.Status == randtree.StatusJoined {
		j.joins = append(j.joins, (s.At - t0).Seconds())
		delete(j.start, s.Node)
	}
}

// churnRun runs one configuration.
func churnRun(ctx context.Context, cfg ChurnConfig, name string) (ChurnRun, error) {
	jt := &joinTimer{start: map[node.ID]time.Duration{}}
	ep := newEpisodes()
	ecfg := emulation.Config{

		Spec:      randtree.NewSpec(randtree.DefaultOptions()),
		Nodes:     cfg.Nodes,
		Seed:      cfg.Seed,
		Duration:  cfg.Duration,
		Workload:  bootstrapJoin,
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: cfg.Snapshots, GatherConfig: snapshot.GatherConfig{GatherInterval: cfg.Snapshots}}},
		Observers: emulation.Observers{OnViolation: ep.violation, OnStep: jt.step},
	}
	if cfg.ChurnPerMinute > 0 {
		ecfg.Churn = emulation.ChurnConfig{Rate: cfg.ChurnPerMinute, After: ChurnWarmup, Until: cfg.Duration - cfg.heal()}
	}
	if name != "off" {
		mode := steering.Off
		if name == "steer+immediate" {
			mode = steering.Steer
		}
		sc := steering.Config{
			Mode:               mode,
			Faults:             consequence.Faults{Resets: 1, SilentResets: true, ResetKinds: cfg.ResetKinds},
			SearchBudget:       steering.SearchBudget{MaxStates: cfg.MaxStates},
			InterventionPolicy: steering.InterventionPolicy{BreakConnection: cfg.BreakConnection},
			EscalationPolicy:   steering.EscalationPolicy{MaxInterventions: cfg.MaxInterventions, VetoHold: cfg.VetoHold},
		}
		ecfg.Steering = &emulation.SteeringConfig{Controller: sc, Immediate: true}
	}
	e, err := emulation.New(ecfg)
	if err != nil {
		return ChurnRun{}, fmt.Errorf("experiments: randtree-churn %s: %w", name, err)
	}
	res, err := e.Run(ctx)
	if err != nil {
		return ChurnRun{}, fmt.Errorf("experiments: randtree-churn %s: %w", name, err)
	}
	run := churnAccount(name, res)
	run.Episodes, run.ByTrigger = ep.count, ep.byTrigger
	run.Joins = len(jt.joins)
	run.JoinMean, run.JoinStd = meanStd(jt.joins)
	return run, nil
}

// churnAccount reads a run's counts off the emulator's result.
func churnAccount(name string, res emulation.Result) ChurnRun {
	run := ChurnRun{Config: name, ByProperty: map[string]int64{}, NotLive: []string{}, WallSeconds: res.WallTime.Seconds()}
	for _, s := range res.Safety {
		run.InconsistentStates += s.ViolatedStates
		run.ByProperty[s.Name] = s.ViolatedStates
	}
	if s := res.Steering; s != nil {
		run.Stats = s.Stats
		run.ChangedShare = s.ChangedShare()
	}
	for _, l := range res.Liveness {
		if l.Name == randtree.AllJoined {
			run.AllJoined = l.Holds
		}
		if !l.Holds {
			run.NotLive = append(run.NotLive, l.Name)
		}
	}
	return run
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

// String renders the result as 'crystalball experiment randtree-churn'
// prints it: a row per configuration, then the inconsistent states by
// property.
func (r *ChurnResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "randtree-churn: %d nodes, %s emulated, churn %g/min, seed %d, snapshots every %s, %d states per search, resets explored: %s, vetoes held at most: %s\n\n",
		r.Nodes, r.Duration, r.ChurnPerMinute, r.Seed, r.Snapshots, r.MaxStates, r.ResetKinds, r.VetoHold)
	fmt.Fprintf(&b, "%-16s %12s %9s %9s %9s %9s %8s %8s %16s %6s  %s\n",
		"config", "inconsistent", "predicted", "unhelpful", "filters", "hits", "vetoes", "changed", "join s (mean±sd)", "wall s", "liveness at the end")
	for _, run := range r.Runs {
		live := "all hold"
		if len(run.NotLive) > 0 {
			live = "FAILS: " + strings.Join(run.NotLive, ", ")
		}
		fmt.Fprintf(&b, "%-16s %12d %9d %9d %9d %9d %8d %7.2f%% %8.2f ± %-5.2f %6.1f  %s\n",
			run.Config, run.InconsistentStates, run.Predictions(), run.FiltersUnhelpful, run.FiltersInstalled, run.FilterHits, run.Vetoes,
			100*run.ChangedShare, run.JoinMean, run.JoinStd, run.WallSeconds, live)
	}
	fmt.Fprintln(&b, "\ninconsistent states by property:")
	for _, run := range r.Runs {
		var parts []string
		for _, p := range randtree.SafetyProperties() {
			parts = append(parts, fmt.Sprintf("%s=%d", p.Name, run.ByProperty[p.Name]))
		}
		fmt.Fprintf(&b, "  %-16s %s\n", run.Config, strings.Join(parts, " "))
	}
	fmt.Fprintln(&b, "\ninconsistent states by the event that opened their episode:")
	for _, run := range r.Runs {
		unit := "episodes"
		if run.Episodes == 1 {
			unit = "episode"
		}
		fmt.Fprintf(&b, "  %-16s %d %s: %s\n", run.Config, run.Episodes, unit, triggerText(run.ByTrigger))
	}
	return b.String()
}
