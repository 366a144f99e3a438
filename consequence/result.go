package consequence

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// StopReason says why a search ended.
type StopReason uint8

const (
	// StopCompleted: every reachable state (within the strategy's pruning)
	// was explored.
	StopCompleted StopReason = iota + 1
	// StopStateBudget: a new state was found when MaxStates were known.
	StopStateBudget
	// StopDepthBudget: states at MaxDepth were left unexpanded.
	StopDepthBudget
	// StopTimeBudget: MaxTime elapsed.
	StopTimeBudget
	// StopCanceled: the context was canceled.
	StopCanceled
	// StopViolations: every property had MaxViolations violations, or
	// StopOnViolation was set and one was found.
	StopViolations
	// StopMemoryBudget: the process reached Options.MaxMemory.
	StopMemoryBudget
)

// String returns a short lower-case name ("completed", "state budget", ...).
func (r StopReason) String() string {
	switch r {
	case StopCompleted:
		return "completed"
	case StopStateBudget:
		return "state budget"
	case StopDepthBudget:
		return "depth budget"
	case StopTimeBudget:
		return "time budget"
	case StopCanceled:
		return "canceled"
	case StopViolations:
		return "violations"
	case StopMemoryBudget:
		return "memory budget"
	}
	return fmt.Sprintf("stop-reason(%d)", uint8(r))
}

// Violation is a state that violates a property, with the path that reaches
// it from a start state. Replay(model, v.Start, v.Path) reproduces v.State.
type Violation[S, A any] struct {
	// Property is the violated property's name, Kind its kind.
	Property string
	Kind     node.PropertyKind
	// Err is what the property's Check returned. For a liveness property the
	// state is also quiescent: no enabled action leads anywhere else.
	Err error
	// Depth is the length of Path: the state's BFS depth.
	Depth int
	// Start is the start state (one of Model.Init's) the path begins at.
	Start S
	// Path is the sequence of actions from Start to State, each tagged with
	// its node and kind.
	Path Path[A]
	// State is the violating state; Fingerprint its fingerprint.
	State       S
	Fingerprint node.Hash
}

// PathState is a state with the path that reaches it from a start state:
// Replay(model, Start, Path) returns State.
type PathState[S, A any] struct {
	Start S
	Path  Path[A]
	State S
}

// Result is what a search found and what it cost.
type Result[S, A any] struct {
	// Strategy and Workers are the ones the search used.
	Strategy Strategy
	Workers  int
	// Stop says why the search ended.
	Stop StopReason
	// Generated counts the states generated: the start states Init returned
	// plus every successor Next returned, duplicates included (TLC's "states
	// generated").
	Generated uint64
	// Unique is the number of distinct states found (the visited set's size).
	Unique uint64
	// Pruned counts the local actions consequence prediction did not expand
	// (zero for BFS).
	Pruned uint64
	// Slept counts the actions partial-order reduction did not take: each
	// was asleep in the state expanded, its successor reached by another
	// path (see Options.DisablePOR). Zero without reduction.
	Slept uint64
	// SleepSetsOff is the depth whose level was the first expanded without
	// sleep sets because they did not pay (see Options.DisablePOR); 0 when
	// they ran throughout, or never ran.
	SleepSetsOff int
	// Depth is the deepest level at which a state was found.
	Depth int
	// DepthCounts[d] is the number of unique states first found at depth d.
	DepthCounts []uint64
	// Violations are the recorded violations, in the order the search met
	// them (by depth, then position in the level, then property order).
	Violations []Violation[S, A]
	// Periphery holds up to Options.Periphery states of the deepest level
	// reached (the last, possibly partial, level when a budget stopped the
	// search), in level order, each with its path from its start state.
	Periphery []PathState[S, A]
	// Elapsed is the wall time of the search, measured with Options.Clock.
	Elapsed time.Duration
	// VisitedBytes is the memory of the visited set (fingerprints only);
	// TraceBytes that of the parent links kept to rebuild violation paths
	// (4 bytes per state where a level's parent and action positions fit a
	// word, else 6); LocalBytes that of consequence prediction's
	// localExplored set.
	VisitedBytes, TraceBytes, LocalBytes uint64
	// OmissionProbability estimates the chance that the search took a new
	// state for a visited one and so never explored it: the expected number
	// of pairs of visited states (and of consequence prediction's local
	// keys) whose fingerprints the sets confuse (TLC reports the same for
	// its 64-bit fingerprints). KeyBits is how many bits of a fingerprint
	// the visited set tells apart.
	OmissionProbability float64
	KeyBits             int
	// FrontierBytes is the most memory the search's two live levels held
	// at the end of a level: their slices (fingerprints, sleep sets, the
	// states themselves for a model that does not pack — not what they
	// point to — or the packed words), a packing model's tables of
	// interned parts and partial-order reduction's index of the level
	// being built.
	FrontierBytes uint64
	// PeakMemory is the largest memory the Go heap held from the system
	// (mapped minus released) at the search's checks of Options.MaxMemory;
	// zero when it had no memory budget.
	PeakMemory uint64
}

// Completed reports whether the search explored everything reachable.
func (r *Result[S, A]) Completed() bool { return r.Stop == StopCompleted }

// BytesPerState is the visited set's memory per unique state.
func (r *Result[S, A]) BytesPerState() float64 {
	if r.Unique == 0 {
		return 0
	}
	return float64(r.VisitedBytes) / float64(r.Unique)
}

// StatesPerSecond is the unique states found per second of Elapsed.
func (r *Result[S, A]) StatesPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Unique) / r.Elapsed.Seconds()
}

// Violated returns the first recorded violation of the named property.
func (r *Result[S, A]) Violated(property string) (Violation[S, A], bool) {
	for _, v := range r.Violations {
		if v.Property == property {
			return v, true
		}
	}
	return Violation[S, A]{}, false
}

// Replay applies path to start with m.Next and returns the state reached. It
// fails with an error wrapping ErrReplay if an action is not enabled where
// the path takes it.
func Replay[S, A any](m Model[S, A], start S, path []Action[A]) (S, error) {
	s := start
	for i, a := range path {
		next, ok := m.Next(s, a.Act)
		if !ok {
			return s, fmt.Errorf("%w: step %d (%v) is not enabled", ErrReplay, i+1, a.Act)
		}
		s = next
	}
	return s, nil
}
