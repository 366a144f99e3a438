package layer

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Layer is a component a layer.Pipeline runs beside its Core — on the live
// runtime's core goroutine, or in the emulator's loop —, with a hook on
// every event and every send: a snapshot manager (snapshot.Layer) is one. The layer sees each event before the core does and
// may keep it from the core, stamps every envelope the service sends, sends
// messages of its own types on the runtime's framed connections (never on
// memberlist), and has a timer of its own. The runtime calls the hooks in
// this order for one event:
//
//	Before(ev) → [core.Step(ev) → Sending(env) for each send] → After
//
// and Tick whenever the time NextTick named has come. Layers are listed in
// PipelineConfig.Layers (live.RuntimeConfig.Layers) and called in that
// order; an event one layer keeps from the core is not shown to the layers
// after it. Pipeline is where this order is implemented, once.
//
// A steering layer (steering.Layer: it must see every event before
// dispatch, drop or postpone it, and read the latest gathered snapshot) is a
// second Layer after the snapshot layer. It implements two optional
// extensions of this port: Gate, whose Verdict can also postpone an event
// (the runtime delivers it again later) and break the connection to a
// dropped message's sender, and Stopper, for a layer with goroutines of its
// own. Through RuntimeHost (what Attach is given in both shells) it reads the
// core for the immediate safety check and wakes the core goroutine when a
// round run elsewhere has a result. It reads snapshots from the snapshot layer it
// is wired to, not through this port.
//
// Concurrency: the shell calls every method except Messages and Attach
// from one goroutine only (the live runtime's core goroutine), one call at
// a time, so a layer needs no locking for state only its hooks touch; whatever it also exposes to other
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
	Messages() []node.Message
	// Attach gives the layer the node it runs beside. Called once, by
	// NewRuntime, before any other hook; an error makes NewRuntime fail
	// (a layer must refuse a second Attach: it belongs to one runtime).
	Attach(host Host) error
	// Start is called once, after the core's EventInit has been handled
	// (so the host's state exists). It returns messages to send.
	Start(now time.Time) []node.Envelope
	// Before sees every event before the core handles it: messages from
	// peers and from the node to itself (in is the received envelope, its
	// CN the sender's checkpoint number; nil for other kinds), timers,
	// application calls and transport errors. It returns whether the core
	// should handle the event and messages to send. A layer must return
	// handle=false for every message of its own types: the service never
	// sees them (the runtime drops any that get through, as a layer bug).
	// A non-nil error is a bug in the layer or its host, not a peer's
	// fault: the runtime logs it and goes on as handle says.
	Before(now time.Time, ev node.Event, in *node.Envelope) (handle bool, out []node.Envelope, err error)
	// Sending sees each envelope the service sends, before the runtime
	// encodes it; the layer may set env.CN (the only field it may change).
	// Messages the layer itself returns do not pass through Sending.
	Sending(now time.Time, env *node.Envelope)
	// After runs after every core step, with the messages to send.
	After(now time.Time) []node.Envelope
	// Tick runs the layer's timer, when the time NextTick names has come
	// (calling it late or early is harmless). A non-nil error is logged
	// and the next tick is delayed, so a failing layer cannot spin.
	Tick(now time.Time) ([]node.Envelope, error)
	// NextTick returns when Tick is next due; the zero time means never.
	// The runtime asks again after every call to the layer.
	NextTick() time.Time
}

// Message marks a message type of a layer's own (one Layer.Messages
// returns): a snapshot protocol message, a steering request. The service
// never sees one; a snapshot does not record one as in flight (the
// explorer replays the service's traffic, not the layers'); shells count
// them apart from the service's messages. Every message type a layer
// registers implements it.
type Message interface {
	node.Message
	// LayerMessage marks the type; it does nothing.
	LayerMessage()
}

// IsMessage reports whether m is a layer's own message (Message).
func IsMessage(m node.Message) bool {
	_, ok := m.(Message)
	return ok
}

// Host is the node a Layer runs beside, as the layer may read it: a *Core
// satisfies it, and a live.Runtime gives its layers a RuntimeHost. Its methods may
// be called only from within the layer's hooks (on the core goroutine,
// between two core steps).
type Host interface {
	// ID is the node's ID.
	ID() node.ID
	// Checkpoint returns the checkpoint encoding of the node state, freshly
	// allocated and owned by the caller.
	Checkpoint() ([]byte, error)
	// Service returns the live service value: read it (e.g. for its
	// optional Neighborer method), never modify it.
	Service() node.Service
}

var _ Host = (*node.Core)(nil)

// RuntimeHost is the Host a live.Runtime attaches its layers to: a Host with what
// a layer that checks events speculatively or runs goroutines of its own
// needs. A layer that needs it type-asserts the host Attach is given and
// refuses a plain Host (a bare *Core is only a Host).
type RuntimeHost interface {
	Host
	// Core returns the node's core for speculative use within a hook (on
	// the core goroutine): a layer may read it and Copy it — the immediate
	// safety check steps a copy —, never Step, Restore or SetState it (the
	// runtime owns it).
	Core() *node.Core
	// Wake asks the runtime to run the Tick of every layer that is due (it
	// asks each layer's NextTick again) as soon as the core goroutine is
	// free: how a layer's own goroutine hands a result to the core
	// goroutine (the layer makes NextTick return a time that has come, then
	// calls Wake). Safe from any goroutine at any time; never blocks;
	// wake-ups not yet served coalesce; a no-op once the runtime stopped.
	Wake()
}

// Verdict is a decision on one event: a Gate's in a runtime's layer
// pipeline, and an event filter's in the explorer (consequence's
// ActorOptions.Intercept takes the same type), so a filter means the same
// thing live, emulated and explored. The zero Verdict drops the event.
// Compare verdicts with their methods, not ==.
type Verdict struct {
	// Handle lets the event through to the layers after this one and to
	// the core. The other fields apply only to an event kept from them.
	Handle bool
	// Break, for a message, closes the connections to and from its sender
	// without a transport error for this node's service: the sender sees
	// its connection break and runs its own failure handling (the
	// CrystalBall paper's TCP reset of a filtered message). Ignored for
	// other kinds, for messages the node sent itself and for datagrams
	// (Envelope.Datagram: their sender holds no connection to learn from).
	Break bool
	// RetryAt, for a timer, an application call or a transport error,
	// asks the Pipeline to deliver the event again at that time (or as
	// soon after as the shell gets to it): to this layer first, with
	// retry set, since the layers before it saw it already. The zero time
	// drops the event. Ignored for messages (a dropped message is gone)
	// and for EventInit and EventReset. A postponed timer keeps its
	// Deadline; it is not delivered again if the service cancels or sets
	// that timer meanwhile (the core would ignore the stale firing). The
	// explorer reads only whether it is set.
	RetryAt time.Time
}

// Postponed reports whether v keeps the event from the core for now and
// asks for it again later (RetryAt set).
func (v Verdict) Postponed() bool { return !v.Handle && !v.RetryAt.IsZero() }

// String returns "pass", "drop", "drop+break" or "postpone".
func (v Verdict) String() string {
	switch {
	case v.Handle:
		return "pass"
	case !v.RetryAt.IsZero():
		return "postpone"
	case v.Break:
		return "drop+break"
	}
	return "drop"
}

// Gate is an optional extension of Layer for a layer that may postpone an
// event or break a connection, not only keep an event from the core: a
// steering controller's event filters and immediate safety check. For a
// layer that implements Gate the runtime calls Gate instead of Before, with
// Before's contract otherwise (same goroutine, same ownership of in and of
// the returned envelopes, same meaning of the error).
type Gate interface {
	Layer
	// Gate is Before with a Verdict. retry is set when ev is an event this
	// layer postponed (Verdict.RetryAt), delivered again: a layer that
	// counts events should not count it twice.
	Gate(now time.Time, ev node.Event, in *node.Envelope, retry bool) (Verdict, []node.Envelope, error)
}

// BreakObserver is an optional extension of Layer for a layer that must
// know when the shell broke a connection on purpose without telling the
// service: the Break of a Gate's Verdict (Outcome.Break). Messages in
// flight on it may be lost, which a snapshot layer records (the channel
// from the peer becomes lossy). A shell that closes such a connection
// calls Pipeline.ConnectionBroken, on the core goroutine, between two
// hooks; it calls every BreakObserver in layer order. The emulator and
// the live runtime tell the service of every break they carry out (a
// transport error, which every layer sees as such), so they do not call
// it.
type BreakObserver interface {
	// ConnectionBroken says that the node's connections to and from peer
	// were closed at now without a transport error for the service. It
	// returns messages to send (the Layer's ownership rules apply).
	ConnectionBroken(now time.Time, peer node.ID) []node.Envelope
}

// Stopper is an optional extension of Layer for a layer with goroutines of
// its own. A live.Runtime's core goroutine calls Stop once as it exits, after
// the layer's last hook and before Runtime.Stop returns (layers in reverse
// order). Stop must end every goroutine the layer started before it
// returns, and must not call the runtime (it would wait for itself).
type Stopper interface {
	Stop()
}
