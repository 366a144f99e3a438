package node

import (
	"log/slog"
	"time"
)

// Service is a protocol written as a deterministic state machine: the user's
// code that crystalball runs live, in emulation and in the explorer.
//
// The value itself is the node's service state. Its exported fields are the
// state that is checkpointed, hashed and shipped to peers (encoded with
// msgpack; use `msgpack:"-"` for configuration that is not state).
// Unexported fields are not part of the state: they are lost by a checkpoint
// round trip, so keep only configuration there, set by the factory.
//
// The contract, which every runtime relies on:
//   - Handlers are deterministic given the state, the event and Env: they use
//     no goroutines, wall clock, global randomness or I/O, and act on the
//     world only through Env (Send, SendDatagram, SetTimer, CancelTimer).
//   - Handlers do not retain Env past the call, and treat received messages
//     as read-only.
//   - Exactly one handler runs at a time on a given Service value; a value is
//     never shared between nodes.
type Service interface {
	// Init runs once when the node starts and again after every reset, on a
	// fresh value from the factory (which, for a Durable service, has first
	// recovered what it keeps on stable storage). It typically arms the
	// service's timers.
	Init(env Env)
	// HandleMessage delivers a message sent by from (which may be Self).
	HandleMessage(env Env, from ID, msg Message)
	// HandleTimer runs when the timer set under name expires. The timer is
	// no longer scheduled when the handler runs; re-arm it to repeat.
	HandleTimer(env Env, name string)
	// HandleApp runs an application call: a request from the application
	// layer above the service (e.g. "join the overlay").
	HandleApp(env Env, call Message)
	// HandleTransportError reports that the connection to peer broke (the
	// peer reset, or the network failed). Messages sent to peer before the
	// error may or may not have been delivered.
	HandleTransportError(env Env, peer ID)
}

// SendRefusedHandler is the optional handler of a Service that sends with
// Env.TrySend: HandleSendRefused runs when the transport refused msg, sent
// to `to` by the handler that ran just before (a handler that made several
// refused TrySends sees one HandleSendRefused per refused message, in the
// order they were sent). msg is the message as sent, read-only.
//
// The queue that refused is still full when the handler runs: a service
// that wants to try again arms a timer rather than calling TrySend to the
// same peer from this handler (the emulator fails a run in which a node
// keeps retrying a refused send without letting time pass).
type SendRefusedHandler interface {
	HandleSendRefused(env Env, to ID, msg Message)
}

// Cloner is an optional fast path for copying a Service: Clone returns a deep
// copy that shares no mutable memory with the receiver. Without it, the core
// copies a service by a round trip through its encoding, which is correct but
// slower; the explorer copies a state on every transition.
type Cloner interface {
	Clone() Service
}

// Factory returns a fresh service value in its pre-Init state, with its
// configuration (options) already applied. It must return a new value on
// every call.
type Factory func() Service

// Env is the only way a handler acts on the world. An Env is valid only for
// the duration of the handler call it was passed to.
type Env interface {
	// Self is this node's ID.
	Self() ID
	// Now is the time of the event being handled: wall-clock time live,
	// virtual time in emulation, the snapshot's time advanced by fired timers
	// in exploration.
	Now() time.Time
	// Send queues msg for to. Delivery is FIFO per (sender, receiver) pair
	// and may fail, which the sender learns through HandleTransportError.
	// Sending to Self is allowed and goes through the same path.
	Send(to ID, msg Message)
	// SendDatagram queues msg for to as a datagram: best effort. A datagram
	// is delivered at most once, in no guaranteed order (datagrams between
	// the same pair may overtake each other and the sender's messages), or
	// lost silently — to a node that is down, unreachable, partitioned away
	// or unknown, or by the network. It needs no connection and never
	// causes HandleTransportError at the sender. The receiver handles it
	// with HandleMessage, like a message. Sending to Self is allowed.
	SendDatagram(to ID, msg Message)
	// TrySend queues msg for to like Send, but lets the transport refuse
	// it when its send queue to `to` is full (the Mace transport "refuses
	// new data when its buffer is full"). An accepted message is a message
	// like any other: FIFO with the sender's other accepted messages to
	// to, and subject to transport errors. A refused message is never
	// delivered and breaks nothing: the connection stays open, and
	// messages sent after it may be accepted. The sender learns of the
	// refusal through SendRefusedHandler.HandleSendRefused, run as the
	// node's very next event, before any other event of this node (so a
	// checkpoint never separates a send from its refusal); without that
	// handler a refusal is a silent loss. See the package documentation,
	// "Refused sends", for what each runtime refuses.
	TrySend(to ID, msg Message)
	// SetTimer schedules (or reschedules) the timer name to expire after d.
	// A node has at most one timer per name.
	SetTimer(name string, after time.Duration)
	// CancelTimer unschedules the timer name; cancelling an unscheduled
	// timer does nothing.
	CancelTimer(name string)
	// TimerScheduled reports whether the timer name is scheduled.
	TimerScheduled(name string) bool
	// Rand is the node's seeded random source. Its state is part of the
	// node state, so a replay draws the same numbers.
	Rand() *Rand
	// Logger is the node's logger (a no-op logger unless the runtime was
	// given one).
	Logger() *slog.Logger
}
