package node

import "fmt"

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

// PropertyKind distinguishes safety from liveness properties.
type PropertyKind uint8

const (
	// Safety properties must hold in every reachable state ("always").
	Safety PropertyKind = iota + 1
	// Liveness properties must eventually hold ("eventually"); a state that
	// violates one is fine as long as the system can still reach one that
	// satisfies it.
	Liveness
)

// String returns "safety" or "liveness".
func (k PropertyKind) String() string {
	switch k {
	case Safety:
		return "safety"
	case Liveness:
		return "liveness"
	}
	return fmt.Sprintf("property-kind(%d)", uint8(k))
}

// Property is a named predicate over a View. Check returns nil when the
// property holds and otherwise an error saying where it fails (e.g. "n9:
// n13 is both a child and a sibling"). Check must be deterministic, must not
// modify the view, and should not allocate when the property holds: the
// explorer evaluates it on every state.
type Property struct {
	Name  string
	Kind  PropertyKind
	Check func(View) error
}

// Always declares a safety property.
func Always(name string, check func(View) error) Property {
	return Property{Name: name, Kind: Safety, Check: check}
}

// Eventually declares a liveness property.
func Eventually(name string, check func(View) error) Property {
	return Property{Name: name, Kind: Liveness, Check: check}
}
