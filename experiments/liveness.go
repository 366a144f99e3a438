package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// RandTreeLiveness is MaceMC's RandTree liveness bug (§6 of the MaceMC
// paper) in an emulated 25-node tree, scripted as the Paxos experiment
// scripts Figure 13 and run over many gaps. Every node joins through n1 at
// the start; the application does not rejoin a node by itself after a
// reset (the script does). Each run draws a victim C among n2..nN and a gap
// g in [0, MaxGap):
//
//	t = 60 s       C goes down with its RST (its links are dropped cleanly).
//	t = 70 s       C comes back and joins through n1, which passes the
//	               join down the tree to a node A with room; A accepts C
//	               and sends its JoinReply over a new connection.
//	70 s + g       C resets silently. A JoinReply still on its way reaches
//	               C's new incarnation, which ignores it in Init (the bug):
//	               A keeps C as a child.
//	+ 3 s          the application asks C to join again, through n1; if
//	               the join lands at another node than A, A keeps C for
//	               ever (without FixStaleChild: its keepalives go over a
//	               connection C's new incarnation accepted).
//	+ 2 min        the run ends; the liveness properties are checked.
//
// Each run is emulated three ways with the same seed: without CrystalBall,
// in deep online debugging (every node gathers its neighbourhood every
// SnapEvery and runs rounds that predict, walks included), and with
// execution steering on every node. A run is bitten when ParentChildAgree
// fails at its end; predicted when a debug round predicted a liveness dead
// end of ParentChildAgree before the script's second join (the bug's last
// chance to be avoided); avoided when the steered run ends live although
// the run without CrystalBall was bitten.
type RandTreeLivenessConfig struct {
	// Seed is the experiment's seed (required: no default).
	Seed uint64
	// Runs is the number of runs (default 100).
	Runs int
	// Nodes is the tree's size (default 25).
	Nodes int
	// MaxGap bounds the gap between C's join and its silent reset
	// (default 600 ms: the JoinReply's flight ends within it on the
	// emulator's default topology).
	MaxGap time.Duration
	// SnapEvery is the snapshot and round interval in the debug and steer
	// runs (default 10 s).
	SnapEvery time.Duration
	// Fixes are RandTree's corrections (randtree.Options.EnableFix names);
	// none means the paper's protocol, with MaceMC's bug.
	Fixes []string
	// Steering is the controllers' configuration (zero: the defaults, one
	// silent reset per path); Mode and Spec are set per run.
	Steering steering.Config
	// Workers runs this many runs at once (default: the number of CPUs).
	Workers int
	// Progress, when non-nil, gets a line per finished run.
	Progress io.Writer
}

// RandTreeLivenessFormat names the JSON form of RandTreeLivenessResult.
const RandTreeLivenessFormat = "crystalball-experiment-randtree-liveness/1"

// RandTreeLivenessResult is the outcome of RandTreeLiveness.
type RandTreeLivenessResult struct {
	Format     string                `json:"format"`
	Experiment string                `json:"experiment"`
	Seed       uint64                `json:"seed"`
	Nodes      int                   `json:"nodes"`
	MaxGapS    float64               `json:"max_gap_s"`
	Fixes      []string              `json:"fixes"`
	Runs       []RandTreeLivenessRun `json:"runs"`
	// Bitten counts the runs without CrystalBall that end with
	// ParentChildAgree failing; Predicted the runs whose debug rounds
	// predicted its dead end in time; DebugPredictions the runs whose
	// debug rounds predicted any liveness dead end, in time or not.
	Bitten, Predicted, DebugPredictions int
	// SteeredBitten counts the steered runs that end with ParentChildAgree
	// failing; Avoided the bitten runs whose steered twin ends live.
	SteeredBitten, Avoided int

	// Headline is the figure to read first, beside the paper's; Charts
	// the charts that carry the experiment's figures ('crystalball serve'
	// leads the experiment's page with them).
	Headline Headline        `json:"headline"`
	Charts   []webview.Chart `json:"charts"`
}

// RandTreeLivenessRun is one run of RandTreeLiveness.
type RandTreeLivenessRun struct {
	Run    int     `json:"run"`
	Seed   uint64  `json:"seed"`
	Victim node.ID `json:"victim"`
	GapS   float64 `json:"gap_s"`
	// Parent is the node that accepted C's first join (none when C's join
	// had not been answered when it reset).
	Parent node.ID `json:"parent"`
	// Bitten, DebugBitten and SteeredBitten: ParentChildAgree failed at the
	// end without CrystalBall, in the debug run, in the steered run.
	Bitten        bool `json:"bitten"`
	DebugBitten   bool `json:"debug_bitten"`
	SteeredBitten bool `json:"steered_bitten"`
	// Predictions are the debug run's liveness dead ends, in order:
	// "at +Ns by nX: Property, critical: action".
	Predictions []string `json:"predictions,omitempty"`
	// InTime is set when a ParentChildAgree dead end was predicted before
	// the second join.
	InTime bool `json:"in_time"`
	// Filters counts the steered run's filters installed, FilterHits its
	// events kept from a handler.
	Filters    uint64 `json:"filters"`
	FilterHits uint64 `json:"filter_hits"`
	// Final is the liveness verdict of the run without CrystalBall.
	Final string `json:"final"`
}

// Script times of RandTreeLiveness.
const (
	livenessDown   = 60 * time.Second
	livenessUp     = 70 * time.Second
	livenessRejoin = 3 * time.Second
	livenessHeal   = 2 * time.Minute
)

func (c RandTreeLivenessConfig) withDefaults() (RandTreeLivenessConfig, error) {
	if c.Runs == 0 {
		c.Runs = 100
	}
	if c.Nodes == 0 {
		c.Nodes = 25
	}
	if c.MaxGap == 0 {
		c.MaxGap = 600 * time.Millisecond
	}
	if c.SnapEvery == 0 {
		c.SnapEvery = 10 * time.Second
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.Steering.Faults == (consequence.Faults{}) {
		c.Steering.Faults = consequence.Faults{Resets: 1, SilentResets: true}
	}
	switch {
	case c.Runs < 0:
		return c, fmt.Errorf("experiments: randtree-liveness: negative run count %d", c.Runs)
	case c.Nodes < 3 || c.Nodes > emulation.MaxNodes:
		return c, fmt.Errorf("experiments: randtree-liveness: %d nodes (want 3 to %d)", c.Nodes, emulation.MaxNodes)
	case c.MaxGap < 0 || c.SnapEvery < 0:
		return c, fmt.Errorf("experiments: randtree-liveness: negative gap or snapshot interval")
	}
	return c, nil
}

// RandTreeLiveness runs the experiment. Runs are independent, each a pure
// function of the seed and its index, and may run concurrently (Workers).
func RandTreeLiveness(ctx context.Context, cfg RandTreeLivenessConfig) (*RandTreeLivenessResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	opts := randtree.DefaultOptions()
	for _, f := range cfg.Fixes {
		if err := opts.EnableFix(f); err != nil {
			return nil, fmt.Errorf("experiments: randtree-liveness: %w", err)
		}
	}
	res := &RandTreeLivenessResult{Format: RandTreeLivenessFormat, Experiment: "randtree-liveness", Seed: cfg.Seed,
		Nodes: cfg.Nodes, MaxGapS: cfg.MaxGap.Seconds(), Fixes: opts.Fixes(), Runs: make([]RandTreeLivenessRun, cfg.Runs)}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		next = make(chan int)
	)
	for w := 0; w < cfg.Workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				run, err := livenessRun(ctx, cfg, opts, r)
				mu.Lock()
				res.Runs[r] = run
				if err != nil {
					errs = append(errs, err)
				} else if cfg.Progress != nil {
					fmt.Fprintf(cfg.Progress, "run %d: %s\n", r, run)
				}
				mu.Unlock()
			}
		}()
	}
	for r := 0; r < cfg.Runs && ctx.Err() == nil; r++ {
		next <- r
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return res, err
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("experiments: randtree-liveness: %w", err)
	}
	res.tally()
	res.Headline, res.Charts = livenessHeadline(res), livenessCharts(res)
	return res, nil
}

func (r *RandTreeLivenessResult) tally() {
	for _, run := range r.Runs {
		r.Bitten += btoi(run.Bitten)
		r.Predicted += btoi(run.InTime)
		r.DebugPredictions += btoi(len(run.Predictions) > 0)
		r.SteeredBitten += btoi(run.SteeredBitten)
		r.Avoided += btoi(run.Bitten && !run.SteeredBitten)
	}
}

// String renders one line per run.
func (run RandTreeLivenessRun) String() string {
	return fmt.Sprintf("victim %v gap %.3fs parent %v: bitten %v (debug %v, steered %v), %d dead ends predicted (in time %v), %d filters, %d hits",
		run.Victim, run.GapS, run.Parent, run.Bitten, run.DebugBitten, run.SteeredBitten, len(run.Predictions), run.InTime, run.Filters, run.FilterHits)
}

// String renders the result's summary.
func (r *RandTreeLivenessResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "randtree-liveness: %d runs, %d nodes, seed %d, gaps in [0, %.3fs), fixes [%s]\n",
		len(r.Runs), r.Nodes, r.Seed, r.MaxGapS, strings.Join(r.Fixes, " "))
	fmt.Fprintf(&b, "  without CrystalBall: %d runs end with ParentChildAgree failing\n", r.Bitten)
	fmt.Fprintf(&b, "  deep online debugging: dead ends predicted in %d runs, ParentChildAgree's in time in %d\n", r.DebugPredictions, r.Predicted)
	fmt.Fprintf(&b, "  execution steering: %d runs end with ParentChildAgree failing; %d of the %d bitten runs avoided\n", r.SteeredBitten, r.Avoided, r.Bitten)
	return b.String()
}

// livenessRun runs run r of the experiment three ways.
func livenessRun(ctx context.Context, cfg RandTreeLivenessConfig, opts randtree.Options, r int) (RandTreeLivenessRun, error) {
	rs := PaxosRunSeed(cfg.Seed, r)
	rng := rand.New(rand.NewPCG(rs, paxosGapStream))
	run := RandTreeLivenessRun{Run: r, Seed: rs, Victim: node.ID(2 + rng.IntN(cfg.Nodes-1))}
	gap := time.Duration(rng.Float64() * float64(cfg.MaxGap))
	run.GapS = gap.Seconds()
	off, err := livenessScenario(ctx, cfg, opts, rs, run.Victim, gap, steering.Off)
	if err != nil {
		return run, err
	}
	run.Bitten, run.Parent, run.Final = off.bitten, off.parent, off.final
	debug, err := livenessScenario(ctx, cfg, opts, rs, run.Victim, gap, steering.Debug)
	if err != nil {
		return run, err
	}
	run.DebugBitten, run.Predictions, run.InTime = debug.bitten, debug.predictions, debug.inTime
	steer, err := livenessScenario(ctx, cfg, opts, rs, run.Victim, gap, steering.Steer)
	if err != nil {
		return run, err
	}
	run.SteeredBitten, run.Filters, run.FilterHits = steer.bitten, steer.filters, steer.hits
	return run, nil
}

// livenessOutcome is what one emulation of a run showed.
type livenessOutcome struct {
	bitten      bool
	parent      node.ID
	final       string
	predictions []string
	inTime      bool
	filters     uint64
	hits        uint64
}

// livenessScenario emulates the script once in mode (Off: no snapshots).
func livenessScenario(ctx context.Context, cfg RandTreeLivenessConfig, opts randtree.Options, seed uint64, c node.ID, gap time.Duration, mode steering.Mode) (livenessOutcome, error) {
	var out livenessOutcome
	rejoin := livenessUp + gap + livenessRejoin
	ecfg := emulation.Config{
		Spec:  randtree.NewSpec(opts),
		Nodes: cfg.Nodes,
		Seed:  seed,
		Workload: func(id node.ID, restart bool) []node.Message {
			if restart {
				return nil // the script rejoins C
			}
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		},
	}
	if mode != steering.Off {
		sc := cfg.Steering
		sc.Mode = mode
		sc.Workload = func(node.ID, bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}}
		}
		ecfg.Snapshots = &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: cfg.SnapEvery, GatherConfig: snapshot.GatherConfig{GatherInterval: cfg.SnapEvery}}}
		ecfg.Steering = &emulation.SteeringConfig{Controller: sc, OnRound: func(id node.ID, at time.Duration, rep *steering.RoundReport) {
			for _, p := range rep.Predictions {
				if p.Critical == nil {
					continue
				}
				out.predictions = append(out.predictions, fmt.Sprintf("at %.1fs by %v: %s, critical: %v", at.Seconds(), id, p.Property, p.Path[p.Critical.Step]))
				if p.Property == randtree.ParentChildAgree && at < rejoin {
					out.inTime = true
				}
			}
		}}
	}
	e, err := emulation.New(ecfg)
	if err != nil {
		return out, fmt.Errorf("experiments: randtree-liveness: seed %d: %w", seed, err)
	}
	join := randtree.JoinOverlay{Targets: []node.ID{1}}
	steps := []scriptStep{
		{livenessDown, func() error { return e.Down(c, false) }},
		{livenessUp, func() error {
			if err := e.Up(c); err != nil {
				return err
			}
			return e.Submit(c, join)
		}},
		{livenessUp + gap, func() error {
			out.parent = parentHolding(e.View(), c)
			return e.Reset(c, true)
		}},
		{rejoin, func() error { return e.Submit(c, join) }},
		{rejoin + livenessHeal, nil},
	}
	if err := runScript(ctx, e, steps, "randtree-liveness", seed); err != nil {
		return out, err
	}
	r := e.Result()
	var verdicts []string
	for _, l := range r.Liveness {
		if !l.Holds {
			verdicts = append(verdicts, l.Name+": "+l.Error)
			out.bitten = out.bitten || l.Name == randtree.ParentChildAgree
		}
	}
	out.final = strings.Join(verdicts, "; ")
	if st := r.Steering; st != nil {
		out.filters, out.hits = st.FiltersInstalled, st.FilterHits
	}
	return out, nil
}

// parentHolding returns the node of v that holds c as a child (the
// lowest, if several do), or none.
func parentHolding(v node.View, c node.ID) node.ID {
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*randtree.State); ok && slices.Contains(s.Children, c) {
			return id
		}
	}
	return node.None
}
