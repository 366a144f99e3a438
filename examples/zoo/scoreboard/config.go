package scoreboard

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Defaults of a Config's zero fields.
const (
	// DefaultWarmup is how long faults wait after the start of a run:
	// the nodes start within emulation.DefaultStartSpread of it.
	DefaultWarmup = 10 * time.Second
	// DefaultHorizon is the zoo's target: a planted bug predicted within
	// 60 s of emulated time.
	DefaultHorizon = 60 * time.Second
)

// DefaultSeeds returns the seeds a Config with nil Seeds runs: 1, 2, 3.
func DefaultSeeds() []uint64 { return []uint64{1, 2, 3} }

// ErrConfig is returned (wrapped) by Run for an invalid Config or case.
var ErrConfig = errors.New("scoreboard: invalid configuration")

// Config says what Run scores. Zero fields take the defaults above.
type Config struct {
	// Cases are the zoo's cases to run, in order. Nil means zoo.Cases().
	Cases []zoo.Case
	// Seeds are the seeds every case runs with. Nil means DefaultSeeds.
	Seeds []uint64
	// Warmup delays the cases' churn and breaks from the start of a run.
	// Zero means DefaultWarmup; it must be shorter than every run.
	Warmup time.Duration
	// Horizon is the virtual time by which a prediction counts as in
	// time. Zero means DefaultHorizon.
	Horizon time.Duration
	// Duration, when positive, replaces every case's Duration (short
	// runs for tests and smoke checks). Zero keeps the cases' own.
	Duration time.Duration
	// Heal, when positive, ends the churn and the breaks that long before
	// the end of every run, so that liveness properties are judged on a
	// healed system (RunResult.LivenessFailed). Zero: faults go on to the
	// end, as the zoo's cases run.
	Heal time.Duration
	// MaxEvents, when positive, ends a run once it has taken that many
	// handler steps (RunResult.EventBudgetSpent; the emulator stops
	// within 1,024 events of it and the result is the run so far): a
	// message storm stops in bounded time, at the same point every time.
	MaxEvents int64
	// KeepPanics makes a handler's panic a result (RunResult.Panic, the
	// run so far) rather than an error: a mutant's crash is an outcome.
	KeepPanics bool
	// SafetyWalks is steering.Config.SafetyWalks of the debug and steer
	// runs: random walks per round that check the safety properties
	// (zero: none, steering's default; negative is an error).
	SafetyWalks int
	// SecondHop is snapshot.Config.SecondHop of the debug and steer runs:
	// gathers widened to at most that many of the neighbours' neighbours
	// (zero: the neighbourhood only, the default; negative is an error).
	SecondHop int
	// ImmediateHop is steering.Config.ImmediateHop of the steer runs:
	// the immediate check follows an event's messages one hop.
	ImmediateHop bool
	// RecallView is steering.Config.RecallView of the debug and steer
	// runs: a restarted node gathers the nodes its restored view holds.
	RecallView bool
	// OnRun, when non-nil, sees every run as it ends (progress reports).
	OnRun func(Progress)
}

// Progress is one emulated run as it ends, for Config.OnRun.
type Progress struct {
	Case string
	Seed uint64
	// Fixed is set for the fixed twin.
	Fixed bool
	// Mode is off, debug or steer (see the package documentation).
	Mode   steering.Mode
	Result RunResult
}

// DefaultConfig returns the defaults Run gives a Config's zero fields
// (its Cases are zoo.Cases()).
func DefaultConfig() Config {
	return Config{Cases: zoo.Cases(), Seeds: DefaultSeeds(), Warmup: DefaultWarmup, Horizon: DefaultHorizon}
}

// withDefaults validates c and applies the defaults.
func (c Config) withDefaults() (Config, error) {
	if c.SafetyWalks < 0 || c.SecondHop < 0 {
		return c, fmt.Errorf("%w: SafetyWalks and SecondHop must not be negative, got %d and %d", ErrConfig, c.SafetyWalks, c.SecondHop)
	}
	if c.MaxEvents < 0 {
		return c, fmt.Errorf("%w: MaxEvents must not be negative, got %d", ErrConfig, c.MaxEvents)
	}
	if c.Warmup < 0 || c.Horizon < 0 || c.Duration < 0 || c.Heal < 0 {
		return c, fmt.Errorf("%w: Warmup, Horizon, Duration and Heal must not be negative, got %v, %v, %v, %v", ErrConfig, c.Warmup, c.Horizon, c.Duration, c.Heal)
	}
	if c.Cases == nil {
		c.Cases = zoo.Cases()
	}
	if c.Seeds == nil {
		c.Seeds = DefaultSeeds()
	}
	if c.Warmup == 0 {
		c.Warmup = DefaultWarmup
	}
	if c.Horizon == 0 {
		c.Horizon = DefaultHorizon
	}
	if len(c.Cases) == 0 || len(c.Seeds) == 0 {
		return c, fmt.Errorf("%w: no cases or no seeds", ErrConfig)
	}
	seen := map[string]bool{}
	for _, k := range c.Cases {
		if seen[k.Name] {
			return c, fmt.Errorf("%w: case %q listed twice", ErrConfig, k.Name)
		}
		seen[k.Name] = true
		if err := c.checkCase(k); err != nil {
			return c, err
		}
	}
	return c, nil
}

// checkCase checks that k can run: a spec for both variants whose safety
// properties include k.Property, nodes, and a run longer than the warm-up.
func (c Config) checkCase(k zoo.Case) error {
	switch {
	case k.Name == "":
		return fmt.Errorf("%w: a case has no name", ErrConfig)
	case k.Spec == nil:
		return fmt.Errorf("%w: case %q has no Spec", ErrConfig, k.Name)
	case k.Nodes <= 0:
		return fmt.Errorf("%w: case %q: Nodes must be positive, got %d", ErrConfig, k.Name, k.Nodes)
	case k.Churn < 0 || k.Breaks < 0:
		return fmt.Errorf("%w: case %q: Churn and Breaks must not be negative", ErrConfig, k.Name)
	case c.duration(k) <= c.Warmup+c.Heal:
		return fmt.Errorf("%w: case %q: a run of %v leaves no time after the %v warm-up and the %v heal", ErrConfig, k.Name, c.duration(k), c.Warmup, c.Heal)
	}
	for _, fixed := range []bool{false, true} {
		spec := k.Spec(fixed)
		if !slices.ContainsFunc(spec.Properties, func(p node.Property) bool { return p.Name == k.Property && p.Kind == node.Safety }) {
			return fmt.Errorf("%w: case %q: %q is not a safety property of its spec (fixed=%v)", ErrConfig, k.Name, k.Property, fixed)
		}
	}
	return nil
}

// duration is how long a run of k lasts.
func (c Config) duration(k zoo.Case) time.Duration {
	if c.Duration > 0 {
		return c.Duration
	}
	return k.Duration
}
