package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
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
)

// 'experiment paxos' is the paper's §5.4.2 (Figures 13 and 14): Figure 13's
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

// paxosOutput is the --json form of 'experiment paxos'.
type paxosOutput struct {
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
	// Steering sums the steered runs' controller counters.
	Steering paxosSteering `json:"steering"`
	PerRun   []paxosRun    `json:"per_run"`
}

// paxosSteering is what the controllers of a steered run did (or their
// sum over runs).
type paxosSteering struct {
	Rounds           uint64 `json:"rounds"`
	StatesExplored   uint64 `json:"states_explored"`
	Predicted        uint64 `json:"predicted"`
	FiltersInstalled uint64 `json:"filters_installed"`
	Unhelpful        uint64 `json:"unhelpful"`
	FilterHits       uint64 `json:"filter_hits"`
	Vetoes           uint64 `json:"immediate_check_vetoes"`
	Overrides        uint64 `json:"overrides"`
}

func (s *paxosSteering) add(o paxosSteering) {
	s.Rounds += o.Rounds
	s.StatesExplored += o.StatesExplored
	s.Predicted += o.Predicted
	s.FiltersInstalled += o.FiltersInstalled
	s.Unhelpful += o.Unhelpful
	s.FilterHits += o.FilterHits
	s.Vetoes += o.Vetoes
	s.Overrides += o.Overrides
}

// paxosRun is one run: its seed, the drawn gap, the steered run's outcome
// and each configuration's account.
type paxosRun struct {
	Run       int            `json:"run"`
	Seed      uint64         `json:"seed"`
	GapS      float64        `json:"gap_s"`
	Outcome   string         `json:"outcome"`
	Off       paxosConfigRun `json:"off"`
	Immediate paxosConfigRun `json:"immediate"`
	Steer     paxosConfigRun `json:"steer_immediate"`
}

// paxosConfigRun is one configuration's run of the scenario.
type paxosConfigRun struct {
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
	Steering   *paxosSteering `json:"steering,omitempty"`
	Live       bool           `json:"live"`
	ScenarioOK bool           `json:"scenario_ok"`
	// Final summarizes the nodes' values at the end.
	Final string `json:"final"`
}

// The outcomes of a steered run.
const (
	outcomeSteering       = "avoided by steering"
	outcomeImmediate      = "avoided by immediate check"
	outcomeViolated       = "violated"
	outcomeNoIntervention = "safe without intervention"
)

// paxosSettings are the experiment's flags that shape every run.
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

func runPaxosExperiment(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("experiment paxos", stderr)
	bug := fs.String("bug", "", "the injected bug: 1 (the leader proposes the last Promise's value) or 2 (promises are not kept across a reset)")
	runs := fs.Int("runs", 100, "runs; each draws the time between the rounds uniformly from [0, --max-gap)")
	seed := fs.Uint64("seed", 1, "seed of the experiment; run r uses a seed derived from it and r")
	maxStates := fs.Int("max-states", 10_000, "unique states per search of a steering round")
	resets := fs.Int("resets", 1, "node resets the steering controllers explore along a path")
	snapEvery := durationFlag(fs, "snapshots", 2*time.Second, "checkpoint and gather interval of every node")
	lastKnown := durationFlag(fs, "last-known", time.Minute, "a member a gather cannot reach enters steering rounds and the immediate check frozen at its last checkpoint seen at most this long before (0: left out, as in the paper)")
	maxGap := durationFlag(fs, "max-gap", time.Minute, "upper bound of the time between the rounds (the paper: 60s)")
	workers := fs.Int("workers", runtime.GOMAXPROCS(0), "runs emulated in parallel (the results do not depend on it)")
	only := fs.Int("run", -1, "run only this run of the experiment (0-based, as per_run[].run numbers them): the same seed and gap as in the full experiment")
	tracePath := fs.String("trace", "", "with --run, write the per-event trace of the steered configuration (steering rounds, predictions, filters, interventions) to this file")
	asJSON := fs.Bool("json", false, "print one JSON object instead of the table")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: crystalball experiment paxos --bug 1|2 [flags]")
		fmt.Fprintln(fs.Output(), "The paper's §5.4.2 (Fig. 13/14): Figure 13's two rounds on 3 Paxos nodes, with execution steering and the immediate safety check on every node, with the check alone, and without CrystalBall.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	name := "bug" + strings.TrimPrefix(*bug, "bug")
	if name != "bug1" && name != "bug2" {
		return usagef("--bug must be 1 or 2")
	}
	set := paxosSettings{maxGap: *maxGap, snapEvery: *snapEvery, maxStates: *maxStates, resets: *resets, lastKnown: *lastKnown}
	if err := set.opts.EnableBug(name); err != nil {
		return usageError{err}
	}
	if *runs <= 0 || *maxStates <= 0 || *snapEvery <= 0 || *workers <= 0 || *maxGap < 0 || *resets < 0 || *lastKnown < 0 {
		return usagef("--runs, --max-states, --snapshots and --workers must be positive, --max-gap, --resets and --last-known not negative")
	}
	indices := make([]int, 0, *runs)
	switch {
	case *only >= 0:
		indices = append(indices, *only)
	case *only != -1:
		return usagef("--run must be a run number (0 or more)")
	default:
		for r := 0; r < *runs; r++ {
			indices = append(indices, r)
		}
	}
	if *tracePath != "" {
		if *only < 0 {
			return usagef("--trace needs --run: it traces one run")
		}
		f, err := os.Create(*tracePath)
		if err != nil {
			return fmt.Errorf("experiment paxos: %w", err)
		}
		w := bufio.NewWriter(f)
		defer func() {
			if err := w.Flush(); err != nil {
				fmt.Fprintf(stderr, "experiment paxos: writing %s: %v\n", *tracePath, err)
			}
			f.Close()
		}()
		set.trace = w
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	start := time.Now()
	out := paxosOutput{Experiment: "paxos", Bug: name, Seed: *seed, Runs: len(indices),
		SnapshotInterval: snapEvery.String(), MaxStates: *maxStates, Resets: *resets, MaxGap: maxGap.String(),
		RoundLength: paxosRoundLength.String(), HealPeriod: paxosHeal.String()}
	out.PerRun = make([]paxosRun, len(indices))
	errs := make([]error, len(indices))
	// Runs are independent emulations, each a pure function of its seed:
	// they run in parallel and land in their own slots.
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	next := make(chan int)
	for w := 0; w < min(*workers, len(indices)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range next {
				out.PerRun[r], errs[r] = paxosExperimentRun(ctx, set, *seed, indices[r])
				if !*asJSON {
					mu.Lock()
					done++
					if done%10 == 0 || done == len(indices) {
						fmt.Fprintf(stderr, "%d/%d runs done\n", done, len(indices))
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
		return fmt.Errorf("experiment paxos: %w", err)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	for _, r := range out.PerRun {
		switch r.Outcome {
		case outcomeSteering:
			out.AvoidedBySteering++
		case outcomeImmediate:
			out.AvoidedByImmediateCheck++
		case outcomeViolated:
			out.Violated++
		default:
			out.NoIntervention++
		}
		out.ViolatedWithoutCrystalBall += btoi(r.Off.Violated)
		out.ViolatedImmediateOnly += btoi(r.Immediate.Violated)
		out.ChosenViolated += btoi(r.Steer.ChosenViolated)
		out.ChosenViolatedImmediateOnly += btoi(r.Immediate.ChosenViolated)
		out.ChosenViolatedWithoutCrystalBall += btoi(r.Off.ChosenViolated)
		out.LiveWithoutCrystalBall += btoi(r.Off.Live)
		out.LiveImmediateOnly += btoi(r.Immediate.Live)
		out.LiveWithCrystalBall += btoi(r.Steer.Live)
		out.ScenarioDeviations += btoi(!r.Off.ScenarioOK || !r.Immediate.ScenarioOK || !r.Steer.ScenarioOK)
		if r.Steer.Steering != nil {
			out.Steering.add(*r.Steer.Steering)
		}
	}
	out.WallSeconds = time.Since(start).Seconds()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(out)
	}
	printPaxosTable(stdout, &out)
	return nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// printPaxosTable prints the experiment as the paper's Fig. 14 reads, with
// the baselines and the liveness check below.
func printPaxosTable(w io.Writer, out *paxosOutput) {
	pct := func(n int) string { return fmt.Sprintf("%d (%.0f%%)", n, 100*float64(n)/float64(out.Runs)) }
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
	fmt.Fprintf(w, "steering over all runs: %d rounds, %d states, %d predicted violations, %d filters installed (%d unhelpful), %d filter hits, %d vetoes, %d overrides\n",
		s.Rounds, s.StatesExplored, s.Predicted, s.FiltersInstalled, s.Unhelpful, s.FilterHits, s.Vetoes, s.Overrides)
	fmt.Fprintf(w, "wall time %.1fs\n", out.WallSeconds)
}

// paxosRunSeed derives run r's seed from the experiment's (a SplitMix64
// step), so runs are independent and any one can be rerun alone.
func paxosRunSeed(seed uint64, r int) uint64 {
	x := seed + (uint64(r)+1)*0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// paxosGapStream labels the random stream the gap is drawn from, apart
// from the emulator's streams of the same seed.
const paxosGapStream = 0x676170 // "gap"

// paxosExperimentRun runs run r in the three configurations.
func paxosExperimentRun(ctx context.Context, set paxosSettings, seed uint64, r int) (paxosRun, error) {
	rs := paxosRunSeed(seed, r)
	gap := time.Duration(rand.New(rand.NewPCG(rs, paxosGapStream)).Float64() * float64(set.maxGap))
	run := paxosRun{Run: r, Seed: rs, GapS: gap.Seconds()}
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
		run.Outcome = outcomeViolated
	case s.Steering.Vetoes > 0:
		run.Outcome = outcomeImmediate
	case s.Steering.FilterHits > 0:
		run.Outcome = outcomeSteering
	default:
		run.Outcome = outcomeNoIntervention
	}
	return run, nil
}

// paxosScenario emulates the scenario once: without CrystalBall (mode Off,
// no check), with the immediate check alone (mode Off, check on: the
// controllers only keep the last snapshot's view), or with steering and
// the check. Snapshots (and steering) run on every node.
func paxosScenario(ctx context.Context, set paxosSettings, seed uint64, gap time.Duration, mode steering.Mode, immediate bool) (paxosConfigRun, error) {
	var res paxosConfigRun
	t2 := paxosRound1 + paxosRoundLength + gap
	cfg := emulation.Config{
		Spec:        paxos.NewSpec(set.opts),
		Nodes:       3,
		Seed:        seed,
		StartSpread: paxosStartSpread,
	}
	if mode != steering.Off || immediate {
		cfg.Snapshots = &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: set.snapEvery, GatherInterval: set.snapEvery}}
		cfg.Steering = &emulation.SteeringConfig{
			Controller: steering.Config{
				Mode:         mode,
				Faults:       consequence.Faults{Resets: set.resets},
				MaxStates:    set.maxStates,
				LastKnownFor: set.lastKnown,
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
		return res, err
	}
	learn := paxos.Learn{}.MessageType()
	script := []struct {
		at time.Duration
		do func() error
	}{
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
	for _, s := range script {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		err := e.RunUntil(emulation.Epoch.Add(s.at))
		if err == nil && s.do != nil {
			err = s.do()
		}
		if err != nil {
			return res, fmt.Errorf("experiment paxos: seed %d: %w", seed, err)
		}
	}
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
		res.Steering = &paxosSteering{Rounds: st.Rounds, StatesExplored: st.StatesExplored,
			FiltersInstalled: st.FiltersInstalled, Unhelpful: st.Unhelpful,
			FilterHits: st.FilterHits, Vetoes: st.Vetoes, Overrides: st.Overrides}
		for _, n := range st.Predicted {
			res.Steering.Predicted += n
		}
	}
	res.Final = paxos.Summarize(e.View()).String()
	return res, nil
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
