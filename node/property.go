package node

import (
	"fmt"
	"time"
)

// View is a read-only view of a global state (or of the part of it a node
// can see): the nodes in it and their states. Implementations: the emulator's
// true global state, the explorer's global states, a gathered neighbourhood
// snapshot. Properties must not modify what a View returns.
type View interface {
	// Nodes returns the IDs of the live nodes in the view, ascending. The
	// caller must not modify the slice. It should not allocate: properties
	// call it on every explored state.
	Nodes() []ID
	// Service returns the service state of id, or nil if id is not in the
	// view (outside the snapshot, or down).
	Service(id ID) Service
	// TimerScheduled reports whether id has the timer name scheduled.
	TimerScheduled(id ID, name string) bool
}

// PropertyKind distinguishes the kinds of property: safety, liveness,
// bounded liveness and properties of client histories.
type PropertyKind uint8

const (
	// Safety properties must hold in every reachable state ("always").
	Safety PropertyKind = iota + 1
	// Liveness properties must eventually hold ("eventually"); a state that
	// violates one is fine as long as the system can still reach one that
	// satisfies it.
	Liveness
	// Bounded properties must hold within a time bound of their
	// precondition ("from any state where a quorum is connected, a leader
	// within 10 s"): declared with Within, judged over time (bounded.go).
	Bounded
	// HistoryKind properties judge the client history (Invoke, Respond)
	// rather than a state: declared with OnHistory (history.go).
	HistoryKind
)

// String returns "safety", "liveness", "bounded" or "history".
func (k PropertyKind) String() string {
	switch k {
	case Safety:
		return "safety"
	case Liveness:
		return "liveness"
	case Bounded:
		return "bounded"
	case HistoryKind:
		return "history"
	}
	return fmt.Sprintf("property-kind(%d)", uint8(k))
}

// Property is a named predicate over a View. Check returns nil when the
// property holds and otherwise an error saying where it fails (e.g. "n9:
// n13 is both a child and a sibling"). Check must be deterministic, must not
// modify the view, and should not allocate when the property holds: the
// explorer evaluates it on every state.
//
// A Bounded property's Check is its goal and When its precondition; a
// HistoryKind property's Check holds on every view (what it judges is the
// history, History), so code that evaluates every property on a view
// stays safe.
type Property struct {
	Name  string
	Kind  PropertyKind
	Check func(View) error
	// Bound is a Bounded property's bound: once When holds, Check must
	// hold within Bound (see Within). Zero for the other kinds.
	Bound time.Duration
	// When is a Bounded property's precondition; nil means always.
	When func(View) bool
	// History is a HistoryKind property's check of a client history: nil
	// when the history is acceptable, otherwise an error saying why not
	// (see OnHistory). Nil for the other kinds.
	History func(History) error
}

// Always declares a safety property.
func Always(name string, check func(View) error) Property {
	return Property{Name: name, Kind: Safety, Check: check}
}

// Eventually declares a liveness property.
func Eventually(name string, check func(View) error) Property {
	return Property{Name: name, Kind: Liveness, Check: check}
}
