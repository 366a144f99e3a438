package steering

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// LivenessWalks configure a round's liveness search: after consequence
// prediction, MaceMC's random walks from the snapshot's global state
// against the liveness properties. A walk that never reaches a state
// where every liveness property holds is a suspected violation: the round
// then searches its critical transition (consequence.FindCriticalTransition)
// and reports a liveness prediction (Prediction.Critical).
type LivenessWalks struct {
	// WalkOptions are MaceMC's parameters, as consequence takes them,
	// with a round's defaults:
	//
	//   - Seed is mixed with the node and the snapshot's fingerprint
	//     into every round's walk seed, so a round stays a pure function
	//     of its snapshot (default 0).
	//   - Walks is the number of walks a round takes (default
	//     DefaultRoundWalks; negative: no walks).
	//   - DMax is a walk's length in steps (default DefaultWalkDepth).
	//   - DInit is the number of steps a walk takes before a live state
	//     counts (default DefaultWalkWarmup, at most half of DMax): from a
	//     live snapshot, a walk that could stop at once would never enter
	//     a dead end ahead. Probes of the critical transition count any
	//     live state.
	//   - K is the number of walks that probe one state in the
	//     critical-transition search: a state is dead when none of them
	//     reaches a live state (default DefaultProbeWalks).
	//   - Weight, when set, weighs every action of every walk, in place
	//     of WalkWeights and AdaptiveWeights.
	WalkOptions
	// MaxSuspects is how many suspects a round judges before it gives up
	// on finding a dead end: a suspect judged C2 is passed over and the
	// walks go on (default DefaultMaxSuspects).
	MaxSuspects int
	// MaxWalkSteps bounds the steps of a round's liveness search — walks,
	// probes, minimizing the dead path and checking its filter — so a
	// round's cost stays bounded whatever the service (default
	// DefaultMaxWalkSteps). Past it the search stops with what it found
	// (LivenessOutcome.BudgetSpent).
	MaxWalkSteps int
	// LiveFraction is the check of a filter against a dead end (mode
	// Steer): with the filters in place, at least this fraction of Walks
	// walks from the snapshot must reach a live state, and the filter must
	// pass the safety check of filters. In [0, 1]; default
	// DefaultLiveFraction.
	LiveFraction float64
	// WalkWeights weighs a walk's next action by kind (MaceMC §4.3): an
	// action is drawn with probability proportional to its weight; kinds
	// missing weigh 1, and 0 excludes a kind. Nil means
	// DefaultWalkWeights: faults and timers rare, so walks explore message
	// interleavings (MaceMC's RandTree bug is found offline only with such
	// weights: docs/RESULTS.md). The map is read, never modified.
	WalkWeights map[consequence.ActorActionKind]float64
	// AdaptiveWeights makes a layer's rounds weigh their walks by the
	// rates of the node's own events (EventRates.WalkWeights of what its
	// gate saw: deliveries, timers and their periods, calls, transport
	// errors, resets, refusals) instead of WalkWeights, which the rounds
	// before the first event keep. Off by default: it changes what the
	// rounds find (docs/RESULTS.md, "Liveness at the library's defaults").
	AdaptiveWeights bool
	// ConfirmGrace is how long the property of a predicted dead end must
	// fail, as the node's later snapshots see it, before the prediction
	// counts as confirmed (Stats.DeadEndsConfirmed; LivenessWatch has the
	// rule). Default DefaultConfirmGrace; negative is an error.
	ConfirmGrace time.Duration
}

// WalkOptions are MaceMC's walk parameters for the explorer's actor
// model (LivenessWalks embeds them).
type WalkOptions = consequence.WalkOptions[consequence.ActorAction]

// Defaults of LivenessWalks. They keep the search at about a tenth of a
// round's default safety budget on RandTree and Chord neighbourhoods
// (docs/PERFORMANCE.md).
const (
	// DefaultRoundWalks is the walks a round takes (LivenessWalks.Walks).
	DefaultRoundWalks = 32
	// DefaultWalkDepth is a walk's length in steps (LivenessWalks.DMax).
	DefaultWalkDepth = 500
	// DefaultWalkWarmup is the steps a walk takes before a live state
	// counts (LivenessWalks.DInit).
	DefaultWalkWarmup = 100
	// DefaultProbeWalks is the walks that probe one state
	// (LivenessWalks.K).
	DefaultProbeWalks = 8
	// DefaultMaxWalkSteps bounds a round's liveness search, in steps.
	DefaultMaxWalkSteps = 40_000
	// DefaultMaxSuspects is the suspects a round judges.
	DefaultMaxSuspects = 4
	// DefaultLiveFraction is the share of walks a filter against a dead
	// end must leave live.
	DefaultLiveFraction = 0.95
)

// DefaultWalkWeights returns the walk weights a nil
// LivenessWalks.WalkWeights stands for: resets, breaks, datagram drops,
// refused sends, crashes, partitions, clock jumps and lost, duplicated,
// overtaken and late messages 0.02, timers 0.1, every other kind 1.
func DefaultWalkWeights() map[consequence.ActorActionKind]float64 {
	return map[consequence.ActorActionKind]float64{
		consequence.ActReset: 0.02, consequence.ActBreak: 0.02, consequence.ActDropDatagram: 0.02, consequence.ActRefuse: 0.02,
		consequence.ActCrash: 0.02, consequence.ActPartition: 0.02, consequence.ActClockJump: 0.02,
		consequence.ActLose: 0.02, consequence.ActDuplicate: 0.02, consequence.ActDeliverAhead: 0.02, consequence.ActDelay: 0.02,
		consequence.ActTimer: 0.1,
	}
}

func (w LivenessWalks) withDefaults() (LivenessWalks, error) {
	if err := w.checkWalkBudget(); err != nil {
		return w, err
	}
	w.Walks = cmp.Or(w.Walks, DefaultRoundWalks)
	w.DMax = cmp.Or(w.DMax, DefaultWalkDepth)
	w.DInit = cmp.Or(w.DInit, min(DefaultWalkWarmup, w.DMax/2))
	if w.DInit >= w.DMax {
		return w, fmt.Errorf("%w: DInit %d leaves no step of the %d-step walks to reach a live state", ErrInvalidConfig, w.DInit, w.DMax)
	}
	w.K = cmp.Or(w.K, DefaultProbeWalks)
	w.MaxWalkSteps = cmp.Or(w.MaxWalkSteps, DefaultMaxWalkSteps)
	w.MaxSuspects = cmp.Or(w.MaxSuspects, DefaultMaxSuspects)
	w.LiveFraction = cmp.Or(w.LiveFraction, DefaultLiveFraction)
	w.ConfirmGrace = cmp.Or(w.ConfirmGrace, DefaultConfirmGrace)
	if w.WalkWeights == nil {
		w.WalkWeights = DefaultWalkWeights()
	}
	return w, nil
}

// checkWalkBudget refuses the walk settings no default repairs: a negative
// budget, a LiveFraction outside [0, 1], a negative, NaN or infinite walk
// weight.
func (w LivenessWalks) checkWalkBudget() error {
	if anyNegative(int64(w.DMax), int64(w.DInit), int64(w.K), int64(w.MaxWalkSteps), int64(w.MaxSuspects), int64(w.ConfirmGrace)) {
		return fmt.Errorf("%w: negative walk budget (DMax %d, DInit %d, K %d, MaxWalkSteps %d, MaxSuspects %d, ConfirmGrace %v)",
			ErrInvalidConfig, w.DMax, w.DInit, w.K, w.MaxWalkSteps, w.MaxSuspects, w.ConfirmGrace)
	}
	if !(w.LiveFraction >= 0 && w.LiveFraction <= 1) {
		return fmt.Errorf("%w: LiveFraction %v is not in [0, 1]", ErrInvalidConfig, w.LiveFraction)
	}
	return checkWalkWeights(w.WalkWeights)
}

// checkWalkWeights refuses a walk weight that is negative, NaN or
// infinite (the first one met, in map order).
func checkWalkWeights(ws map[consequence.ActorActionKind]float64) error {
	for k, weight := range ws {
		if !(weight >= 0) || math.IsInf(weight, 0) {
			return fmt.Errorf("%w: walk weight %v of action kind %d", ErrInvalidConfig, weight, k)
		}
	}
	return nil
}

// SafetyWalkConfig configures a round's safety walks: random walks from
// the snapshot's global state checking the safety properties at every
// step, after its consequence search (safetywalks.go), half with the walk
// weights of the liveness walks, half with every kind weighing 1. A walk
// that reaches a violating state is a prediction like the search's, its
// path minimized and its filter checked the same way. They find races the
// search prunes (a timer firing again in a local state its node has been
// in) and depth beyond its state budget.
type SafetyWalkConfig struct {
	// SafetyWalks is the number of safety walks a round takes. Zero (the
	// default) means none; negative is an error. Their steps count
	// against a MaxWalkSteps of their own and in RoundReport.States.
	SafetyWalks int
	// SafetyWalkDepth is the length of a safety walk in steps (default
	// DefaultSafetyWalkDepth).
	SafetyWalkDepth int
}

// DefaultSafetyWalkDepth is SafetyWalkConfig.SafetyWalkDepth's default:
// deep enough for the timer races of the bug zoo's retry case (a
// violation at depth 10 from its initial state) with room for the events
// a walk takes on the way.
const DefaultSafetyWalkDepth = 100

func (s SafetyWalkConfig) withDefaults() (SafetyWalkConfig, error) {
	if anyNegative(int64(s.SafetyWalks), int64(s.SafetyWalkDepth)) {
		return s, fmt.Errorf("%w: negative safety walks (SafetyWalks %d, SafetyWalkDepth %d)", ErrInvalidConfig, s.SafetyWalks, s.SafetyWalkDepth)
	}
	s.SafetyWalkDepth = cmp.Or(s.SafetyWalkDepth, DefaultSafetyWalkDepth)
	return s, nil
}
