package scoreboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// errEventBudget ends a run that reached Config.MaxEvents.
var errEventBudget = errors.New("scoreboard: event budget spent")

// modes are the configurations of every variant, in the order they run.
var modes = [...]steering.Mode{steering.Off, steering.Debug, steering.Steer}

// Run scores cfg's cases: for each case and seed, the planted bug and its
// fixed twin, each off, with deep online debugging and with steering (see
// the package documentation). Runs go one after the other, each a pure
// function of its case and seed. On an invalid configuration it returns
// an error wrapping ErrConfig; when ctx ends or a run fails, the Result
// so far (the cases completed) and the error.
func Run(ctx context.Context, cfg Config) (Result, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return Result{}, err
	}
	res := Result{Format: Format, Seeds: c.Seeds, Warmup: c.Warmup, Horizon: c.Horizon, Cases: []CaseResult{}}
	for _, k := range c.Cases {
		cr, err := c.runCase(ctx, k)
		if err != nil {
			return res, err
		}
		res.Cases = append(res.Cases, cr)
		res.Total = res.Total.plus(cr.Summary)
	}
	return res, nil
}

// runCase runs case k with every seed: both variants, every mode.
func (c Config) runCase(ctx context.Context, k zoo.Case) (CaseResult, error) {
	cr := CaseResult{Name: k.Name, Bug: k.Bug, Fix: k.Fix, Covers: k.Covers, Property: k.Property,
		Nodes: k.Nodes, Duration: c.duration(k), Churn: k.Churn, Breaks: k.Breaks, Seeds: []SeedResult{}}
	for _, seed := range c.Seeds {
		sr := SeedResult{Seed: seed}
		for _, fixed := range []bool{false, true} {
			v := &sr.Bug
			if fixed {
				v = &sr.Twin
			}
			for _, m := range modes {
				r, err := c.runOne(ctx, k, fixed, m, seed)
				if err != nil {
					return cr, fmt.Errorf("scoreboard: case %q seed %d fixed=%v mode %v: %w", k.Name, seed, fixed, m, err)
				}
				v.set(m, r)
				if c.OnRun != nil {
					c.OnRun(Progress{Case: k.Name, Seed: seed, Fixed: fixed, Mode: m, Result: r})
				}
			}
		}
		cr.Seeds = append(cr.Seeds, sr)
		cr.Summary.add(sr, c.Horizon)
	}
	return cr, nil
}

// RunOne runs case k (fixed: its twin) with seed in mode m, as Run runs
// each of its runs, and returns what the run did. Other scorers (the
// mutation corpus, bench/mutants) use it to run their own cases with the
// scoreboard's deployment; cfg's zero fields take their defaults, its
// Cases and Seeds are not used. It returns an error wrapping ErrConfig
// for an invalid cfg or case, else the emulator's error.
func RunOne(ctx context.Context, cfg Config, k zoo.Case, fixed bool, m steering.Mode, seed uint64) (RunResult, error) {
	cfg.Cases, cfg.Seeds = []zoo.Case{k}, []uint64{seed}
	c, err := cfg.withDefaults()
	if err != nil {
		return RunResult{}, err
	}
	return c.runOne(ctx, k, fixed, m, seed)
}

// runOne runs case k (fixed: its twin) with seed in mode m.
func (c Config) runOne(ctx context.Context, k zoo.Case, fixed bool, m steering.Mode, seed uint64) (RunResult, error) {
	var r RunResult
	ecfg := c.emulationConfig(k, fixed, m, seed)
	if c.MaxEvents > 0 {
		// A budget in events, not wall time, so that a run that ends on
		// it is still a pure function of its seed.
		var cancel context.CancelCauseFunc
		ctx, cancel = context.WithCancelCause(ctx)
		defer cancel(nil)
		ecfg.OnStep = func(emulation.Step) {
			if r.Events++; r.Events == c.MaxEvents {
				r.EventBudgetSpent = true
				cancel(errEventBudget)
			}
		}
	}
	if m != steering.Off {
		ecfg.Steering.OnRound = func(_ node.ID, at time.Duration, rep *steering.RoundReport) {
			r.round(k.Property, at, rep)
		}
	}
	em, err := emulation.New(ecfg)
	if err != nil {
		return r, err
	}
	res, err := em.Run(ctx)
	var panicked *emulation.PanicError
	switch {
	case err == nil:
	case errors.As(err, &panicked) && c.KeepPanics:
		r.Panic = panicked.Error()
	case r.EventBudgetSpent && errors.Is(context.Cause(ctx), errEventBudget):
	default:
		return r, err
	}
	r.record(res)
	for _, s := range res.Safety {
		switch {
		case s.Name != k.Property:
			r.OtherViolations += s.ViolatedStates
		case s.ViolatedStates > 0:
			r.Violations, r.Episodes, r.FirstViolation = s.ViolatedStates, s.Episodes, s.FirstViolation
		}
	}
	for _, l := range res.Liveness {
		if !l.Holds {
			r.Starved = append(r.Starved, l.Name)
		}
	}
	r.Events, r.Leaves, r.Breaks = res.Events, res.Churn.Leaves, res.Breaks.Broken
	if s := res.Steering; s != nil {
		r.Rounds, r.FiltersInstalled, r.FilterHits, r.Vetoes, r.Overrides = s.Rounds, s.FiltersInstalled, s.FilterHits, s.Vetoes, s.Overrides
	}
	return r, nil
}

// emulationConfig is the emulator's configuration of case k (fixed: its
// twin) with seed in mode m: its nodes, workload and faults, and for the
// online modes their snapshot and steering layers (debug: a few
// predictors, deep rounds; steer: every node, cheap rounds, and the
// immediate check).
func (c Config) emulationConfig(k zoo.Case, fixed bool, m steering.Mode, seed uint64) emulation.Config {
	ecfg := emulation.Config{
		Spec:     k.Spec(fixed),
		Nodes:    k.Nodes,
		Seed:     seed,
		Duration: c.duration(k),
		Workload: k.Workload,
	}
	var until time.Duration
	if c.Heal > 0 {
		until = c.duration(k) - c.Heal
	}
	if k.Churn > 0 {
		ecfg.Churn = emulation.ChurnConfig{Rate: k.Churn, After: c.Warmup, Until: until}
	}
	if k.Breaks > 0 {
		ecfg.Breaks = emulation.BreakConfig{Rate: k.Breaks, After: c.Warmup, Until: until}
	}
	if m != steering.Off {
		ecfg.Snapshots, ecfg.Steering = emulation.ModeConfig(m, k.Nodes, m == steering.Steer)
		ecfg.Steering.Controller.SafetyWalks = c.SafetyWalks
		ecfg.Steering.Controller.ImmediateHop = c.ImmediateHop
		ecfg.Steering.Controller.RecallView = c.RecallView
		ecfg.Snapshots.Manager.SecondHop = c.SecondHop
	}
	return ecfg
}

// round records one steering round's predictions, made in a round that
// started at at: of property, and of the others.
func (r *RunResult) round(property string, at time.Duration, rep *steering.RoundReport) {
	if r.FirstRound == 0 {
		r.FirstRound = at // a round starts after a gather, never at 0
	}
	if rep.Liveness != nil {
		for _, p := range rep.Liveness.DeadAtStart {
			if _, seen := r.FirstDeadAtStart[p]; !seen {
				if r.FirstDeadAtStart == nil {
					r.FirstDeadAtStart = map[string]time.Duration{}
				}
				r.FirstDeadAtStart[p] = at
			}
		}
	}
	hit := false
	for _, p := range rep.Predictions {
		if _, seen := r.FirstPredictions[p.Property]; !seen {
			if r.FirstPredictions == nil {
				r.FirstPredictions = map[string]time.Duration{}
			}
			r.FirstPredictions[p.Property] = at
		}
		if p.Property == property {
			hit = true
		} else {
			r.OtherPredictions++
		}
	}
	if !hit {
		return
	}
	if !r.Predicted {
		r.Predicted, r.FirstPrediction = true, at
	}
	r.PredictingRounds++
}

// record keeps every property's outcome of a run: the first violation of
// each violated safety property and the liveness properties failing at
// the end.
func (r *RunResult) record(res emulation.Result) {
	for _, s := range res.Safety {
		if s.ViolatedStates > 0 {
			if r.FirstViolations == nil {
				r.FirstViolations = map[string]time.Duration{}
			}
			r.FirstViolations[s.Name] = s.FirstViolation
		}
	}
	for _, l := range res.Liveness {
		if !l.Holds {
			r.LivenessFailed = append(r.LivenessFailed, l.Name)
		}
	}
	for _, t := range res.Timed {
		if t.Kind == "liveness" && len(t.List) > 0 {
			if r.FirstOutages == nil {
				r.FirstOutages = map[string]time.Duration{}
			}
			r.FirstOutages[t.Name] = t.List[0].Start
		}
	}
}

// set records r as v's run in mode m.
func (v *Variant) set(m steering.Mode, r RunResult) {
	switch m {
	case steering.Off:
		v.Off = r
	case steering.Debug:
		v.Debug = r
	default:
		v.Steer = r
	}
}
