package steering

import (
	"fmt"
	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"slices"
	"time"
)

// DefaultConfirmGrace is how long a predicted dead end's property must
// fail before the prediction counts as confirmed, by default
// (Config.ConfirmGrace). Five seconds is longer than the transient
// failures of the team's services' liveness properties while a join or a
// lock request is under way (hundreds of milliseconds on the emulator's
// default topology) and far shorter than the dead ends of the papers'
// bugs, which last until the run ends.
const DefaultConfirmGrace = 5 * time.Second

// LivenessWatch follows the liveness predictions (dead ends) of a run
// until the run settles them, so that a false-alarm rate exists: a
// prediction made at time t is
//
//   - confirmed at the first observation at which its property has been
//     observed failing, without an observation in between where it held,
//     for at least the grace, counted from t or from the first failing
//     observation after the last one where it held, whichever is later;
//   - retracted at the first observation, at or after t + grace, where
//     its property holds: the dead end did not last, or never opened (a
//     property may hold during the grace: the critical step may still be
//     ahead);
//   - pending until then (Counts).
//
// So a prediction is settled by t + 2·grace when it is observed that
// late. What an observation is belongs to the caller: the controller
// observes each round's snapshot (its neighbourhood's view), the emulator
// the global state after every event (docs/ARCHITECTURE.md, "Confirmed
// and retracted dead ends"). A LivenessWatch is a deterministic core
// (times are the caller's, virtual in emulation); not safe for concurrent
// use.
type LivenessWatch struct {
	grace   time.Duration
	pending []watchedPrediction
	// failingSince holds, per property with a pending prediction, the
	// first failing observation since the last one where it held.
	failingSince         map[string]time.Time
	confirmed, retracted uint64
}

type watchedPrediction struct {
	prop string
	at   time.Time
}

// NewLivenessWatch returns a watch with the given grace (0 means
// DefaultConfirmGrace); a negative grace is an error.
func NewLivenessWatch(grace time.Duration) (*LivenessWatch, error) {
	if grace < 0 {
		return nil, fmt.Errorf("steering: negative confirmation grace %v", grace)
	}
	if grace == 0 {
		grace = DefaultConfirmGrace
	}
	return &LivenessWatch{grace: grace, failingSince: map[string]time.Time{}}, nil
}

// Grace is the watch's grace.
func (w *LivenessWatch) Grace() time.Duration { return w.grace }

// Predicted starts watching a dead end of property prop predicted at at;
// holds is the property's value observed at that time (it is an
// observation of prop, as Observe).
func (w *LivenessWatch) Predicted(prop string, at time.Time, holds bool) {
	w.pending = append(w.pending, watchedPrediction{prop: prop, at: at})
	w.Observe(prop, at, holds)
}

// Watched returns the properties with a pending prediction, sorted: those
// the caller needs to observe.
func (w *LivenessWatch) Watched() []string {
	var out []string
	for _, p := range w.pending {
		out = append(out, p.prop)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Observe records that prop held (or failed) at at, and settles the
// pending predictions of prop it decides. Observations must come in time
// order.
func (w *LivenessWatch) Observe(prop string, at time.Time, holds bool) {
	since, failing := w.failingSince[prop]
	switch {
	case holds:
		delete(w.failingSince, prop)
	case !failing:
		since = at
		w.failingSince[prop] = at
	}
	if !w.settlePending(prop, at, holds, since) {
		delete(w.failingSince, prop) // stale once nothing watches it
	}
}

// settlePending settles the pending predictions of prop that an
// observation at at decides (settle), keeps the others in order, and
// reports whether a prediction of prop is still pending.
func (w *LivenessWatch) settlePending(prop string, at time.Time, holds bool, since time.Time) (left bool) {
	kept := w.pending[:0]
	for _, p := range w.pending {
		if p.prop == prop && w.settle(p, at, holds, since) {
			continue
		}
		left = left || p.prop == prop
		kept = append(kept, p)
	}
	clear(w.pending[len(kept):])
	w.pending = kept
	return left
}

// settle decides p on an observation at at (failing since since unless
// holds) and counts the decision; it reports whether it decided.
func (w *LivenessWatch) settle(p watchedPrediction, at time.Time, holds bool, since time.Time) bool {
	if holds {
		if at.Before(p.at.Add(w.grace)) {
			return false
		}
		w.retracted++
		return true
	}
	if since.Before(p.at) {
		since = p.at
	}
	if at.Sub(since) < w.grace {
		return false
	}
	w.confirmed++
	return true
}

// Counts returns the predictions confirmed and retracted so far and those
// still pending.
func (w *LivenessWatch) Counts() (confirmed, retracted, pending uint64) {
	return w.confirmed, w.retracted, uint64(len(w.pending))
}

// observeDeadEnds is a round's observation for the node's watch: each
// liveness property with a pending dead end evaluated on the snapshot's
// global state start (the neighbourhood the node sees, not the system),
// at the snapshot's time.
func (c *Controller) observeDeadEnds(start *consequence.GlobalState, at time.Time) {
	for _, name := range c.watch.Watched() {
		c.watch.Observe(name, at, c.liveHolds(name, start))
	}
}

// watchDeadEnd starts watching the round's dead end of property prop.
func (c *Controller) watchDeadEnd(prop string, start *consequence.GlobalState, at time.Time) {
	c.watch.Predicted(prop, at, c.liveHolds(prop, start))
}

// liveHolds evaluates liveness property name on s; a property the
// controller does not know holds (nothing to confirm), a panicking one
// fails.
func (c *Controller) liveHolds(name string, s *consequence.GlobalState) (holds bool) {
	i := slices.IndexFunc(c.live, func(p node.Property) bool { return p.Name == name })
	if i < 0 {
		return true
	}
	defer func() {
		if recover() != nil {
			holds = false
		}
	}()
	return consequence.AdaptProperty(c.live[i]).Check(s) == nil
}
