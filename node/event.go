package node

import (
	"fmt"
	"time"
)

// EventKind says which handler an Event runs.
type EventKind uint8

// The kinds of events a Core steps through.
const (
	// EventInit starts the node: Init on the service built by the factory.
	EventInit EventKind = iota + 1
	// EventMessage delivers Msg from From.
	EventMessage
	// EventTimer fires the timer Timer.
	EventTimer
	// EventApp runs the application call Msg.
	EventApp
	// EventTransportError reports a broken connection to Peer.
	EventTransportError
	// EventReset models a node reset (crash and restart): the service state
	// and timers are lost, a fresh service is built and Init runs again.
	// A Durable service recovers its stable-storage fields before Init.
	// The random source is kept (a restarted process draws new numbers).
	EventReset
	// EventSendRefused reports that the transport refused Msg, sent to
	// Peer with Env.TrySend by the node's previous event
	// (SendRefusedHandler). Shells run it before any other event of the
	// node; a service without the handler ignores it (Effects.Ignored).
	EventSendRefused
)

var eventKindNames = [...]string{
	EventInit:           "init",
	EventMessage:        "message",
	EventTimer:          "timer",
	EventApp:            "app",
	EventTransportError: "transport-error",
	EventReset:          "reset",
	EventSendRefused:    "send-refused",
}

// String returns the kind's name as used in traces.
func (k EventKind) String() string {
	if int(k) < len(eventKindNames) && eventKindNames[k] != "" {
		return eventKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Event is an input to a node. Which fields are meaningful depends on Kind.
type Event struct {
	Kind EventKind
	// At is when the event is handled; it becomes Env.Now. A Core never
	// moves its clock backwards: an earlier At is treated as the current
	// time.
	At time.Time
	// From is the sender of a message.
	From ID
	// Msg is the message (EventMessage) or the application call (EventApp).
	Msg Message
	// Timer is the name of the firing timer (EventTimer).
	Timer string
	// Deadline, when non-zero, is the deadline the firing timer was set
	// for. The core ignores the firing when the timer has since been
	// rescheduled to another deadline, so a shell that raced a timer
	// against its cancellation cannot fire a stale one.
	Deadline time.Time
	// Peer is the peer whose connection broke (EventTransportError), or
	// the addressee of the refused message (EventSendRefused, with Msg).
	Peer ID
}

// String renders the event compactly for traces and logs.
func (e Event) String() string {
	switch e.Kind {
	case EventMessage:
		return fmt.Sprintf("message %s from %s", typeName(e.Msg), e.From)
	case EventTimer:
		return "timer " + e.Timer
	case EventApp:
		return "app " + typeName(e.Msg)
	case EventTransportError:
		return "transport-error " + e.Peer.String()
	case EventSendRefused:
		return fmt.Sprintf("send-refused %s to %s", typeName(e.Msg), e.Peer)
	default:
		return e.Kind.String()
	}
}

func typeName(m Message) string {
	if m == nil {
		return "<nil>"
	}
	return m.MessageType()
}
