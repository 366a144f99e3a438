package node

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Errors returned by Core.Step for events the core cannot take. They signal a
// bug in the shell driving the core, never in the service.
var (
	// ErrNotStarted: an event other than EventInit reached a core that has
	// not been started (or restored from a checkpoint).
	ErrNotStarted = errors.New("node: core not started")
	// ErrAlreadyStarted: EventInit reached a started core (use EventReset).
	ErrAlreadyStarted = errors.New("node: core already started")
	// ErrInvalidEvent: an event whose fields do not fit its kind.
	ErrInvalidEvent = errors.New("node: invalid event")
)

// CoreConfig configures a Core. ID and Factory are required; the zero
// value of every other field means its documented default
// (DefaultCoreConfig).
type CoreConfig struct {
	// ID is the node's ID; it must not be None.
	ID ID
	// Factory builds the service value; required.
	Factory Factory
	// Seed seeds the node's random source (the node ID selects the stream,
	// so nodes sharing a seed still draw independent numbers). Zero is a
	// seed like any other.
	Seed uint64
	// Logger is handed to the service through Env.Logger, with a "node"
	// field added. Zero (nil) means a logger that discards everything.
	Logger *slog.Logger
}

// DefaultCoreConfig returns what a CoreConfig's optional fields stand for
// when zero — seed 0 and a logger that discards everything — with ID and
// Factory, which have no default, left for the caller to set.
func DefaultCoreConfig() CoreConfig {
	return CoreConfig{Logger: slog.New(slog.DiscardHandler)}
}

// Core is the deterministic node: a Service plus its timers and random
// source, advanced one event at a time by Step, which returns the effects
// (messages to send, timer changes) as data for the caller to carry out.
// It starts no goroutines and reads no clock: time comes in with each event.
//
// A Core is not safe for concurrent use; one shell goroutine (or the emulator
// loop, or an explorer worker) owns it.
type Core struct {
	id      ID
	factory Factory
	logger  *slog.Logger
	state   State
	now     time.Time
	started bool
	env     coreEnv
	// durable caches IsDurable: 0 unknown, 1 yes, 2 no.
	durable uint8
	// fx is reused by every Step so that stepping does not allocate; what
	// Step returns aliases it until the next Step.
	fx Effects
}

// NewCore validates cfg and returns an unstarted core; step it with
// EventInit (or Restore a checkpoint) before anything else.
func NewCore(cfg CoreConfig) (*Core, error) {
	if cfg.ID == None {
		return nil, errors.New("node: CoreConfig.ID must not be None (0)")
	}
	if cfg.Factory == nil {
		return nil, errors.New("node: CoreConfig.Factory is required")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = DefaultCoreConfig().Logger
	}
	c := &Core{
		id:      cfg.ID,
		factory: cfg.Factory,
		logger:  logger.With(slog.Any("node", cfg.ID)),
		state:   State{Rand: NewRand(cfg.Seed, uint64(cfg.ID))},
	}
	c.env.core = c
	return c, nil
}

// ID returns the node's ID.
func (c *Core) ID() ID { return c.id }

// Started reports whether the core has been initialised or restored.
func (c *Core) Started() bool { return c.started }

// Now returns the time of the last event stepped.
func (c *Core) Now() time.Time { return c.now }

// Service returns the live service value. Callers must treat it as
// read-only (properties and status pages read it); only Step mutates it.
func (c *Core) Service() Service { return c.state.Service }

// State returns the node state. It is the core's own: read it, do not modify
// it, and do not keep it across Steps (Clone it to keep a copy).
func (c *Core) State() *State { return &c.state }

// Hash returns the fingerprint hash of the node state.
func (c *Core) Hash() (Hash, error) { return c.state.Hash() }

// Checkpoint returns the checkpoint encoding of the node state. The bytes are
// freshly allocated and owned by the caller.
func (c *Core) Checkpoint() ([]byte, error) {
	if !c.started {
		return nil, ErrNotStarted
	}
	return c.state.AppendCheckpoint(nil)
}

// Restore replaces the node state with a decoded checkpoint and marks the
// core started. On error the core is unchanged.
func (c *Core) Restore(checkpoint []byte) error {
	st, err := DecodeCheckpoint(checkpoint, c.factory)
	if err != nil {
		return err
	}
	c.state = st
	c.started = true
	return nil
}

// CheckCheckpoint reports whether b decodes as a checkpoint of this
// core's service (DecodeCheckpoint with its factory): a snapshot layer
// checks a peer's checkpoint so on receipt, and leaves a member whose
// bytes do not decode out of the snapshot rather than fail every later
// exploration of it. It does not change the core.
func (c *Core) CheckCheckpoint(b []byte) error {
	_, err := DecodeCheckpoint(b, c.factory)
	return err
}

// Copy returns an independent core in the same state, for speculative
// execution: stepping the copy never affects c.
func (c *Core) Copy() (*Core, error) {
	st, err := c.state.Clone(c.factory)
	if err != nil {
		return nil, err
	}
	out := &Core{id: c.id, factory: c.factory, logger: c.logger, state: st, now: c.now, started: c.started, durable: c.durable}
	out.env.core = out
	return out, nil
}

// CopyFor returns a started core of the same service for node id, in a
// clone of st (which is only read) at this core's time: the immediate
// safety check runs a message's receiver on the state a view holds of it.
// Stepping the result never affects c or st; its handlers' logs are
// discarded, since what it runs is speculative and not id's own.
func (c *Core) CopyFor(id ID, st *State) (*Core, error) {
	if id == None {
		return nil, errors.New("node: CopyFor: the node ID must not be None (0)")
	}
	cl, err := st.Clone(c.factory)
	if err != nil {
		return nil, err
	}
	out := &Core{id: id, factory: c.factory, logger: DefaultCoreConfig().Logger, state: cl, now: c.now, started: true}
	out.env.core = out
	return out, nil
}

// SetState replaces the node state with st, which the core takes ownership
// of, and marks the core started. The explorer uses it to run handlers on
// states it holds.
func (c *Core) SetState(st State, now time.Time) {
	c.state = st
	c.now = now
	c.started = true
}

// Step runs the handler for ev and returns its effects. The slices in the
// returned Effects belong to the core and stay valid only until the next
// Step on this core: carry the effects out (or copy them) before stepping
// again. This keeps stepping allocation-free.
//
// A panic in a service handler propagates to the caller, which decides
// whether it is a crash to report (explorer) or a bug to surface (emulator,
// runtime); the core's state is then unspecified.
func (c *Core) Step(ev Event) (Effects, error) { return c.step(ev, nil) }

// Restart starts an unstarted core as the next incarnation of a node that
// crashed, with previous the service value its durable records decoded to
// (DecodeDurable): the fresh service recovers from it (Durable.Recover),
// then Init runs — what EventReset does with the value it keeps in
// memory, so a live restart and an emulated or explored reset follow one
// contract. ev must be an EventInit; a nil previous makes Restart an
// EventInit, and so does a service that is not Durable. The effects are
// Step's, with the same ownership.
func (c *Core) Restart(ev Event, previous Service) (Effects, error) {
	if ev.Kind != EventInit {
		return Effects{}, fmt.Errorf("%w: Restart takes an init event, got %v", ErrInvalidEvent, ev.Kind)
	}
	return c.step(ev, previous)
}

// step is Step; previous is Restart's (nil for every other event).
func (c *Core) step(ev Event, previous Service) (Effects, error) {
	if ev.At.After(c.now) {
		c.now = ev.At
	}
	clear(c.fx.Sends) // drop references to the previous step's messages
	c.fx = Effects{Sends: c.fx.Sends[:0], Timers: c.fx.Timers[:0]}
	fx := &c.fx
	env := &c.env
	env.fx = fx
	defer func() { env.fx = nil }()
	switch ev.Kind {
	case EventInit:
		if c.started {
			return Effects{}, ErrAlreadyStarted
		}
		c.started = true
		c.fresh(previous)
		c.state.Service.Init(env)
		return *fx, nil
	case EventReset:
		if !c.started {
			return Effects{}, ErrNotStarted
		}
		c.fresh(c.state.Service)
		c.state.Service.Init(env)
		return *fx, nil
	}
	if !c.started {
		return Effects{}, ErrNotStarted
	}
	switch ev.Kind {
	case EventMessage:
		if ev.Msg == nil || ev.From == None {
			return Effects{}, fmt.Errorf("%w: message event needs Msg and From", ErrInvalidEvent)
		}
		c.state.Service.HandleMessage(env, ev.From, ev.Msg)
	case EventTimer:
		at, ok := c.state.TimerAt(ev.Timer)
		if !ok || (!ev.Deadline.IsZero() && !at.Equal(ev.Deadline)) {
			return Effects{Ignored: true}, nil
		}
		c.state.cancelTimer(ev.Timer)
		c.state.Service.HandleTimer(env, ev.Timer)
	case EventApp:
		if ev.Msg == nil {
			return Effects{}, fmt.Errorf("%w: app event needs Msg", ErrInvalidEvent)
		}
		c.state.Service.HandleApp(env, ev.Msg)
	case EventTransportError:
		if ev.Peer == None {
			return Effects{}, fmt.Errorf("%w: transport-error event needs Peer", ErrInvalidEvent)
		}
		c.state.Service.HandleTransportError(env, ev.Peer)
	case EventSendRefused:
		if ev.Peer == None || ev.Msg == nil {
			return Effects{}, fmt.Errorf("%w: send-refused event needs Peer and Msg", ErrInvalidEvent)
		}
		h, ok := c.state.Service.(SendRefusedHandler)
		if !ok {
			return Effects{Ignored: true}, nil
		}
		h.HandleSendRefused(env, ev.Peer, ev.Msg)
	default:
		return Effects{}, fmt.Errorf("%w: kind %v", ErrInvalidEvent, ev.Kind)
	}
	return *fx, nil
}

// fresh replaces the service with a new value and drops all timers; the
// random source carries on. A Durable service first recovers what it keeps
// on stable storage from previous, the value of the incarnation that reset
// (nil on a first start).
func (c *Core) fresh(previous Service) {
	svc := c.factory()
	if svc == nil {
		panic("node: Factory returned a nil Service")
	}
	if d, ok := svc.(Durable); ok && previous != nil {
		d.Recover(previous)
	}
	c.state.Service = svc
	c.state.Timers = nil
}

// coreEnv is the Env a core hands to its service. It is reused across steps;
// fx is set only while a handler runs.
type coreEnv struct {
	core *Core
	fx   *Effects
}

var _ Env = (*coreEnv)(nil)

func (e *coreEnv) live() *Effects {
	if e.fx == nil {
		panic("node: Env used outside of a handler call")
	}
	return e.fx
}

func (e *coreEnv) Self() ID             { return e.core.id }
func (e *coreEnv) Now() time.Time       { return e.core.now }
func (e *coreEnv) Rand() *Rand          { return &e.core.state.Rand }
func (e *coreEnv) Logger() *slog.Logger { return e.core.logger }

func (e *coreEnv) Send(to ID, msg Message) {
	fx := e.live()
	if to == None {
		panic("node: Env.Send to None")
	}
	if msg == nil {
		panic("node: Env.Send of a nil message")
	}
	fx.Sends = append(fx.Sends, Envelope{From: e.core.id, To: to, Msg: msg})
}

func (e *coreEnv) SendDatagram(to ID, msg Message) {
	fx := e.live()
	if to == None {
		panic("node: Env.SendDatagram to None")
	}
	if msg == nil {
		panic("node: Env.SendDatagram of a nil message")
	}
	fx.Sends = append(fx.Sends, Envelope{From: e.core.id, To: to, Msg: msg, Datagram: true})
}

func (e *coreEnv) TrySend(to ID, msg Message) {
	fx := e.live()
	if to == None {
		panic("node: Env.TrySend to None")
	}
	if msg == nil {
		panic("node: Env.TrySend of a nil message")
	}
	fx.Sends = append(fx.Sends, Envelope{From: e.core.id, To: to, Msg: msg, Refusable: true})
}

func (e *coreEnv) SetTimer(name string, after time.Duration) {
	fx := e.live()
	if name == "" || len(name) > MaxTimerNameLen {
		panic(fmt.Sprintf("node: Env.SetTimer: timer name %q must be 1..%d bytes", name, MaxTimerNameLen))
	}
	if after < 0 {
		after = 0
	}
	at := e.core.now.Add(after)
	e.core.state.setTimer(name, at)
	fx.Timers = append(fx.Timers, TimerOp{Name: name, At: at})
}

func (e *coreEnv) CancelTimer(name string) {
	fx := e.live()
	if e.core.state.cancelTimer(name) {
		fx.Timers = append(fx.Timers, TimerOp{Name: name, Cancel: true})
	}
}

func (e *coreEnv) TimerScheduled(name string) bool {
	_, ok := e.core.state.TimerAt(name)
	return ok
}
