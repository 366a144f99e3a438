package node

import (
	"errors"
	"fmt"
	"time"
)

// Within declares a bounded-liveness property: whenever when holds, goal
// must hold within bound ("from any state where a quorum is connected, a
// leader within 10 s": when = a quorum is connected, goal = a leader
// exists). goal returns nil when it holds and otherwise an error saying
// why not, as a safety property's check does; when is nil for "always".
// Both must be deterministic, must not modify the view and should not
// allocate when they hold.
//
// The property fails once its obligation has been open for longer than
// bound without interruption: open means when holds and goal does not,
// and the obligation closes (its clock restarts) as soon as goal holds or
// when stops holding. A time bound makes it a safety property of the
// timed system: the explorer checks it in virtual time, the steering
// rounds predict it like a safety property, and the emulator reports every
// outage (an obligation that lasted past its bound) with its start and
// length. Obligations with deadlines of their own ("every acknowledged
// write applied within 5 s" under a steady load) are one property per
// obligation, or a goal that holds whenever no write is older than the
// bound: one clock per property restarts only when nothing is pending.
func Within(name string, bound time.Duration, when func(View) bool, goal func(View) error) Property {
	return Property{Name: name, Kind: Bounded, Check: goal, When: when, Bound: bound}
}

// known reports whether k is one of the declared kinds.
func (k PropertyKind) known() bool {
	return k == Safety || k == Liveness || k == Bounded || k == HistoryKind
}

// validateKind checks the fields p's kind needs (Validate's part per kind).
func (p Property) validateKind() error {
	switch p.Kind {
	case Bounded:
		if p.Bound <= 0 {
			return fmt.Errorf("bounded property needs a positive Bound, got %v", p.Bound)
		}
	case HistoryKind:
		if p.History == nil {
			return errors.New("history property needs a History check")
		}
	default:
		if p.Bound != 0 || p.When != nil || p.History != nil {
			return fmt.Errorf("%v property sets fields of another kind (Bound, When or History)", p.Kind)
		}
	}
	return nil
}

// Pending evaluates a Bounded property on a view: whether its obligation
// is open there (When holds and the goal does not) and, if so, the goal's
// error.
func (p Property) Pending(v View) (bool, error) {
	if p.When != nil && !p.When(v) {
		return false, nil
	}
	if err := p.Check(v); err != nil {
		return true, err
	}
	return false, nil
}

// Obligation is a Bounded property's running state: the rule every host
// (the emulator, the explorer, a steering round) judges the property by,
// written once here. A host keeps one per property, starts it closed (the
// zero value), and for every observed state at time at — states in the
// order they happened, at times that do not go back — calls Elapse(at)
// and then Observe(at, pending) with the property's Pending on that state.
type Obligation struct {
	// Open is set while the precondition holds and the goal does not.
	Open bool
	// Late is set once an open obligation has passed its bound; it stays
	// set until the obligation closes.
	Late bool
	// Since is when the obligation opened (zero when closed).
	Since time.Time
}

// Elapse lets time pass until at, the time of the next observed state:
// the world stayed as last observed meanwhile. It returns the obligation
// at that time and whether it became late on the way, which happened at
// Since + bound (Due).
func (o Obligation) Elapse(at time.Time, bound time.Duration) (Obligation, bool) {
	if !o.Open || o.Late || !at.After(o.Since.Add(bound)) {
		return o, false
	}
	o.Late = true
	return o, true
}

// Observe takes in the state observed at time at, in which the
// obligation is open (pending) or not: an obligation opens at the first
// pending state and closes at the first state that is not.
func (o Obligation) Observe(at time.Time, pending bool) Obligation {
	switch {
	case !pending:
		return Obligation{}
	case !o.Open:
		return Obligation{Open: true, Since: at}
	}
	return o
}

// Due returns when an open obligation passes its bound.
func (o Obligation) Due(bound time.Duration) time.Time { return o.Since.Add(bound) }

// OverdueError is a Bounded property's failure: its obligation opened at
// Since and had not closed by Since + Bound (it was still open at At,
// the first time observed past the deadline). Goal is the goal's error in
// the last state observed before the deadline passed.
type OverdueError struct {
	Property string
	Bound    time.Duration
	Since    time.Time
	At       time.Time
	Goal     error
}

// Error renders the failure as "not within 5s (open for 6.2s): n3 has 4
// of 9 entries".
func (e *OverdueError) Error() string {
	msg := fmt.Sprintf("not within %v (open for %v)", e.Bound, e.At.Sub(e.Since))
	if e.Goal != nil {
		msg += ": " + e.Goal.Error()
	}
	return msg
}

// Unwrap returns the goal's error.
func (e *OverdueError) Unwrap() error { return e.Goal }
