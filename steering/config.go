package steering

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// ErrInvalidConfig is wrapped by the errors New and ParseMode return for a
// configuration they cannot run.
var ErrInvalidConfig = errors.New("steering: invalid config")

// Config configures a Controller: the service and the world its rounds
// model at the top, then one group per concern, each with its own
// validation and defaults. The groups are embedded, so their fields read
// as the Config's own (c.MaxStates is c.SearchBudget.MaxStates). Zero
// fields take the defaults documented on each; DefaultConfig returns them
// all.
type Config struct {
	// Mode is Off (default), Debug or Steer.
	Mode Mode
	// Spec is the service the node runs; its checkpoints are decoded and
	// its handlers explored with it. Required.
	Spec node.Spec
	// Properties are the properties to protect; nil means the spec's. The
	// safety properties are checked by consequence prediction and the
	// immediate safety check, the bounded (node.Within) and history
	// (node.OnHistory) properties by consequence prediction as safety
	// properties of the timed system and of the path's history, the
	// liveness properties by random walks (LivenessWalks).
	Properties []node.Property
	// Workload gives the application calls a node makes after a reset the
	// explorer injects (consequence.ActorOptions.Workload); nil uses the
	// service's node.Restarter.
	Workload func(id node.ID, restart bool) []node.Message
	// Faults bound the faults explored along a path (default: none); the
	// lasting ones only as the node's layer has seen them (RoundFaults).
	Faults consequence.Faults
	// TimerSkew is the declared bound of each node's timer skew, which the
	// rounds' models explore (consequence.ActorOptions.TimerSkew); zero:
	// none declared.
	TimerSkew time.Duration

	// SearchBudget bounds each search of a round.
	SearchBudget
	// LivenessWalks are a round's MaceMC liveness search.
	LivenessWalks
	// SafetyWalkConfig are a round's random walks against the safety
	// properties.
	SafetyWalkConfig
	// RoundModel is what a round's model takes in beyond the snapshot's
	// members.
	RoundModel
	// GatherPolicy widens and adds to the node's gathers.
	GatherPolicy
	// InterventionPolicy is how an event steering stops is kept from the
	// handler, and what a restart keeps of the interventions.
	InterventionPolicy
	// EscalationPolicy bounds how often one kind of event may be kept
	// from the handler, and how long it is held past that.
	EscalationPolicy
	// ImmediateCheckConfig tunes the immediate safety check.
	ImmediateCheckConfig
	// Requests bounds the steering requests this node sends and admits
	// (mode Steer; request.go): zero fields take their defaults.
	Requests RequestConfig
	// Liveness is the liveness budget of the node's Layer: when steering
	// has kept a property's obligation open past its bound, the layer
	// lifts its steering until the obligation closes (liveness_budget.go).
	// Zero fields take their defaults (DefaultLivenessBudget).
	Liveness LivenessBudget
}

// DefaultConfig returns the configuration every zero field of a Config
// stands for, in mode Off and without a Spec (which has no default: set
// it). New(DefaultConfig(), id) fails for want of the Spec.
func DefaultConfig() Config {
	c, err := Config{}.groupDefaults()
	if err != nil {
		panic(fmt.Sprintf("steering: the zero Config's groups are invalid: %v", err)) // a broken invariant of this package
	}
	return c
}

// withDefaults validates c and fills in its defaults.
func (c Config) withDefaults() (Config, error) {
	if c.Spec.Name == "" && c.Spec.New == nil {
		return c, fmt.Errorf("%w: Config.Spec is not set (the service the node runs: its checkpoints are decoded and its handlers explored with it)", ErrInvalidConfig)
	}
	if err := c.Spec.Validate(); err != nil {
		return c, fmt.Errorf("%w: Config.Spec: %w", ErrInvalidConfig, err)
	}
	if c.Mode > Steer {
		return c, fmt.Errorf("%w: mode %d", ErrInvalidConfig, uint8(c.Mode))
	}
	if c.Properties == nil {
		c.Properties = c.Spec.Properties
	}
	return c.groupDefaults()
}

// groupDefaults validates every group of c and fills in its defaults, in
// the order the groups are declared; the first group that fails stops it.
func (c Config) groupDefaults() (Config, error) {
	for _, fill := range []func() error{
		func() error { return fillGroupDefaults(&c.SearchBudget) },
		func() error { return fillGroupDefaults(&c.LivenessWalks) },
		func() error { return fillGroupDefaults(&c.SafetyWalkConfig) },
		func() error { return fillGroupDefaults(&c.RoundModel) },
		func() error { return fillGroupDefaults(&c.InterventionPolicy) },
		func() error { return fillGroupDefaults(&c.EscalationPolicy) },
		func() error { return fillGroupDefaults(&c.ImmediateCheckConfig) },
		func() error { return fillGroupDefaults(&c.Requests) },
		func() error { return fillGroupDefaults(&c.Liveness) },
	} {
		if err := fill(); err != nil {
			return c, err
		}
	}
	return c, nil
}

// configGroup is a group of Config that validates itself and fills in
// its own defaults.
type configGroup[T any] interface {
	withDefaults() (T, error)
}

// fillGroupDefaults replaces the group *g with its defaulted value (also
// when that fails, as the groups' own withDefaults return it) and returns
// the group's validation error.
func fillGroupDefaults[T configGroup[T]](g *T) error {
	var err error
	*g, err = (*g).withDefaults()
	return err
}

// anyNegative reports whether one of vs is below zero: the budgets and
// durations of a Config that must not be negative, checked as one rule.
func anyNegative(vs ...int64) bool {
	for _, v := range vs {
		if v < 0 {
			return true
		}
	}
	return false
}
