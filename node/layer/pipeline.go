package layer

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// DefaultTickRetry is how long a Pipeline holds back a layer whose Tick
// failed (PipelineConfig.TickRetry): its NextTick has not moved, and
// calling it again at once would spin.
const DefaultTickRetry = 100 * time.Millisecond

// ErrMessage is wrapped by the Outcome.Errors entry of a message of a
// layer's own type that no layer kept from the core: a layer bug. The
// Pipeline drops the message; the service never sees it.
var ErrMessage = errors.New("layer: a layer's message reached the core; dropped")

// PipelineConfig configures a Pipeline. Zero fields take the documented
// defaults (DefaultPipelineConfig); Core is required.
type PipelineConfig struct {
	// Core is the node the layers run beside. The Pipeline steps it; the
	// shell must not.
	Core *node.Core
	// Layers run in this order around every core step (see Layer).
	Layers []Layer
	// Host is what each layer's Attach is given; nil gives the Core (a
	// plain Host: a layer that needs a RuntimeHost refuses it).
	Host Host
	// TickRetry is how long a layer whose Tick failed is held back
	// (default DefaultTickRetry).
	TickRetry time.Duration
	// Persist makes the Pipeline emit the service's durable projection
	// (Core.AppendDurable) as a DurableWrite whenever its bytes change: a
	// shell that keeps a store (the live runtime with a data directory)
	// sets it. Off (emulation, the explorer), a reset recovers from the
	// previous value in memory and nothing is computed. The Durable layers'
	// writes are emitted either way: the Pipeline restores them on a reset.
	Persist bool
}

// DefaultPipelineConfig returns the defaults of a PipelineConfig's zero
// fields (no Core, no Layers).
func DefaultPipelineConfig() PipelineConfig {
	return PipelineConfig{TickRetry: DefaultTickRetry}
}

// Pipeline is one node's layer stack around its Core: the single place
// where a layer's hooks are called, a Gate's Verdict is carried out and a
// postponed event is held and delivered again. Both shells host it — the
// live runtime on its core goroutine, the emulator in its event loop —,
// so the rule for one event is written once:
//
//	Gate/Before of each layer in order → core.Step → Sending per send → After of each layer
//
// An event a layer keeps from the core is not shown to the layers after
// it. A postponed event (Verdict.RetryAt) is held by the Pipeline and
// handed back by DueRetries; Retry runs it from the layer that postponed
// it. A postponed timer is forgotten when the service cancels or sets that
// timer again.
//
// The Pipeline is a deterministic core: no goroutines, no clock (every
// call takes the time), no I/O. It returns its effects as data (Outcome)
// for the shell to carry out in order. Not safe for concurrent use: the
// shell calls it from one goroutine.
type Pipeline struct {
	core     *node.Core
	layers   []Layer
	gates    []Gate // gates[i] is layers[i] as a Gate, or nil
	own      map[string]bool
	protos   []node.Message
	hold     []time.Time
	retry    time.Duration
	retries  []postponed
	retrySeq uint64
	// sends is the buffer Outcome.Sends reuses from step to step.
	sends []Send
	// durable is the durability bookkeeping (pipeline_durable.go).
	durable durability
}

// postponed is an event a layer postponed: delivered again at at, to
// layer first.
type postponed struct {
	at    time.Time
	layer int
	ev    node.Event
	seq   uint64
}

// Send is an envelope the shell must send, in Outcome order.
type Send struct {
	Env node.Envelope
	// Layer marks a layer's own message (protocol traffic): it did not
	// pass through Layer.Sending and is complete, CN included. A message
	// to this node itself (Env.To is the node) is to be run through the
	// Pipeline as a received message.
	Layer bool
}

// Outcome is what one Pipeline call did, as data. Its slices are the
// Pipeline's and the core's buffers, valid until the next Step or Retry
// (etcd raft's Ready discipline, so a step allocates nothing): a shell
// carries out or copies them before it steps the node again. Errors is
// fresh.
type Outcome struct {
	// Event is the event run (with At as given).
	Event node.Event
	// Handled is set when the core stepped the event.
	Handled bool
	// Kept is the index of the layer that kept the event from the core
	// (-1 when Handled); Verdict is its verdict.
	Kept    int
	Verdict Verdict
	// Retried is set when the event was a postponed one delivered again.
	Retried bool
	// Postponed is set when the Pipeline now holds the event for a retry.
	Postponed bool
	// Break is the peer whose connections the shell must close without a
	// transport error for this node's service (None: none): the sender
	// of a message a Verdict with Break kept (never this node, never for a
	// datagram).
	Break node.ID
	// Sends are the messages to send, in order: the layers' own from
	// Gate/Before, the service's (after Sending), the layers' own from
	// After.
	Sends []Send
	// Timers are the core's timer operations (Effects.Timers).
	Timers []node.TimerOp
	// Ignored is the core's Effects.Ignored.
	Ignored bool
	// History are the core's client-history marks (Effects.History).
	History []node.HistoryMark
	// Durable are the records the call changed, at most one per key
	// (its latest value): the shell must make them durable (written and
	// synced) before it carries out Sends and Break. Nil when none
	// changed. See DurableWrite.
	Durable []node.DurableWrite
	// Errors are the layers' errors (each names its layer) and the core's
	// refusal: bugs to log, not peers' faults. The Pipeline goes on as the
	// verdicts say.
	Errors []error
}

// NewPipeline validates cfg, collects the layers' message prototypes
// (Messages, called once) and attaches every layer to cfg.Host, in order.
// Errors are prefixed "node:" and wrap the layer's.
func NewPipeline(cfg PipelineConfig) (*Pipeline, error) {
	if cfg.Core == nil {
		return nil, errors.New("layer: PipelineConfig.Core is required")
	}
	if cfg.TickRetry < 0 {
		return nil, fmt.Errorf("layer: negative PipelineConfig.TickRetry %v", cfg.TickRetry)
	}
	if cfg.TickRetry == 0 {
		cfg.TickRetry = DefaultTickRetry
	}
	host := cfg.Host
	if host == nil {
		host = cfg.Core
	}
	p := &Pipeline{core: cfg.Core, layers: slices.Clone(cfg.Layers), own: map[string]bool{},
		hold: make([]time.Time, len(cfg.Layers)), retry: cfg.TickRetry}
	p.gates = make([]Gate, len(p.layers))
	for i, l := range p.layers {
		if l == nil {
			return nil, fmt.Errorf("layer: layer %d is nil", i)
		}
		p.gates[i], _ = l.(Gate)
		for _, m := range l.Messages() {
			if m == nil {
				return nil, fmt.Errorf("layer: layer %T: nil message prototype", l)
			}
			if !IsMessage(m) {
				return nil, fmt.Errorf("layer: layer %T: message type %s does not implement layer.Message", l, m.MessageType())
			}
			p.protos = append(p.protos, m)
			p.own[m.MessageType()] = true
		}
	}
	if err := p.durable.init(cfg.Persist, p.layers); err != nil {
		return nil, err
	}
	for _, l := range p.layers {
		if err := l.Attach(host); err != nil {
			return nil, fmt.Errorf("layer: attach layer %T: %w", l, err)
		}
	}
	return p, nil
}

// Messages returns the layers' message prototypes, for the shell's
// registry. The slice is the Pipeline's: do not modify it.
func (p *Pipeline) Messages() []node.Message { return p.protos }

// IsLayerMessage reports whether m is of one of the layers' own types.
func (p *Pipeline) IsLayerMessage(m node.Message) bool { return m != nil && p.own[m.MessageType()] }

// Layers returns the layers, in order. The slice is the Pipeline's.
func (p *Pipeline) Layers() []Layer { return p.layers }

// Start calls every layer's Start (after the core's EventInit has been
// run through Step or Restart) and returns their messages and the durable
// records they changed (Outcome.Sends, Outcome.Durable; Kept is -1). The
// slices are fresh.
func (p *Pipeline) Start(now time.Time) Outcome {
	o := Outcome{Kept: -1}
	for i, l := range p.layers {
		o.Sends = appendLayer(o.Sends, l.Start(now))
		p.durable.note(&o, i)
	}
	return o
}

// Step runs ev (with ev.At set) through the layers and the core. in is
// the received envelope of a message event (nil otherwise; its CN is the
// sender's checkpoint number). An EventReset also forgets every postponed
// event: they belonged to the incarnation that ended.
func (p *Pipeline) Step(ev node.Event, in *node.Envelope) Outcome {
	if ev.Kind == node.EventReset {
		p.retries = nil
	}
	return p.stepFrom(0, ev, in, false, nil)
}

// StepUngated runs ev on the core without asking the layers' Gate or
// Before (their Sending and After still run): for an event a shell injects
// on purpose that no layer may keep from the core, such as the emulator's
// scripted AppCall. The layers do not see the event itself.
func (p *Pipeline) StepUngated(ev node.Event) Outcome {
	return p.stepFrom(len(p.layers), ev, nil, false, nil)
}

// DueRetries returns the postponed events due at now, as tokens for Retry,
// in the order they were postponed. An event postponed again by one of
// them is not among them (it waits for a later call).
func (p *Pipeline) DueRetries(now time.Time) []uint64 {
	var due []uint64
	for _, r := range p.retries {
		if !r.at.After(now) {
			due = append(due, r.seq)
		}
	}
	return due
}

// Retry delivers the postponed event token names again, at now, to the
// layer that postponed it (with retry set) and those after it, then to
// the core. ok is false when the event is no longer held: a timer the
// service cancelled or set again meanwhile, or one forgotten by a reset.
func (p *Pipeline) Retry(token uint64, now time.Time) (Outcome, bool) {
	i := slices.IndexFunc(p.retries, func(r postponed) bool { return r.seq == token })
	if i < 0 {
		return Outcome{}, false
	}
	r := p.retries[i]
	p.retries = slices.Delete(p.retries, i, i+1)
	r.ev.At = now
	return p.stepFrom(r.layer, r.ev, nil, true, nil), true
}

// ForgetRetries drops every postponed event: for a shell whose node lost
// its incarnation before the EventReset that Step would see.
func (p *Pipeline) ForgetRetries() { p.retries = nil }

// Postponed returns how many events the Pipeline holds for a retry.
func (p *Pipeline) Postponed() int { return len(p.retries) }

// NextDue returns the earliest time a postponed event or a layer's tick is
// due (the zero time if none is): when the shell must next call
// DueRetries/Retry and Tick. Ask again after every call.
func (p *Pipeline) NextDue() time.Time {
	var min time.Time
	consider := func(at time.Time) {
		if min.IsZero() || at.Before(min) {
			min = at
		}
	}
	for _, r := range p.retries {
		consider(r.at)
	}
	for i, l := range p.layers {
		if at := l.NextTick(); !at.IsZero() {
			consider(latest(at, p.hold[i]))
		}
	}
	return min
}

// Tick runs the Tick of every layer due at now, in order, and returns
// their messages and the durable records they changed (Outcome.Sends,
// Outcome.Durable; Kept is -1); a failing layer's error is in
// Outcome.Errors and the layer is held back for PipelineConfig.TickRetry.
// The slices are fresh.
func (p *Pipeline) Tick(now time.Time) Outcome {
	o := Outcome{Kept: -1}
	for i, l := range p.layers {
		at := l.NextTick()
		if at.IsZero() || latest(at, p.hold[i]).After(now) {
			continue
		}
		msgs, err := l.Tick(now)
		if err != nil {
			o.Errors = append(o.Errors, fmt.Errorf("layer: layer %T tick: %w", l, err))
			p.hold[i] = now.Add(p.retry)
		}
		o.Sends = appendLayer(o.Sends, msgs)
		p.durable.note(&o, i)
	}
	return o
}

// ConnectionBroken tells the layers that implement BreakObserver, in
// order, that the shell closed the connections to and from peer without
// a transport error for the service (it carried out an Outcome.Break),
// and returns their messages and the durable records they changed, as
// Tick does. The slices are fresh.
func (p *Pipeline) ConnectionBroken(now time.Time, peer node.ID) Outcome {
	o := Outcome{Kept: -1}
	for i, l := range p.layers {
		if b, ok := l.(BreakObserver); ok {
			o.Sends = appendLayer(o.Sends, b.ConnectionBroken(now, peer))
			p.durable.note(&o, i)
		}
	}
	return o
}

// Stop calls Stop on the layers that implement Stopper, last layer first.
func (p *Pipeline) Stop() {
	for i := len(p.layers) - 1; i >= 0; i-- {
		if s, ok := p.layers[i].(Stopper); ok {
			s.Stop()
		}
	}
}

// stepFrom is Step starting at layer first; retried marks a postponed
// event delivered again to the layer that postponed it. previous is
// Restart's recovered service value (nil otherwise).
func (p *Pipeline) stepFrom(first int, ev node.Event, in *node.Envelope, retried bool, previous node.Service) Outcome {
	o := Outcome{Event: ev, Kept: -1, Retried: retried, Sends: p.sends[:0]}
	defer func() { p.sends = o.Sends[:0] }()
	reset := ev.Kind == node.EventReset
	for i := first; i < len(p.layers); i++ {
		v, msgs, err := p.before(i, ev, in, retried && i == first)
		if err != nil {
			o.Errors = append(o.Errors, fmt.Errorf("layer: layer %T on %v: %w", p.layers[i], ev, err))
		}
		o.Sends = appendLayer(o.Sends, msgs)
		if !reset {
			// What a layer drops on a reset is not made durable: the
			// restore below gives it back.
			p.durable.note(&o, i)
		}
		if !v.Handle {
			p.keep(&o, i, in, v)
			if reset {
				p.durable.restore(&o)
			}
			return o
		}
	}
	if reset {
		p.durable.restore(&o)
	}
	if ev.Kind == node.EventMessage && p.IsLayerMessage(ev.Msg) {
		o.Errors = append(o.Errors, fmt.Errorf("%w: %v", ErrMessage, ev))
		return o
	}
	var fx node.Effects
	var err error
	if previous != nil {
		fx, err = p.core.Restart(ev, previous) // an EventInit (Pipeline.Restart)
	} else {
		fx, err = p.core.Step(ev)
	}
	if err != nil {
		o.Errors = append(o.Errors, fmt.Errorf("layer: core refused %v: %w", ev, err))
	}
	o.Handled, o.Timers, o.Ignored = err == nil, fx.Timers, fx.Ignored
	o.History = fx.History
	if o.Handled && !o.Ignored {
		p.durable.noteService(&o, p.core)
	}
	for _, op := range fx.Timers {
		p.forgetTimer(op.Name)
	}
	for _, env := range fx.Sends {
		// Sending gets a pointer into the buffer, not to a copy that
		// would escape to the heap with every send.
		o.Sends = append(o.Sends, Send{Env: env})
		out := &o.Sends[len(o.Sends)-1].Env
		for _, l := range p.layers {
			l.Sending(ev.At, out)
		}
	}
	for i, l := range p.layers {
		o.Sends = appendLayer(o.Sends, l.After(ev.At))
		p.durable.note(&o, i)
	}
	return o
}

// before asks layer i about ev: Gate for a Gate, Before otherwise.
func (p *Pipeline) before(i int, ev node.Event, in *node.Envelope, retry bool) (Verdict, []node.Envelope, error) {
	if g := p.gates[i]; g != nil {
		return g.Gate(ev.At, ev, in, retry)
	}
	handle, msgs, err := p.layers[i].Before(ev.At, ev, in)
	return Verdict{Handle: handle}, msgs, err
}

// keep records layer i's verdict v that kept ev from the core: the
// connection to break for a dropped message, or the postponed event.
func (p *Pipeline) keep(o *Outcome, i int, in *node.Envelope, v Verdict) {
	o.Kept, o.Verdict = i, v
	ev := o.Event
	switch ev.Kind {
	case node.EventMessage:
		if v.Break && (in == nil || !in.Datagram) && ev.From != p.core.ID() && ev.From != node.None {
			o.Break = ev.From
		}
	case node.EventTimer, node.EventApp, node.EventTransportError:
		if !v.RetryAt.IsZero() {
			p.retrySeq++
			p.retries = append(p.retries, postponed{at: v.RetryAt, layer: i, ev: ev, seq: p.retrySeq})
			o.Postponed = true
		}
	}
}

// forgetTimer drops a postponed firing of timer name: the service
// cancelled or set it again.
func (p *Pipeline) forgetTimer(name string) {
	if len(p.retries) == 0 {
		return
	}
	p.retries = slices.DeleteFunc(p.retries, func(r postponed) bool {
		return r.ev.Kind == node.EventTimer && r.ev.Timer == name
	})
}

func appendLayer(out []Send, msgs []node.Envelope) []Send {
	for _, env := range msgs {
		out = append(out, Send{Env: env, Layer: true})
	}
	return out
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
