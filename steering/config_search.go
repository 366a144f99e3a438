package steering

import (
	"cmp"
	"fmt"
	"time"
)

// SearchBudget bounds each search of a round: consequence prediction, the
// near future, replays and filter checks. Budgets in states, not time,
// keep a round a pure function of its snapshot.
type SearchBudget struct {
	// MaxStates is each search's budget of unique states (default
	// DefaultMaxStates).
	MaxStates int
	// MaxDepth bounds each search's depth (default: none).
	MaxDepth int
	// FullDepth and NearStates are the round strategy's second search,
	// the near future: after consequence prediction (the paper's Fig. 8,
	// within MaxStates), each search of a round explores again, within
	// NearStates states, expanding every timer and application call of
	// every state of its first FullDepth levels and pruning as Fig. 8
	// does only below (consequence.Options.FullDepth; faults keep Fig.
	// 8's rule). Fig. 8 runs a node's local actions only where the node
	// first shows a local state, so a timer that must fire again in
	// another context — a retry racing the replies to its previous
	// attempt — is never explored from a live snapshot. The second search
	// has a budget of its own so that Fig. 8's reach is not spent on the
	// near future (doing both in one search lost Paxos's predictions:
	// docs/history/results-steering-rules.md, "The round strategy").
	// FullDepth defaults to DefaultFullDepth, NearStates to MaxStates /
	// NearStatesDivisor; a negative value of either turns the second
	// search off.
	FullDepth  int
	NearStates int
	// MaxTime bounds each search's wall time (default: none). It makes
	// rounds depend on timing: the live shell uses it; an emulated run
	// with it set is no longer a pure function of its seed.
	MaxTime time.Duration
	// Workers is the number of goroutines per search (default
	// DefaultWorkers: the emulator runs a controller per node; the live
	// runtime may give more).
	Workers int
	// MaxViolations is how many violations per property a search records
	// (default DefaultMaxViolations).
	MaxViolations int
}

// Defaults of SearchBudget.
const (
	// DefaultMaxStates is SearchBudget.MaxStates's default, in unique
	// states per search.
	DefaultMaxStates = 20_000
	// DefaultFullDepth is the depth of a round's exhaustive near future
	// (SearchBudget.FullDepth), chosen by measurement
	// (docs/history/results-steering-rules.md, "The round strategy").
	DefaultFullDepth = 2
	// NearStatesDivisor makes the near future's default budget a fifth of
	// MaxStates (SearchBudget.NearStates).
	NearStatesDivisor = 5
	// DefaultWorkers is SearchBudget.Workers's default, in goroutines.
	DefaultWorkers = 1
	// DefaultMaxViolations is SearchBudget.MaxViolations's default, per
	// property and search.
	DefaultMaxViolations = 4
)

func (b SearchBudget) withDefaults() (SearchBudget, error) {
	if anyNegative(int64(b.MaxStates), int64(b.MaxDepth), int64(b.MaxTime), int64(b.Workers), int64(b.MaxViolations)) {
		return b, fmt.Errorf("%w: negative search budget (MaxStates %d, MaxDepth %d, MaxTime %v, Workers %d, MaxViolations %d)",
			ErrInvalidConfig, b.MaxStates, b.MaxDepth, b.MaxTime, b.Workers, b.MaxViolations)
	}
	b.MaxStates = cmp.Or(b.MaxStates, DefaultMaxStates)
	b.FullDepth = cmp.Or(b.FullDepth, DefaultFullDepth)
	b.NearStates = cmp.Or(b.NearStates, b.MaxStates/NearStatesDivisor)
	if anyNegative(int64(b.FullDepth), int64(b.NearStates)) {
		b.FullDepth, b.NearStates = -1, -1
	}
	b.Workers = cmp.Or(b.Workers, DefaultWorkers)
	b.MaxViolations = cmp.Or(b.MaxViolations, DefaultMaxViolations)
	return b, nil
}
