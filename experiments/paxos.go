package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// Paxos is the paper's §5.4.2 (Figures 13 and 14): Figure 13's
// scenario on three Paxos nodes, A=n1, B=n2, C=n3, run many times with the
// time between its two rounds drawn uniformly from [0, 60 s). Every run
// follows the same script; only that gap (drawn per run) and the network's
// randomness (from the run's seed) change:
//
//	t = 1 s        C is cut off from A and B (emulation.Isolate); the next
//	               Learn from A to B will be lost (emulation.DropNext); A
//	               proposes v1. A and B accept v1, A learns it, B does not.
//	t + 5 s        C's links heal.
//	+ gap          round 2: A is cut off from B and C; with bug2, B resets
//	               (with its RST) and forgets v1; B proposes v2.
//	+ 5 s          A's links heal.
//	+ 30 s         the run ends; AllLearned is checked.
//
// Round 2 is led by B, the node that accepted v1 without learning it: the
// paper's steering remark ("C rejects the Prepare message sent by B") and
// the shortest violation consequence prediction finds from the end of
// round 1 (services/paxos/testdata/figure13-bug1.txt) both have B lead it.
// With bug1 B's own Promise (reporting v1) arrives first over its loopback
// and C's empty one last, so B proposes its own v2 with no artificial
// delay, and B and C accept it while A has learned v1. (With C leading,
// bug1 needs C's own Promise to arrive after B's, which only an artificial
// delay on a loopback would give; the paper's setup has none.) With bug2
// both Promises are empty. Proposals are application calls queued through
// each node's runtime (emulation.Submit), so steering's filters apply to
// them as to any event.
//
// Each run is emulated three ways, with the same seed: without CrystalBall
// (no snapshots, no steering: does the script lead to the bug?), with the
// immediate safety check alone, and with execution steering plus the check
// on every node. The steered run's outcome is the paper's: violated if
// OneValueLearned (two nodes learned different values: the property the
// paper's experiment enforces, see services/paxos) was violated in any
// state of the run; otherwise avoided by the immediate check if it vetoed
// an event, and avoided by steering if a filter installed from a
// prediction kept an event from a handler. Violations of the stricter
// OneValueChosen (a majority accepted a second value, learned or not) are
// counted beside them; both properties are protected by the controllers.
const (
	paxosRound1      = time.Second
	paxosRoundLength = 5 * time.Second
	paxosHeal        = 30 * time.Second
	paxosStartSpread = 100 * time.Millisecond
)

// The paper's names for the three nodes.
const (
	paxosA, paxosB, paxosC node.ID = 1, 2, 3
)

// PaxosResult is the outcome of Paxos.
type PaxosResult struct {
	// Format is PaxosFormat; Experiment is "paxos".
	Format     string `json:"format"`
	Experiment string `json:"experiment"`
	Bug        string `json:"bug"`
	Seed       uint64 `json:"seed"`
	Runs       int    `json:"runs"`
	// The steered runs' outcomes (the paper's Fig. 14). NoIntervention
	// counts runs that stayed safe without a filter hit or a veto (the
	// scenario did not lead to a violation: it should be 0).
	AvoidedBySteering       int `json:"avoided_by_steering"`
	AvoidedByImmediateCheck int `json:"avoided_by_immediate_check"`
	Violated                int `json:"violated"`
	NoIntervention          int `json:"safe_without_intervention"`
	// ViolatedWithoutCrystalBall counts the runs that violate
	// OneValueLearned without CrystalBall (all of them if the script leads
	// to the bug); ViolatedImmediateOnly those with the immediate check
	// alone.
	ViolatedWithoutCrystalBall int `json:"violated_without_crystalball"`
	ViolatedImmediateOnly      int `json:"violated_immediate_only"`
	// ChosenViolated* count the runs that violate the stricter
	// OneValueChosen: with steering and the check, with the check alone,
	// and without CrystalBall.
	ChosenViolated                   int `json:"chosen_violated"`
	ChosenViolatedImmediateOnly      int `json:"chosen_violated_immediate_only"`
	ChosenViolatedWithoutCrystalBall int `json:"chosen_violated_without_crystalball"`
	// Live* count the runs in which AllLearned holds at the end.
	LiveWithCrystalBall    int `json:"live_with_crystalball"`
	LiveImmediateOnly      int `json:"live_immediate_only"`
	LiveWithoutCrystalBall int `json:"live_without_crystalball"`
	// ScenarioDeviations counts runs whose round 1 did not end as the
	// script intends (A learned v1, B accepted v1 without learning it, C
	// untouched) in some configuration.
	ScenarioDeviations int `json:"scenario_deviations"`
	// Settings.
	SnapshotInterval string  `json:"snapshot_interval"`
	MaxStates        int     `json:"max_states"`
	Resets           int     `json:"resets_explored"`
	MaxGap           string  `json:"max_gap"`
	RoundLength      string  `json:"round_length"`
	HealPeriod       string  `json:"heal_period"`
	WallSeconds      float64 `json:"wall_seconds"`
	// Steering sums the steered runs' steering counters.
	Steering steering.Stats `json:"steering"`
	PerRun   []PaxosRun     `json:"per_run"`

	// Headline is the figure to read first, beside the paper's; Charts
	// the charts that carry the experiment's figures ('crystalball serve'
	// leads the experiment's page with them).
	Headline Headline        `json:"headline"`
	Charts   []webview.Chart `json:"charts"`
}

// PaxosRun is one run: its seed, the drawn gap, the steered run's outcome
// and each configuration's account.
type PaxosRun struct {
	Run       int            `json:"run"`
	Seed      uint64         `json:"seed"`
	GapS      float64        `json:"gap_s"`
	Outcome   string         `json:"outcome"`
	Off       PaxosConfigRun `json:"off"`
	Immediate PaxosConfigRun `json:"immediate"`
	Steer     PaxosConfigRun `json:"steer_immediate"`
}

// PaxosConfigRun is one configuration's run of the scenario.
type PaxosConfigRun struct {
	// Violated is set if OneValueLearned was violated, ChosenViolated if
	// OneValueChosen was.
	Violated       bool `json:"violated"`
	ChosenViolated bool `json:"chosen_violated"`
	// FirstViolationS is when OneValueLearned was first violated, in
	// seconds after round 2 started.
	FirstViolationS float64 `json:"first_violation_s,omitempty"`
	// FirstIntervention names the first event steering kept from a
	// handler (seconds after round 2 started, node, event, why).
	FirstIntervention string `json:"first_intervention,omitempty"`
	// Steering is the controllers' work (nil without steering).
	Steering   *steering.Stats `json:"steering,omitempty"`
	Live       bool            `json:"live"`
	ScenarioOK bool            `json:"scenario_ok"`
	// Final summarizes the nodes' values at the end.
	Final string `json:"final"`
}

// The outcomes of a steered run.
const (
	OutcomeSteering       = "avoided by steering"
	OutcomeImmediate      = "avoided by immediate check"
	OutcomeViolated       = "violated"
	OutcomeNoIntervention = "safe without intervention"
)

// PaxosFormat is the format of a PaxosResult.
const PaxosFormat = "crystalball-experiment-paxos/1"

// Defaults of PaxosConfig.
const (
	DefaultPaxosRuns      = 100
	DefaultPaxosSeed      = 1 // the seed docs/RESULTS.md uses; not a default: every seed, 0 too, is a seed of its own
	DefaultPaxosMaxStates = 10_000
	DefaultPaxosResets    = 1
	DefaultPaxosSnapshots = 2 * time.Second
	DefaultPaxosLastKnown = time.Minute
	DefaultPaxosMaxGap    = time.Minute
)

// PaxosConfig configures Paxos. Bug is required; zero fields take the
// defaults above.
type PaxosConfig struct {
	// Bug is the injected bug: "bug1" (the leader proposes the last
	// Promise's value) or "bug2" (promises are not kept across a reset).
	Bug string
	// Runs is the number of runs; each draws the time between the rounds
	// uniformly from [0, MaxGap).
	Runs int
	// Indices, when non-nil, runs only these runs of the experiment
	// (0-based, as PaxosRun.Run numbers them), each with the seed and gap
	// it has in the full experiment; Runs is then ignored.
	Indices []int
	// Seed is the experiment's seed; run r's seed is derived from it and r
	// (PaxosRunSeed). Every value, 0 included, is a seed of its own: a seed
	// has no default.
	Seed uint64
	// MaxStates is the unique-state budget of a steering round's search.
	MaxStates int
	// Resets is the node resets the controllers explore along a path
	// (negative: none).
	Resets int
	// Snapshots is every node's checkpoint and gather interval.
	Snapshots time.Duration
	// LastKnown lets a member a gather cannot reach enter steering rounds
	// and the immediate check frozen at its last checkpoint seen at most
	// this long before (negative: left out, as in the paper).
	LastKnown time.Duration
	// MaxGap bounds the time between the rounds (the paper: 60 s;
	// negative: none, round 2 follows round 1 at once).
	MaxGap time.Duration
	// Workers is the number of runs emulated in parallel (0:
	// GOMAXPROCS); the result does not depend on it.
	Workers int
	// Trace, when non-nil, receives the per-event trace of the steered
	// configuration; it needs a single run (one entry in Indices).
	Trace io.Writer
	// Progress, when non-nil, gets a line every 10 runs done and at the
	// end.
	Progress io.Writer
}

// DefaultPaxosConfig returns the configuration the zero value means, for
// bug.
func DefaultPaxosConfig(bug string) PaxosConfig {
	return PaxosConfig{Bug: bug}.withDefaults()
}

func (c PaxosConfig) withDefaults() PaxosConfig {
	orDefault(&c.Runs, DefaultPaxosRuns)
	orDefault(&c.MaxStates, DefaultPaxosMaxStates)
	orDefault(&c.Resets, DefaultPaxosResets)
	orDefault(&c.Workers, runtime.GOMAXPROCS(0))
	orDefault(&c.Snapshots, DefaultPaxosSnapshots)
	orDefault(&c.LastKnown, DefaultPaxosLastKnown)
	orDefault(&c.MaxGap, DefaultPaxosMaxGap)
	return c
}

// settings checks a configuration with its defaults filled in and returns
// what shapes every run.
func (c PaxosConfig) settings() (paxosSettings, []int, error) {
	set := paxosSettings{maxGap: max(c.MaxGap, 0), snapEvery: c.Snapshots, maxStates: c.MaxStates,
		resets: max(c.Resets, 0), lastKnown: max(c.LastKnown, 0), trace: c.Trace}
	if err := set.opts.EnableBug(c.Bug); err != nil {
		return set, nil, fmt.Errorf("experiments: paxos: %w", err)
	}
	if c.Runs < 0 || c.MaxStates < 0 || c.Snapshots < 0 || c.Workers < 0 {
		return set, nil, errors.New("experiments: paxos: runs, max states, snapshot interval and workers must not be negative")
	}
	indices := c.Indices
	if indices == nil {
		for r := range c.Runs {
			indices = append(indices, r)
		}
	}
	for _, r := range indices {
		if r < 0 {
			return set, nil, fmt.Errorf("experiments: paxos: run %d is not a run number", r)
		}
	}
	if c.Trace != nil && len(indices) != 1 {
		return set, nil, errors.New("experiments: paxos: a trace needs a single run")
	}
	return set, indices, nil
}

// paxosSettings shape every run.
type paxosSettings struct {
	opts      paxos.Options
	maxGap    time.Duration
	snapEvery time.Duration
	maxStates int
	resets    int
	lastKnown time.Duration
	// trace, when non-nil, receives the per-event trace of the steered
	// configuration (only with a single run).
	trace io.Writer
}

// Paxos runs the paper's §5.4.2 (see the comment above paxosRound1): the
// runs are independent emulations, each a pure function of its seed, run
// Workers at a time.
func Paxos(ctx context.Context, cfg PaxosConfig) (*PaxosResult, error) {
	cfg = cfg.withDefaults()
	set, indices, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	out := &PaxosResult{Format: PaxosFormat, Experiment: "paxos", Bug: cfg.Bug, Seed: cfg.Seed, Runs: len(indices),
		SnapshotInterval: cfg.Snapshots.String(), MaxStates: cfg.MaxStates, Resets: set.resets, MaxGap: set.maxGap.String(),
		RoundLength: paxosRoundLength.String(), HealPeriod: paxosHeal.String()}
	out.PerRun = make([]PaxosRun, len(indices))
	if err := paxosRuns(ctx, set, cfg, indices, out.PerRun); err != nil {
		return nil, err
	}
	out.tally()
	out.Headline, out.Charts = paxosHeadline(out), paxosCharts(out)
	out.WallSeconds = time.Since(start).Seconds()
	return out, nil
}

// paxosRuns emulates the runs of indices into their slots of runs.
func paxosRuns(ctx context.Context, set paxosSettings, cfg PaxosConfig, indices []int, runs []PaxosRun) error {
	errs := make([]error, len(indices))
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	next := make(chan int)
	for range min(cfg.Workers, len(indices)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				runs[r], errs[r] = paxosExperimentRun(ctx, set, cfg.Seed, indices[r])
				if cfg.Progress != nil {
					mu.Lock()
					done++
					if done%10 == 0 || done == len(indices) {
						fmt.Fprintf(cfg.Progress, "%d/%d runs done\n", done, len(indices))
					}
					mu.Unlock()
				}
			}
		}()
	}
	for r := 0; r < len(indices) && ctx.Err() == nil; r++ {
		next <- r
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("experiments: paxos: %w", err)
	}
	return errors.Join(errs...)
}

// tally counts the runs' outcomes into r.
func (r *PaxosResult) tally() {
	for _, run := range r.PerRun {
		switch run.Outcome {
		case OutcomeSteering:
			r.AvoidedBySteering++
		case OutcomeImmediate:
			r.AvoidedByImmediateCheck++
		case OutcomeViolated:
			r.Violated++
		default:
			r.NoIntervention++
		}
		r.ViolatedWithoutCrystalBall += btoi(run.Off.Violated)
		r.ViolatedImmediateOnly += btoi(run.Immediate.Violated)
		r.ChosenViolated += btoi(run.Steer.ChosenViolated)
		r.ChosenViolatedImmediateOnly += btoi(run.Immediate.ChosenViolated)
		r.ChosenViolatedWithoutCrystalBall += btoi(run.Off.ChosenViolated)
		r.LiveWithoutCrystalBall += btoi(run.Off.Live)
		r.LiveImmediateOnly += btoi(run.Immediate.Live)
		r.LiveWithCrystalBall += btoi(run.Steer.Live)
		r.ScenarioDeviations += btoi(!run.Off.ScenarioOK || !run.Immediate.ScenarioOK || !run.Steer.ScenarioOK)
		if run.Steer.Steering != nil {
			r.Steering.Add(*run.Steer.Steering)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String renders the result as the paper's Fig. 14 reads, with the
// baselines and the liveness check below.
func (r *PaxosResult) String() string {
	var b strings.Builder
	w := &b
	out := r
	pct := func(n int) string { return fmt.Sprintf("%d (%.0f%%)", n, 100*float64(n)/float64(max(out.Runs, 1))) }
	fmt.Fprintf(w, "paxos: Figure 13's scenario with %s, %d runs, seed %d; time between rounds uniform in [0, %s); snapshots every %s; %d states per search, %d reset(s) explored\n\n",
		out.Bug, out.Runs, out.Seed, out.MaxGap, out.SnapshotInterval, out.MaxStates, out.Resets)
	fmt.Fprintf(w, "%-5s %5s  %-20s %-27s %-12s  %s\n", "bug", "runs", "avoided by steering", "avoided by immediate check", "violated", "violated without CrystalBall")
	fmt.Fprintf(w, "%-5s %5d  %-20s %-27s %-12s  %s\n", out.Bug, out.Runs, pct(out.AvoidedBySteering), pct(out.AvoidedByImmediateCheck), pct(out.Violated), pct(out.ViolatedWithoutCrystalBall))
	if out.NoIntervention > 0 {
		fmt.Fprintf(w, "(%s stayed safe with neither a filter hit nor a veto)\n", pct(out.NoIntervention))
	}
	if out.ScenarioDeviations > 0 {
		fmt.Fprintf(w, "(%s left the script in round 1)\n", pct(out.ScenarioDeviations))
	}
	fmt.Fprintf(w, "\nwith the immediate safety check alone: %s violated\n", pct(out.ViolatedImmediateOnly))
	fmt.Fprintf(w, "%s (a majority accepted a second value, learned or not): violated in %s with CrystalBall, %s with the check alone, %s without\n",
		paxos.OneValueChosen, pct(out.ChosenViolated), pct(out.ChosenViolatedImmediateOnly), pct(out.ChosenViolatedWithoutCrystalBall))
	fmt.Fprintf(w, "AllLearned at the end (%s after round 2): %d/%d live with CrystalBall, %d/%d with the check alone, %d/%d without\n",
		out.HealPeriod, out.LiveWithCrystalBall, out.Runs, out.LiveImmediateOnly, out.Runs, out.LiveWithoutCrystalBall, out.Runs)
	s := out.Steering
	fmt.Fprintf(w, "steering over all runs: %d rounds, %d states, %d predicted violations, %d filters installed (%d unhelpful), %d filter hits, %d vetoes, %d overrides, %d escalations (%d held)\n",
		s.Rounds, s.StatesExplored, s.Predictions(), s.FiltersInstalled, s.FiltersUnhelpful, s.FilterHits, s.Vetoes, s.Overrides, s.Escalations, s.Held)
	fmt.Fprintf(w, "wall time %.1fs\n", out.WallSeconds)
	return b.String()
}

// PaxosRunSeed derives run r's seed from the experiment's (a SplitMix64
// step), so runs are independent and any one can be rerun alone.
func PaxosRunSeed(seed uint64, r int) uint64 {
	return node.Mix64(seed + (uint64(r)+1)*node.Golden64)
}

// paxosGapStream labels the random stream the gap is drawn from, apart
// from the emulator's streams of the same seed.
const paxosGapStream = 0x676170 // "gap"

// paxosExperimentRun runs run r in the three configurations.
func paxosExperimentRun(ctx context.Context, set paxosSettings, seed uint64, r int) (PaxosRun, error) {
	rs := PaxosRunSeed(seed, r)
	gap := time.Duration(rand.New(rand.NewPCG(rs, paxosGapStream)).Float64() * float64(set.maxGap))
	run := PaxosRun{Run: r, Seed: rs, GapS: gap.Seconds()}
	var err error
	if run.Off, err = paxosScenario(ctx, set, rs, gap, steering.Off, false); err != nil {
		return run, err
	}
	if run.Immediate, err = paxosScenario(ctx, set, rs, gap, steering.Off, true); err != nil {
		return run, err
	}
	if run.Steer, err = paxosScenario(ctx, set, rs, gap, steering.Steer, true); err != nil {
		return run, err
	}
	switch s := run.Steer; {
	case s.Violated:
		run.Outcome = OutcomeViolated
	case s.Steering.Vetoes > 0:
		run.Outcome = OutcomeImmediate
	case s.Steering.FilterHits > 0:
		run.Outcome = OutcomeSteering
	default:
		run.Outcome = OutcomeNoIntervention
	}
	return run, nil
}

// paxosScenario emulates the scenario once: without CrystalBall (mode Off,
// no check), with the immediate check alone (mode Off, check on: the
// controllers only keep the last snapshot's view), or with steering and
// the check. Snapshots (and steering) run on every node.
func paxosScenario(ctx context.Context, set paxosSettings, seed uint64, gap time.Duration, mode steering.Mode, immediate bool) (PaxosConfigRun, error) {
	var res PaxosConfigRun
	t2 := paxosRound1 + paxosRoundLength + gap
	cfg := emulation.Config{
		Spec:        paxos.NewSpec(set.opts),
		Nodes:       3,
		Seed:        seed,
		StartSpread: paxosStartSpread,
	}
	if mode != steering.Off || immediate {
		cfg.Snapshots = &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: set.snapEvery, GatherConfig: snapshot.GatherConfig{GatherInterval: set.snapEvery}}}
		cfg.Steering = &emulation.SteeringConfig{
			Controller: steering.Config{
				Mode:         mode,
				Faults:       consequence.Faults{Resets: set.resets},
				SearchBudget: steering.SearchBudget{MaxStates: set.maxStates},
				RoundModel:   steering.RoundModel{LastKnownFor: set.lastKnown},
			},
			Immediate: immediate,
			OnIntervention: func(iv emulation.Intervention) {
				if res.FirstIntervention != "" {
					return
				}
				why := "filter"
				if iv.Veto != nil {
					why = "immediate check"
				}
				res.FirstIntervention = fmt.Sprintf("%+.3fs %v %s %s by %s", (iv.At - t2).Seconds(), iv.Node, iv.Verdict, describeEvent(iv.Event), why)
			},
		}
	}
	if mode == steering.Steer && set.trace != nil {
		cfg.Trace = set.trace
	}
	e, err := emulation.New(cfg)
	if err != nil {
		return res, fmt.Errorf("experiments: paxos: seed %d: %w", seed, err)
	}
	if err := runScript(ctx, e, paxosScript(e, set, t2, &res), "paxos", seed); err != nil {
		return res, err
	}
	paxosAccount(&res, e, t2)
	return res, nil
}

// scriptStep is a step of a scripted scenario: at a time, what the
// script does (nothing: the run just reaches that time).
type scriptStep struct {
	at time.Duration
	do func() error
}

// runScript runs e to each step's time and takes the step, in order;
// errors name the experiment and the seed.
func runScript(ctx context.Context, e *emulation.Emulator, steps []scriptStep, experiment string, seed uint64) error {
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("experiments: %s: %w", experiment, err)
		}
		err := e.RunUntil(emulation.Epoch.Add(s.at))
		if err == nil && s.do != nil {
			err = s.do()
		}
		if err != nil {
			return fmt.Errorf("experiments: %s: seed %d: %w", experiment, seed, err)
		}
	}
	return nil
}

// paxosScript is the scenario's script on e, round 2 starting at t2; its
// steps record in res whether round 1 went as scripted.
func paxosScript(e *emulation.Emulator, set paxosSettings, t2 time.Duration, res *PaxosConfigRun) []scriptStep {
	learn := paxos.Learn{}.MessageType()
	return []scriptStep{
		{paxosRound1, func() error {
			if err := e.Isolate(paxosC); err != nil {
				return err
			}
			if err := e.DropNext(paxosA, paxosB, learn); err != nil {
				return err
			}
			return e.Submit(paxosA, paxos.Propose{Value: paxos.ValueOf(paxosA)})
		}},
		{paxosRound1 + paxosRoundLength, func() error {
			res.ScenarioOK = round1AsScripted(e.View())
			return e.Reconnect(paxosC)
		}},
		{t2, func() error {
			if err := e.Isolate(paxosA); err != nil {
				return err
			}
			if set.opts.BugVolatileAcceptor {
				if err := e.Reset(paxosB, false); err != nil {
					return err
				}
			}
			return e.Submit(paxosB, paxos.Propose{Value: paxos.ValueOf(paxosB)})
		}},
		{t2 + paxosRoundLength, func() error { return e.Reconnect(paxosA) }},
		{t2 + paxosRoundLength + paxosHeal, nil},
	}
}

// paxosAccount reads a finished scenario's outcome off e into res.
func paxosAccount(res *PaxosConfigRun, e *emulation.Emulator, t2 time.Duration) {
	r := e.Result()
	for _, s := range r.Safety {
		if s.ViolatedStates == 0 {
			continue
		}
		switch s.Name {
		case paxos.OneValueLearned:
			res.Violated = true
			res.FirstViolationS = (s.FirstViolation - t2).Seconds()
		case paxos.OneValueChosen:
			res.ChosenViolated = true
		}
	}
	for _, l := range r.Liveness {
		if l.Name == paxos.AllLearned {
			res.Live = l.Holds
		}
	}
	if st := r.Steering; st != nil {
		s := st.Stats
		res.Steering = &s
	}
	res.Final = paxos.Summarize(e.View()).String()
}

// round1AsScripted reports whether round 1 ended as Figure 13 has it: A
// learned v1, B accepted v1 without learning it, C saw nothing.
func round1AsScripted(v node.View) bool {
	a, _ := v.Service(paxosA).(*paxos.State)
	b, _ := v.Service(paxosB).(*paxos.State)
	c, _ := v.Service(paxosC).(*paxos.State)
	v1 := paxos.ValueOf(paxosA)
	return a != nil && b != nil && c != nil &&
		a.Learned == v1 &&
		b.AcceptedValue == v1 && b.Learned == "" &&
		c.Accepted.IsZero() && c.Promised.IsZero() && c.Learned == ""
}

// describeEvent names an event as the emulator's trace does.
func describeEvent(ev node.Event) string {
	switch ev.Kind {
	case node.EventMessage:
		return fmt.Sprintf("message %s from %v", ev.Msg.MessageType(), ev.From)
	case node.EventApp:
		return "app " + ev.Msg.MessageType()
	case node.EventTimer:
		return "timer " + ev.Timer
	case node.EventTransportError:
		return fmt.Sprintf("transport error from %v", ev.Peer)
	}
	return ev.Kind.String()
}
