package emulation

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// PanicError reports a panic in a service handler (or a property check)
// during emulation, with what is needed to reproduce it: the same Seed and
// code replay the run to the same panic (the VOPR contract).
type PanicError struct {
	// Node is the node whose handler panicked; None for a property check.
	Node node.ID
	// Property names the property whose check panicked, if it was one.
	Property string
	// Event is the event being handled, as the trace names it.
	Event string
	// At is the virtual time of the panic, since Epoch.
	At time.Duration
	// Seed is the run's seed.
	Seed uint64
	// Value is what was passed to panic.
	Value any
	// Stack is the goroutine stack at the panic.
	Stack []byte
}

// Error says who panicked, handling what, when, and how to rerun.
func (p *PanicError) Error() string {
	who := "node " + p.Node.String()
	if p.Property != "" {
		who = fmt.Sprintf("property %q", p.Property)
	}
	return fmt.Sprintf("emulation: %s panicked handling %s at %s (virtual): %v; rerun with seed=%d",
		who, p.Event, clock(p.At), p.Value, p.Seed)
}
