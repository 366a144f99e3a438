package node

import (
	"fmt"
	"time"
)

// Envelope is a message in transit: what a Core emits and what a transport
// delivers. CN is the sender's checkpoint number (its logical clock), stamped
// by the snapshot layer; the core leaves it zero.
type Envelope struct {
	From, To ID
	CN       uint64
	Msg      Message
	// Datagram marks a datagram (Env.SendDatagram) rather than a message
	// (Env.Send). The contract a shell must keep for a datagram: deliver it
	// at most once, in any order relative to every other envelope, or lose
	// it silently — it never opens, needs or breaks a connection and never
	// causes a transport error. Delivering it reliably and in order is a
	// valid best-effort delivery. On a received envelope the flag says the
	// sender sent it as a datagram (the wire format carries it), so layers
	// such as the snapshot manager, which rely on the FIFO order of
	// messages, can leave it out of that reasoning.
	Datagram bool
	// Refusable marks a message sent with Env.TrySend: the shell may
	// refuse it (its send queue to To is full) and then must not transmit
	// it but step the sender with EventSendRefused before any other event
	// of the sender. It is the sender's concern only: the wire format does
	// not carry it, so it is never set on a received envelope. Never set
	// together with Datagram.
	Refusable bool
}

// String renders the envelope as fmt's %v renders its fields,
// "{n1 n2 0 MSG}" (From, To, CN, Msg), with " datagram" before the closing
// brace for a datagram (" refusable" for a message sent with TrySend).
func (e Envelope) String() string {
	if e.Refusable {
		return fmt.Sprintf("{%v %v %v %v refusable}", e.From, e.To, e.CN, e.Msg)
	}
	if e.Datagram {
		return fmt.Sprintf("{%v %v %v %v datagram}", e.From, e.To, e.CN, e.Msg)
	}
	return fmt.Sprintf("{%v %v %v %v}", e.From, e.To, e.CN, e.Msg)
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
// core carries them out: it transmits Sends in order (messages and
// datagrams in the one slice, in the order the handler made them; a
// datagram has Envelope.Datagram set) and mirrors TimerOps onto its clock. The slices are the core's buffers, valid until its next
// Step; copy them to keep them longer.
type Effects struct {
	Sends  []Envelope
	Timers []TimerOp
	// Ignored is set when the event was not handed to the service: a stale
	// timer, or an event other than init for a node not yet started.
	Ignored bool
	// History are the client-history marks the handler made (Invoke,
	// Respond), in order; nil when it made none.
	History []HistoryMark
}
