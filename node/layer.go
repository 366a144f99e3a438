package node

import "time"

// Layer is a component a Runtime runs beside its Core, on the core
// goroutine, with a hook on every event and every send: a snapshot manager
// (snapshot.Live) is one. The layer sees each event before the core does and
// may keep it from the core, stamps every envelope the service sends, sends
// messages of its own types on the runtime's framed connections (never on
// memberlist), and has a timer of its own. The runtime calls the hooks in
// this order for one event:
//
//	Before(ev) → [core.Step(ev) → Sending(env) for each send] → After
//
// and Tick whenever the time NextTick named has come. Layers are listed in
// RuntimeConfig.Layers and called in that order; an event one layer keeps
// from the core is not shown to the layers after it.
//
// A steering controller (it must see every event before dispatch, drop or
// postpone it, and read the latest gathered snapshot) is meant to be a
// second Layer after the snapshot layer: Before gives it every event with
// the power to drop it (postponing would be a further verdict of Before), and
// it reads snapshots from the snapshot layer it is wired to, not through
// this port.
//
// Concurrency: the runtime calls every method except Messages and Attach
// from its core goroutine only, one call at a time, so a layer needs no
// locking for state only its hooks touch; whatever it also exposes to other
// goroutines (status readers) it must guard itself. Hooks must not block:
// they delay every event of the node.
//
// Ownership: envelopes a hook returns are the layer's until its next call;
// the runtime encodes (or queues, for messages to self) each before calling
// the layer again. Envelopes the runtime passes in (in, env) are valid only
// during the call; a layer that keeps one copies it (an Envelope is a value;
// its Msg is immutable by the Message contract).
type Layer interface {
	// Messages returns prototypes of the layer's own message types. The
	// runtime registers them beside the service's, so they travel on its
	// connections; a name that collides with a service message makes
	// NewRuntime fail. Called once, by NewRuntime.
	Messages() []Message
	// Attach gives the layer the node it runs beside. Called once, by
	// NewRuntime, before any other hook; an error makes NewRuntime fail
	// (a layer must refuse a second Attach: it belongs to one runtime).
	Attach(host Host) error
	// Start is called once, after the core's EventInit has been handled
	// (so the host's state exists). It returns messages to send.
	Start(now time.Time) []Envelope
	// Before sees every event before the core handles it: messages from
	// peers and from the node to itself (in is the received envelope, its
	// CN the sender's checkpoint number; nil for other kinds), timers,
	// application calls and transport errors. It returns whether the core
	// should handle the event and messages to send. A layer must return
	// handle=false for every message of its own types: the service never
	// sees them (the runtime drops any that get through, as a layer bug).
	// A non-nil error is a bug in the layer or its host, not a peer's
	// fault: the runtime logs it and goes on as handle says.
	Before(now time.Time, ev Event, in *Envelope) (handle bool, out []Envelope, err error)
	// Sending sees each envelope the service sends, before the runtime
	// encodes it; the layer may set env.CN (the only field it may change).
	// Messages the layer itself returns do not pass through Sending.
	Sending(now time.Time, env *Envelope)
	// After runs after every core step, with the messages to send.
	After(now time.Time) []Envelope
	// Tick runs the layer's timer, when the time NextTick names has come
	// (calling it late or early is harmless). A non-nil error is logged
	// and the next tick is delayed, so a failing layer cannot spin.
	Tick(now time.Time) ([]Envelope, error)
	// NextTick returns when Tick is next due; the zero time means never.
	// The runtime asks again after every call to the layer.
	NextTick() time.Time
}

// Host is the node a Layer runs beside, as the layer may read it: a *Core
// satisfies it. Its methods may be called only from within the layer's
// hooks (on the core goroutine, between two core steps).
type Host interface {
	// ID is the node's ID.
	ID() ID
	// Checkpoint returns the checkpoint encoding of the node state, freshly
	// allocated and owned by the caller.
	Checkpoint() ([]byte, error)
	// Service returns the live service value: read it (e.g. for its
	// optional Neighborer method), never modify it.
	Service() Service
}

var _ Host = (*Core)(nil)
