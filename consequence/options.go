package consequence

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"time"
)

// Sentinel errors. Every error the package returns is prefixed
// "consequence: " and wraps one of these (or, for cancellation, the
// context's error), so callers test them with errors.Is.
var (
	// ErrInvalidOptions: an option is out of range (a negative budget, an
	// unknown strategy, a property without a name or check, two properties
	// with the same name).
	ErrInvalidOptions = errors.New("consequence: invalid options")
	// ErrInvalidModel: the model broke its contract in a way the checker
	// detects (no model, no initial states, too many actions), or the
	// system it models did: the actor model meets a message outside its
	// Spec.Messages (node.Registry.CheckMessage).
	ErrInvalidModel = errors.New("consequence: invalid model")
	// ErrModelPanic: a model method or a property check panicked. The error
	// carries the panic value and the depth being explored.
	ErrModelPanic = errors.New("consequence: model panicked")
	// ErrNondeterministic: replaying a recorded path did not reproduce the
	// state the search had reached: the model is not deterministic.
	ErrNondeterministic = errors.New("consequence: model is not deterministic")
	// ErrReplay: Replay could not apply a path (an action was disabled).
	ErrReplay = errors.New("consequence: replay failed")
)

// Strategy selects how the checker expands states.
type Strategy uint8

const (
	// BFS is exhaustive breadth-first search with duplicate detection by
	// fingerprint: the CrystalBall paper's Fig. 5, MaceMC's exhaustive
	// search. It is the zero value.
	BFS Strategy = iota
	// Consequence is consequence prediction, the paper's Fig. 8: BFS, except
	// that the local actions of node n are expanded only in the first state
	// (in BFS order) in which n has a given local state; message deliveries
	// are always expanded.
	Consequence
)

// String returns "bfs" or "consequence".
func (s Strategy) String() string {
	switch s {
	case BFS:
		return "bfs"
	case Consequence:
		return "consequence"
	}
	return fmt.Sprintf("strategy(%d)", uint8(s))
}

// ParseStrategy parses the names String returns.
func ParseStrategy(name string) (Strategy, error) {
	switch name {
	case "bfs":
		return BFS, nil
	case "consequence":
		return Consequence, nil
	}
	return 0, fmt.Errorf("%w: unknown strategy %q (want bfs or consequence)", ErrInvalidOptions, name)
}

// Options configure a search. The zero value of every field means its
// documented default (DefaultOptions): an exhaustive BFS on every core with
// no budget, recording the first violation of each property. Budgets of
// zero mean "no limit"; negative values are errors.
type Options struct {
	// Strategy is BFS (default) or Consequence.
	Strategy Strategy
	// Workers is the number of goroutines expanding states; 0 means
	// runtime.GOMAXPROCS(0). Results do not depend on it (see Checker.Run).
	Workers int
	// MaxStates stops the search once this many unique states are known:
	// the first MaxStates unique states in BFS order are kept.
	MaxStates int
	// MaxDepth stops the search at this depth: states at depth MaxDepth
	// (start states are at depth 0) are generated and checked but not
	// expanded.
	MaxDepth int
	// MaxTime stops the search after this much wall time, measured with
	// Clock. Unlike the other budgets it makes the result depend on timing.
	MaxTime time.Duration
	// MaxMemory stops the search once the process uses this many bytes:
	// when the Go heap's live data after a collection exceeds 90% of it, or
	// the memory the heap holds from the system (what RSS shows of it)
	// exceeds it. It is checked with the time budget, every few hundred
	// states; like MaxTime it makes the result depend on the run (the
	// level being expanded is kept up to the last finished round). The
	// whole process counts, so other searches running beside it do too.
	// The search does not set a memory limit itself (debug.SetMemoryLimit
	// is process-wide); a program that runs one search, as the CLI does,
	// sets it to the budget so that the collector works harder before the
	// budget is reached. 0: no budget.
	MaxMemory int64
	// FullDepth makes consequence prediction exhaustive near its start
	// states: in a state at a depth below FullDepth every node's local
	// actions but faults (Action.Fault) are expanded, whether or not the
	// node's local state was seen before (its local fingerprint is still
	// recorded, so the pruning beyond FullDepth knows it). Consequence prediction expands a node's
	// timers and calls only the first time the node shows a local state,
	// so a race that needs a node's own timer to fire again in another
	// context — a retry racing the replies to its previous attempt — is
	// pruned away; FullDepth keeps the economy deep down and covers the
	// near future, where a live round starts, completely. Faults keep
	// Fig. 8's rule: re-running every reset and break in every near state
	// multiplied a Paxos round's states beyond its budget and lost the
	// prediction steering needs (docs/history/results-steering-rules.md,
	// "The round strategy").
	// Ignored by BFS; 0 is plain Fig. 8.
	FullDepth int
	// MaxViolations is how many violating states are recorded per property,
	// the first ones in BFS order; 0 means 1. Once every property has this
	// many, the search stops (StopViolations) at the end of the level.
	MaxViolations int
	// StopOnViolation stops the search at the end of the first level in
	// which any violation was recorded.
	StopOnViolation bool
	// Periphery is how many states of the deepest level the search reached
	// to return in Result.Periphery, with their paths: MaceMC starts random
	// walks there, where the bounded search left off. They are sampled
	// evenly across the level, so the choice is deterministic. 0: none.
	Periphery int
	// DisablePOR turns off partial-order reduction. BFS of a model that
	// implements Commuter uses sleep sets by default: it visits the same
	// states at the same depths and finds the same violations, taking
	// fewer transitions (Result.Slept counts those it skips). A search
	// that has made 65,536 transitions weighs them once: a model that is
	// not a KeyedCommuter lists a successor's actions to compute its sleep
	// set, and when the search slept fewer transitions than half those
	// listings, it goes on without sleep sets (Result.SleepSetsOff). Consequence
	// prediction never uses them (its pruning is by local state), nor do
	// random walks. Set it to compare, or to count every transition.
	DisablePOR bool
	// Clock returns the current time, for MaxTime and Result.Elapsed; nil
	// means time.Now. It must be safe for concurrent use. The search logic
	// reads no other clock.
	Clock func() time.Time

	// Progress, if set, is called after each level is complete, on the
	// goroutine that called Run (never concurrently), with the search's
	// counters so far. It must return quickly; a CLI prints a line from it.
	Progress func(Progress)

	// minParallel overrides the smallest frontier expanded in parallel
	// (tests set it to 1 to run the parallel phases on small models).
	minParallel int
	// parallelRound overrides parallelRound (tests make levels span many
	// rounds).
	parallelRound int
	// onDirect, if set, is called with the number of frontier states each
	// expandDirect call expanded (tests check how much of a parallel
	// search ran on one core).
	onDirect func(n int)
	// sleepByPosition, if set, makes a KeyedCommuter's sleep sets name
	// positions as a Commuter's do (tests compare the two).
	sleepByPosition int
	// porProbe overrides porProbe (tests make small searches weigh their
	// sleep sets).
	porProbe int
	// packing overrides packs' choice: 1 packs, -1 does not (tests run
	// small searches both ways).
	packing int
}

// Progress is a running search's state at the end of a level, passed to
// Options.Progress.
type Progress struct {
	// Depth is the level just completed; Frontier its number of states
	// (those to be expanded next).
	Depth    int
	Frontier int
	// Unique, Generated and Pruned are the counters of Result so far.
	Unique, Generated, Pruned uint64
	// Violations is the number of violations recorded so far.
	Violations int
	// Elapsed is the time since Run started, on Options.Clock.
	Elapsed time.Duration
}

// DefaultOptions returns what the zero Options stand for, filled in: BFS,
// runtime.GOMAXPROCS(0) workers (read now; a zero Workers reads it when
// the search starts), no state, depth or time budget, one violation
// recorded per property, no stop at the first violation, no periphery,
// time.Now as the clock and no progress callback.
func DefaultOptions() Options {
	return Options{Strategy: BFS, Workers: runtime.GOMAXPROCS(0), MaxViolations: 1, Clock: time.Now}
}

// resolve checks o and returns it with defaults filled in.
func (o Options) resolve() (Options, error) {
	switch {
	case o.Strategy != BFS && o.Strategy != Consequence:
		return o, fmt.Errorf("%w: unknown strategy %d", ErrInvalidOptions, uint8(o.Strategy))
	case o.Periphery < 0:
		return o, fmt.Errorf("%w: Periphery = %d, want >= 0", ErrInvalidOptions, o.Periphery)
	case o.Workers < 0:
		return o, fmt.Errorf("%w: Workers = %d, want >= 0", ErrInvalidOptions, o.Workers)
	case o.MaxStates < 0:
		return o, fmt.Errorf("%w: MaxStates = %d, want >= 0", ErrInvalidOptions, o.MaxStates)
	case o.MaxDepth < 0:
		return o, fmt.Errorf("%w: MaxDepth = %d, want >= 0", ErrInvalidOptions, o.MaxDepth)
	case o.MaxTime < 0:
		return o, fmt.Errorf("%w: MaxTime = %v, want >= 0", ErrInvalidOptions, o.MaxTime)
	case o.MaxMemory < 0:
		return o, fmt.Errorf("%w: MaxMemory = %d, want >= 0", ErrInvalidOptions, o.MaxMemory)
	case o.FullDepth < 0:
		return o, fmt.Errorf("%w: FullDepth = %d, want >= 0", ErrInvalidOptions, o.FullDepth)
	case o.MaxViolations < 0:
		return o, fmt.Errorf("%w: MaxViolations = %d, want >= 0", ErrInvalidOptions, o.MaxViolations)
	}
	d := DefaultOptions()
	o.Workers = cmp.Or(o.Workers, d.Workers)
	o.MaxViolations = cmp.Or(o.MaxViolations, d.MaxViolations)
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	return o, nil
}
