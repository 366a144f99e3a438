package tool

import (
	"flag"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// walkFlags are the budgets of a steering round's liveness search (MaceMC's
// random walks and critical transition), shared by 'emulate' and 'node'
// so both validate and apply them the same way.
type walkFlags struct {
	walks, depth, warmup, probes, steps, suspects int
	safetyWalks, safetyDepth                      int
	weights                                       string
	weight                                        map[consequence.ActorActionKind]float64 // parsed --walk-weights; nil: steering's defaults
}

// register defines the flags on fs with steering's defaults.
func (w *walkFlags) register(fs *flag.FlagSet) {
	d := steering.DefaultConfig()
	fs.IntVar(&w.walks, "walks", d.Walks, "random walks a steering round takes from its snapshot against the liveness properties (0: none)")
	fs.IntVar(&w.depth, "walk-depth", d.DMax, "steps per random walk of a steering round (MaceMC's dmax)")
	fs.IntVar(&w.warmup, "walk-warmup", d.DInit, "steps a walk takes before a live state counts (MaceMC's dinit; below --walk-depth)")
	fs.IntVar(&w.probes, "probe-walks", d.K, "walks that probe one state in the search for a critical transition (MaceMC's k)")
	fs.IntVar(&w.steps, "walk-steps", d.MaxWalkSteps, "budget of steps of a steering round's liveness search (walks, probes, filter checks)")
	fs.IntVar(&w.suspects, "walk-suspects", d.MaxSuspects, "suspected violations a steering round judges before it gives up")
	fs.IntVar(&w.safetyWalks, "safety-walks", d.SafetyWalks, "random walks a steering round takes from its snapshot checking the safety properties at every step, half with the walk weights and half unweighted: they find timer races the consequence search prunes and depth beyond its budget (0: none)")
	fs.IntVar(&w.safetyDepth, "safety-walk-depth", d.SafetyWalkDepth, "steps per safety walk of a steering round")
	fs.StringVar(&w.weights, "walk-weights", "", "bias a steering round's walks by action kind, as check --weights: comma-separated KIND=W, KIND one of "+strings.Join(weightKindNames(), ", ")+"; unlisted kinds weigh 1 (default: resets, breaks, drops and refusals 0.02, timers 0.1)")
}

// validate reports the first bad value as a usage error.
func (w *walkFlags) validate() error {
	if err := FirstBrokenRule(
		UsageRule{w.walks < 0, usagef("--walks must not be negative, got %d", w.walks)},
		UsageRule{w.depth <= 0, usagef("--walk-depth must be positive, got %d", w.depth)},
		UsageRule{AnyConditionHolds(w.warmup < 0, w.warmup >= w.depth), usagef("--walk-warmup must be at least 0 and below --walk-depth (%d), got %d", w.depth, w.warmup)},
		UsageRule{w.probes <= 0, usagef("--probe-walks must be positive, got %d", w.probes)},
		UsageRule{w.steps <= 0, usagef("--walk-steps must be positive, got %d", w.steps)},
		UsageRule{w.suspects <= 0, usagef("--walk-suspects must be positive, got %d", w.suspects)},
		UsageRule{w.safetyWalks < 0, usagef("--safety-walks must not be negative, got %d", w.safetyWalks)},
		UsageRule{w.safetyDepth <= 0, usagef("--safety-walk-depth must be positive, got %d", w.safetyDepth)},
	); err != nil {
		return err
	}
	weight, err := parseWeights(w.weights)
	if err != nil {
		return usagef("--walk-weights: %v", strings.TrimPrefix(err.Error(), "--weights: "))
	}
	w.weight = weight
	return nil
}

// apply sets the budgets on c; --walks 0 turns the walks off.
func (w *walkFlags) apply(c *steering.Config) {
	c.Walks = w.walks
	if w.walks == 0 {
		c.Walks = -1
	}
	c.DMax, c.DInit, c.K, c.MaxWalkSteps, c.MaxSuspects = w.depth, w.warmup, w.probes, w.steps, w.suspects
	c.SafetyWalks, c.SafetyWalkDepth = w.safetyWalks, w.safetyDepth
	if w.weight != nil {
		c.WalkWeights = w.weight
	}
}

// flagSet reports whether the flag name was given on the command line.
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
