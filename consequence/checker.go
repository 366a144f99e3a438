package consequence

import (
	"context"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Checker configures and runs searches of one model. Build it with
// NewChecker and the chained setters, then call Run:
//
//	res, err := consequence.NewChecker(model).
//		Properties(props...).
//		Strategy(consequence.Consequence).
//		MaxStates(1_000_000).MaxDepth(20).MaxTime(5 * time.Second).
//		Run(ctx)
//
// The setters modify and return the checker; they are not safe for
// concurrent use. Run does not modify the checker, so one configured checker
// may run several searches, also concurrently.
type Checker[S, A any] struct {
	model Model[S, A]
	props []Property[S]
	opts  Options
}

// NewChecker returns a checker for m with the zero Options (exhaustive BFS,
// all cores, no budgets) and no properties.
//
// S and A are inferred from the methods of m's type, so
// consequence.NewChecker(actorModel) is a *Checker[*GlobalState,
// ActorAction] and consequence.NewChecker(twophaseModel) a
// *Checker[twophase.State, twophase.Action]; this holds for any concrete
// model type (also one that embeds another model) under the inference rules
// of Go 1.21 and later, which every module using this one has. Spell them
// out only when m has no type of its own (an untyped nil).
func NewChecker[S, A any](m Model[S, A]) *Checker[S, A] {
	return &Checker[S, A]{model: m}
}

// Properties adds properties to check. Names must be unique and non-empty.
func (c *Checker[S, A]) Properties(ps ...Property[S]) *Checker[S, A] {
	c.props = append(c.props, ps...)
	return c
}

// WithOptions replaces all options.
func (c *Checker[S, A]) WithOptions(o Options) *Checker[S, A] { c.opts = o; return c }

// Options returns the options as set (defaults not yet filled in).
func (c *Checker[S, A]) Options() Options { return c.opts }

// Strategy sets Options.Strategy.
func (c *Checker[S, A]) Strategy(s Strategy) *Checker[S, A] { c.opts.Strategy = s; return c }

// Workers sets Options.Workers.
func (c *Checker[S, A]) Workers(n int) *Checker[S, A] { c.opts.Workers = n; return c }

// MaxStates sets Options.MaxStates.
func (c *Checker[S, A]) MaxStates(n int) *Checker[S, A] { c.opts.MaxStates = n; return c }

// MaxDepth sets Options.MaxDepth.
func (c *Checker[S, A]) MaxDepth(d int) *Checker[S, A] { c.opts.MaxDepth = d; return c }

// MaxTime sets Options.MaxTime.
func (c *Checker[S, A]) MaxTime(d time.Duration) *Checker[S, A] { c.opts.MaxTime = d; return c }

// MaxMemory sets Options.MaxMemory (bytes).
func (c *Checker[S, A]) MaxMemory(bytes int64) *Checker[S, A] { c.opts.MaxMemory = bytes; return c }

// FullDepth sets Options.FullDepth.
func (c *Checker[S, A]) FullDepth(d int) *Checker[S, A] { c.opts.FullDepth = d; return c }

// MaxViolations sets Options.MaxViolations.
func (c *Checker[S, A]) MaxViolations(n int) *Checker[S, A] { c.opts.MaxViolations = n; return c }

// Periphery sets Options.Periphery.
func (c *Checker[S, A]) Periphery(n int) *Checker[S, A] { c.opts.Periphery = n; return c }

// StopOnViolation sets Options.StopOnViolation.
func (c *Checker[S, A]) StopOnViolation(stop bool) *Checker[S, A] {
	c.opts.StopOnViolation = stop
	return c
}

// DisablePOR sets Options.DisablePOR.
func (c *Checker[S, A]) DisablePOR(off bool) *Checker[S, A] { c.opts.DisablePOR = off; return c }

// Progress sets Options.Progress.
func (c *Checker[S, A]) Progress(f func(Progress)) *Checker[S, A] { c.opts.Progress = f; return c }

// Clock sets Options.Clock.
func (c *Checker[S, A]) Clock(now func() time.Time) *Checker[S, A] { c.opts.Clock = now; return c }

// Run searches the model's state space from its start states and returns
// what it found.
//
// Determinism: the search is level-synchronous — all states at depth d are
// expanded before any at depth d+1, and each level's successors are merged
// in the order of their parents in the frontier and of the actions in each
// parent's Actions list. The unique states, the per-depth counts, the states
// and actions counted, and the violations with their paths are therefore the
// same for every Workers value and every goroutine schedule, given the same
// model, properties and budgets (MaxTime and cancellation excepted: they stop
// the search wherever it is).
//
// Budgets (MaxStates, MaxDepth, MaxTime) end the search normally: Run
// returns the result with Stop saying which budget was hit and a nil error.
// If ctx is canceled, Run returns the result so far (Stop == StopCanceled)
// and an error wrapping ctx.Err(). Any other error (invalid options, a model
// panic, a nondeterministic model) comes with a nil result. Every goroutine
// Run starts has exited when it returns.
func (c *Checker[S, A]) Run(ctx context.Context) (*Result[S, A], error) {
	opts, err := c.opts.resolve()
	if err != nil {
		return nil, err
	}
	if c.model == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInvalidModel)
	}
	seen := make(map[string]bool, len(c.props))
	for i, p := range c.props {
		switch {
		case p.Name == "":
			return nil, fmt.Errorf("%w: property %d has no name", ErrInvalidOptions, i)
		case p.Check == nil:
			return nil, fmt.Errorf("%w: property %q has no check", ErrInvalidOptions, p.Name)
		case p.Kind != node.Safety && p.Kind != node.Liveness:
			return nil, fmt.Errorf("%w: property %q has kind %v", ErrInvalidOptions, p.Name, p.Kind)
		case seen[p.Name]:
			return nil, fmt.Errorf("%w: two properties named %q", ErrInvalidOptions, p.Name)
		}
		seen[p.Name] = true
	}
	if ctx == nil {
		ctx = context.Background()
	}
	r := newRun(ctx, c.model, append([]Property[S](nil), c.props...), opts)
	return r.search()
}
