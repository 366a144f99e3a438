package snapshot

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Layer runs a Manager as a layer.Layer: the one place where the snapshot
// rules meet a node's events, in both shells. The live runtime hosts it on
// its core goroutine (live.RuntimeConfig.Layers) and the emulator in every
// emulated node's layer.Pipeline, first, before steering. The shell
// registers the protocol's messages (Messages) beside the service's, so
// they travel on its connections, and the layer.Pipeline drives the
// Manager around every core step: Deliver before a message is handled
// (checkpointing first when its number is larger; protocol messages are
// consumed), Sent for every service send (stamping its number),
// AfterStep, TransportError, Tick at NextTick, Start after the core's
// Init, Reset on an EventReset. What a shell reports beyond that (its
// trace, observers, counters) it takes from OnEffects, OnSnapshot, Last
// and Status; a shell that models a crash when the node goes down calls
// Crash, and a connection a shell breaks without telling the service
// (a Verdict's Break) reaches ConnectionBroken through
// layer.Pipeline.ConnectionBroken.
//
// A live process has no Reset: a crash is a new process with a new Layer,
// whose checkpoint number starts at 0 (nothing is persisted). The protocol
// tolerates that: the restarted node adopts its peers' larger numbers on
// the first message it receives (checkpointing first, as for any larger
// number), so its checkpoints still lie on consistent cuts — or, when the
// cluster is beyond Config.CNWindow, once two distinct peers have shown
// it numbers beyond the window (refusing cuts up to the number it caught
// up to); the channels
// from it recorded by peers whose checkpoint predates its crash are marked
// lossy (the peer saw the broken connection), and messages its previous
// incarnation sent are neither in its state nor recorded in flight: the
// snapshot shows it as a node that crashed and restarted, which it is.
// Peers forget the delta base they kept for it when the connection
// breaks, and a gatherer that cannot decode a delta says so (Ack with hash
// 0), so a restarted gatherer gets full checkpoints again.
//
// Concurrency: the layer.Layer methods run on the shell's core goroutine
// (see layer.Layer; the emulator's loop); Gather, Crash and
// ConnectionBroken must run there too (live: through live.Runtime.Do).
// Status and Last are safe from any goroutine at any time. The OnEffects
// and OnSnapshot functions are called on the core goroutine.
type Layer struct {
	cfg Config
	log *slog.Logger

	// mu guards everything below against Status and Last; the hooks hold it
	// while they call the Manager.
	mu      sync.Mutex
	m       *Manager
	started bool
	last    *Snapshot
	failure *Failure
	failAt  time.Time
	// onSnap and fresh: see OnSnapshot.
	onSnap func(*Snapshot)
	fresh  []*Snapshot
	// alone: the last snapshot held only this node, and the warning that
	// says so was logged (once until a wider snapshot).
	alone bool
	// onFx and pend: see OnEffects (pend.Call is 0 when nothing is
	// pending).
	onFx func(LayerEffects)
	pend LayerEffects
	// crashed: Crash reset the Manager; the EventReset of the restart
	// does not reset it again.
	crashed bool
	// also: see Include.
	also []node.ID
}

// LayerCall names the Layer method whose Manager effects a LayerEffects
// reports.
type LayerCall uint8

// The calls of a Layer that run its Manager.
const (
	CallStart LayerCall = iota + 1
	CallBefore
	CallAfter
	CallTick
	CallGather
	CallCrash
	CallConnectionBroken
)

// String returns "start", "before", "after", "tick", "gather", "crash" or
// "connection-broken".
func (c LayerCall) String() string {
	if name, ok := callNames[c]; ok {
		return name
	}
	return "call(?)"
}

// callNames names the calls of a Layer (LayerCall.String).
var callNames = map[LayerCall]string{
	CallStart:            "start",
	CallBefore:           "before",
	CallAfter:            "after",
	CallTick:             "tick",
	CallGather:           "gather",
	CallCrash:            "crash",
	CallConnectionBroken: "connection-broken",
}

// LayerEffects is what one call of a Layer made its Manager do, for an
// OnEffects function.
type LayerEffects struct {
	// Call is the Layer method that ran the Manager; At its time.
	Call LayerCall
	At   time.Time
	// CN is the node's checkpoint number after the call.
	CN uint64
	// Effects are the Manager's effects of the call: checkpoints taken (a
	// forced one, in Before, is of the state before the message being
	// delivered), protocol messages the call returns to the shell to
	// send, gathers completed and given up. The slices are the Manager's:
	// read them during the OnEffects call, do not keep or modify them.
	Effects Effects
}

// Empty reports whether the call had no effect to report.
func (fx *LayerEffects) Empty() bool {
	e := &fx.Effects
	return len(e.Sends)+len(e.Taken)+len(e.Snapshots)+len(e.Failures) == 0
}

var (
	_ layer.Layer         = (*Layer)(nil)
	_ layer.BreakObserver = (*Layer)(nil)
)

// Layer errors.
var (
	// ErrAttached: the Layer is already attached to a runtime.
	ErrAttached = errors.New("snapshot: Layer is already attached to a runtime")
	// ErrNotAttached: the Layer has not been attached to a runtime.
	ErrNotAttached = errors.New("snapshot: Layer is not attached to a runtime")
)

// NewLayer validates cfg (see Config; Registry is the service's registry,
// Spec.Registry, which recorded in-flight messages are encoded with) and
// returns a Layer for one runtime. logger (nil: no-op) gets a line per
// gathered (debug) or failed (info) snapshot.
func NewLayer(cfg Config, logger *slog.Logger) (*Layer, error) {
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Layer{cfg: cfg, log: logger}, nil
}

// Messages returns the protocol's messages (layer.Layer).
func (l *Layer) Messages() []node.Message { return Messages() }

// Attach builds the Manager for host, checkpointing it (layer.Layer).
func (l *Layer) Attach(host layer.Host) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m != nil {
		return ErrAttached
	}
	m, err := New(l.cfg, host.ID(), host)
	if err != nil {
		return err
	}
	m.Include(l.also)
	l.m = m
	return nil
}

// Start starts the Manager (layer.Layer).
func (l *Layer) Start(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil
	}
	l.started = true
	return l.apply(CallStart, l.m.Start(now))
}

// Before hands received envelopes to Manager.Deliver (which checkpoints
// first when the envelope's number is larger, and consumes protocol
// messages) and transport errors to Manager.TransportError (layer.Layer).
// An EventReset (which the live runtime does not produce) resets the
// Manager, unless Crash did already for this restart.
func (l *Layer) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return !(ev.Kind == node.EventMessage && IsProtocol(ev.Msg)), nil, nil
	}
	switch ev.Kind {
	case node.EventMessage:
		return l.deliver(now, ev, in)
	case node.EventTransportError:
		return true, l.apply(CallBefore, l.m.TransportError(now, ev.Peer)), nil
	case node.EventReset:
		return true, l.reset(now), nil
	}
	return true, nil, nil
}

// deliver hands the message of ev (in, its envelope, when the shell has
// it) to Manager.Deliver. Called with mu held.
func (l *Layer) deliver(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	env := node.Envelope{From: ev.From, Msg: ev.Msg, To: l.m.self}
	if in != nil {
		env = *in
	}
	deliver, fx, err := l.m.Deliver(now, env)
	return deliver, l.apply(CallBefore, fx), err
}

// reset resets the Manager for an EventReset, unless Crash did already for
// this restart. Called with mu held.
func (l *Layer) reset(now time.Time) []node.Envelope {
	if l.crashed {
		l.crashed = false
		return nil
	}
	return l.apply(CallBefore, l.m.Reset(now))
}

// Crash tells the Manager that the node lost its state now
// (Manager.Reset), for a shell that models a crash at the moment the node
// goes down rather than when it restarts (the emulator: a churned node is
// down for a while, and its peers' view of its reset dates from then).
// The EventReset of the restart that follows then leaves the Manager
// alone. It returns the messages to send (none in practice). Call it where
// the layer.Layer hooks run, between two of them; before Attach it does
// nothing.
func (l *Layer) Crash(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil
	}
	l.crashed = true
	return l.apply(CallCrash, l.m.Reset(now))
}

// ConnectionBroken tells the Manager that the node's connection to peer
// broke without the service being told (a steering layer.Verdict with
// Break: the shell closed it on purpose), so messages in flight on it may
// be lost (Manager.TransportError: its channels become lossy, a gather
// marks peer dead). It returns the messages to send. It implements
// layer.BreakObserver: both shells call it through
// layer.Pipeline.ConnectionBroken. Call it where the layer.Layer hooks run,
// between two of them; before Attach it does nothing.
func (l *Layer) ConnectionBroken(now time.Time, peer node.ID) []node.Envelope {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil
	}
	return l.apply(CallConnectionBroken, l.m.TransportError(now, peer))
}

// Sending stamps env with the checkpoint number and accounts it
// (Manager.Sent) (layer.Layer). The message is sized (encoded once more)
// only when Config.BandwidthFraction needs its size.
func (l *Layer) Sending(now time.Time, env *node.Envelope) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		return
	}
	size := 0
	if l.cfg.BandwidthFraction > 0 && env.To != l.m.self {
		if body, err := l.cfg.Registry.EncodeMessage(env.Msg); err == nil {
			size = len(body) + len(env.Msg.MessageType()) + node.FrameHeaderLen + 8
		}
	}
	l.m.Sent(now, env, size)
}

// After runs Manager.AfterStep (layer.Layer).
func (l *Layer) After(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil
	}
	return l.apply(CallAfter, l.m.AfterStep(now))
}

// Tick runs Manager.Tick (layer.Layer).
func (l *Layer) Tick(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil, nil
	}
	fx, err := l.m.Tick(now)
	return l.apply(CallTick, fx), err
}

// NextTick returns the Manager's NextTick once started (layer.Layer).
func (l *Layer) NextTick() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || !l.started {
		return time.Time{}
	}
	return l.m.NextTick()
}

// Gather starts gathering a snapshot of the neighbourhood now
// (Manager.Gather) and returns the requests to send. It must run on the
// runtime's core goroutine:
//
//	var gerr error
//	err := rt.Do(ctx, func(now time.Time) []node.Envelope {
//		out, err := live.Gather(now)
//		gerr = err
//		return out
//	})
//
// The snapshot arrives later (Last). Errors: ErrNotAttached,
// ErrNotStarted, ErrGatherInProgress.
func (l *Layer) Gather(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil, ErrNotAttached
	}
	fx, err := l.m.Gather(now)
	return l.apply(CallGather, fx), err
}

// Include sets the peers this node's gathers take in besides its
// neighbourhood (Manager.Include): steering names the peers its filters
// are about. It must run on the runtime's core goroutine (a layer's hook
// or Do); before Attach it is remembered for the Manager to come.
func (l *Layer) Include(ids []node.ID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.also = slices.Clone(ids)
	if l.m != nil {
		l.m.Include(l.also)
	}
}

// OnSnapshot registers fn to see every snapshot this node gathers (the
// snapshots Last returns, in order): a steering controller starts its
// rounds from them. fn is called on the runtime's core goroutine by the
// hook (or Gather) that completed the gather, after the Layer's lock is
// released, so it may call Last and Status; it must not block (every event
// of the node waits) nor call the Layer's layer.Layer methods or Gather. The
// Snapshot is immutable and shared. Register before the runtime starts; a
// second call replaces fn, nil unregisters.
func (l *Layer) OnSnapshot(fn func(*Snapshot)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onSnap = fn
}

// OnEffects registers fn to see what every call of the Layer made its
// Manager do, when the call had an effect (LayerEffects.Empty is false):
// checkpoints taken, protocol messages to send, gathers completed and
// given up. It is the extension point for a shell that reports the
// protocol's work in one order with its own events (the emulator's trace,
// its checkpoint and network observers, its counters); the rules stay the
// Layer's. fn is called on the core goroutine by the hook (or Gather,
// Crash, ConnectionBroken) that ran the Manager, after the Layer's lock is
// released and before the OnSnapshot function sees the call's snapshots:
// so a forced checkpoint is reported while the message that forced it
// has not reached the layers after this one, and before the shell sends
// the call's messages. fn may call Last and Status; it must not block nor
// call the Layer's layer.Layer methods, Gather, Crash or ConnectionBroken.
// Register before the node starts; a second call replaces fn, nil
// unregisters.
func (l *Layer) OnEffects(fn func(LayerEffects)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onFx = fn
}

// unlockAndNotify releases mu, then hands the call's effects to the
// OnEffects function and the snapshots gathered while it was held to the
// OnSnapshot function.
func (l *Layer) unlockAndNotify() {
	fresh, fn := l.fresh, l.onSnap
	pend, fxFn := l.pend, l.onFx
	l.fresh, l.pend = nil, LayerEffects{}
	l.mu.Unlock()
	if fxFn != nil && pend.reportable() {
		fxFn(pend)
	}
	if fn != nil {
		for _, s := range fresh {
			fn(s)
		}
	}
}

// reportable reports whether fx holds a call's effects (Call is 0 when
// none is pending) and the call had any.
func (fx *LayerEffects) reportable() bool { return fx.Call != 0 && !fx.Empty() }

// apply records the gathers and failures in fx (the effects of call)
// and returns its sends. Called with mu held.
func (l *Layer) apply(call LayerCall, fx Effects) []node.Envelope {
	if l.onFx != nil {
		l.pend = LayerEffects{Call: call, At: l.m.now, CN: l.m.cn, Effects: fx}
	}
	for _, s := range fx.Snapshots {
		l.last = s
		if l.onSnap != nil {
			l.fresh = append(l.fresh, s)
		}
		l.log.Debug("snapshot: gathered", slog.Uint64("cut", s.CN), slog.Int("nodes", len(s.Nodes)),
			slog.Any("dead", s.Dead), slog.Int("excluded", len(s.Excluded)), slog.Int("rounds", s.Rounds),
			slog.Duration("took", s.At.Sub(s.Started)))
		l.warnAlone(s)
	}
	for i := range fx.Failures {
		f := fx.Failures[i]
		l.failure, l.failAt = &f, l.m.now
		l.log.Info("snapshot: gather given up", slog.Int("rounds", f.Rounds), slog.String("reason", f.Reason))
	}
	return fx.Sends
}

// warnAlone warns, once until a snapshot holds more, that snapshot s holds
// only its gatherer: the service's state names no neighbour
// (node.Neighborer) and the node exchanged no messages within the recent
// window, so every prediction is about this node alone. It is right for a
// node that is alone, and the first sign of a service whose Neighbors
// returns nil. Called with mu held.
func (l *Layer) warnAlone(s *Snapshot) {
	if len(s.Nodes) > 1 || len(s.Dead) > 0 {
		l.alone = false
		return
	}
	if l.alone {
		return
	}
	l.alone = true
	l.log.Warn("snapshot: the snapshot holds only this node: its state names no neighbour (node.Neighborer) and it exchanged no messages recently, so predictions see this node alone",
		slog.Uint64("cut", s.CN))
}

// Last returns the most recently gathered snapshot, or nil. The Snapshot
// is immutable and shared: read it, do not modify it. Safe from any
// goroutine.
func (l *Layer) Last() *Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Status returns the Layer's status; now sets the last snapshot's age. Safe
// from any goroutine; before Attach it has only the configuration.
func (l *Layer) Status(now time.Time) LayerStatus {
	c, _ := l.cfg.withDefaults()
	st := LayerStatus{IntervalSeconds: c.Interval.Seconds(), GatherIntervalSeconds: c.GatherInterval.Seconds()}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		return st
	}
	st.Stats = l.m.Stats()
	st.CN, st.CheckpointsStored, st.StoredBytes = st.Stats.CN, st.Stats.Stored, st.Stats.StoredBytes
	st.Gathering = l.m.Gathering()
	if l.last != nil {
		sum := l.last.Summarize(now)
		st.Last = &sum
	}
	if f := l.failure; f != nil {
		st.LastFailure = &FailureSummary{At: l.failAt.Round(0), Rounds: f.Rounds, Reason: f.Reason}
	}
	return st
}
