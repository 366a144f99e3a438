package node

import "time"

// Envelope is a message in transit: what a Core emits and what a transport
// delivers. CN is the sender's checkpoint number (its logical clock), stamped
// by the snapshot layer; the core leaves it zero.
type Envelope struct {
	From, To ID
	CN       uint64
	Msg      Message
}

// TimerOp is a change to a node's timers, in the order the handler made it.
type TimerOp struct {
	Name string
	// At is the new deadline; zero when Cancel is set.
	At time.Time
	// Cancel is set when the timer was cancelled.
	Cancel bool
}

// Effects are what one Step asks the world to do. The shell that owns the
// core carries them out: it transmits Sends in order and mirrors TimerOps
// onto its clock. The slices are the core's buffers, valid until its next
// Step; copy them to keep them longer.
type Effects struct {
	Sends  []Envelope
	Timers []TimerOp
	// Ignored is set when the event was not handed to the service: a stale
	// timer, or an event other than init for a node not yet started.
	Ignored bool
}
