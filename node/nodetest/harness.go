package nodetest

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// startTime is the harness clock's origin: fixed, so that scripts are
// reproducible, and far from the zero time so that no service mistakes it
// for "unset".
var startTime = time.Unix(1_000_000, 0).UTC()

// eventSpacing is how far the clock advances per event: enough for timers
// to print as clean durations relative to the event that set them.
const eventSpacing = time.Millisecond

// Harness runs scripts against a set of cores of one service (see the
// package documentation for the script language). It is a node.View of the
// started nodes, so the service's properties evaluate on it. A Harness holds
// one scenario: build a new one per script. It is not safe for concurrent
// use.
type Harness struct {
	cfg     Config
	seed    uint64
	spec    node.Spec
	reg     *node.Registry // spec's: every send and call must pass it
	specSet bool
	cores   map[node.ID]*node.Core
	ids     []node.ID // started nodes, ascending
	queues  map[channel][]queued
	// contact holds the pairs with an open connection, in both orders.
	contact map[channel]bool
	// gen numbers events: a node's latest event other than a refusal is
	// gens[id], and its sends carry that number, so refuse can tell a
	// message of the sender's latest event (refusable, by the contract of
	// node.Env.TrySend) from an older one.
	gens    map[node.ID]uint64
	lastGen uint64
	now     time.Time
}

var _ node.View = (*Harness)(nil)

// New returns a harness with no node started, cfg's zero fields taking
// their defaults. It fails when cfg has no Spec, a negative
// DeliverAllLimit, or a command that is nil or shadows a built-in one.
func New(cfg Config) (*Harness, error) {
	if cfg.Spec == nil {
		return nil, errors.New("nodetest: Config.Spec is required")
	}
	for name, cmd := range cfg.Commands {
		if _, ok := builtins[name]; ok {
			return nil, fmt.Errorf("nodetest: command %q shadows a built-in command", name)
		}
		if cmd == nil {
			return nil, fmt.Errorf("nodetest: command %q is nil", name)
		}
	}
	switch {
	case cfg.DeliverAllLimit < 0:
		return nil, fmt.Errorf("nodetest: Config.DeliverAllLimit is %d; want a positive bound or 0 for the default", cfg.DeliverAllLimit)
	case cfg.DeliverAllLimit == 0:
		cfg.DeliverAllLimit = DefaultConfig().DeliverAllLimit
	}
	return &Harness{
		cfg:     cfg,
		seed:    cfg.Seed,
		cores:   map[node.ID]*node.Core{},
		queues:  map[channel][]queued{},
		contact: map[channel]bool{},
		gens:    map[node.ID]uint64{},
		now:     startTime,
	}, nil
}

// Nodes returns the started nodes, ascending. The caller must not modify
// the slice.
func (h *Harness) Nodes() []node.ID { return h.ids }

// Service returns the live service state of id, or nil if id is not
// started. The caller must only read it.
func (h *Harness) Service(id node.ID) node.Service {
	if c, ok := h.cores[id]; ok {
		return c.Service()
	}
	return nil
}

// TimerScheduled reports whether the started node id has timer name
// scheduled.
func (h *Harness) TimerScheduled(id node.ID, name string) bool {
	c, ok := h.cores[id]
	if !ok {
		return false
	}
	_, ok = c.State().TimerAt(name)
	return ok
}

// Now returns the harness clock: the time of the last event run.
func (h *Harness) Now() time.Time { return h.now }

// Core returns an independent copy of id's core (see node.Core.Copy), so a
// test can inspect it, hash it or step it speculatively without changing
// the scenario. It fails when id is not started or its state does not copy.
func (h *Harness) Core(id node.ID) (*node.Core, error) {
	c, ok := h.cores[id]
	if !ok {
		return nil, fmt.Errorf("nodetest: node %v not started", id)
	}
	cp, err := c.Copy()
	if err != nil {
		return nil, fmt.Errorf("nodetest: copy %v: %w", id, err)
	}
	return cp, nil
}

// Pending returns every queued message, channels in (To, From) order and
// FIFO within a channel: the order the pending command prints and
// deliver-all delivers. The slice is the caller's.
func (h *Harness) Pending() []node.Envelope {
	var out []node.Envelope
	for _, ch := range h.pendingChannels() {
		for _, q := range h.queues[ch] {
			out = append(out, node.Envelope{From: ch.from, To: ch.to, Msg: q.msg, Datagram: q.datagram, Refusable: q.refusable})
		}
	}
	return out
}

// Step runs ev at the started node id at the next clock tick, queues the
// messages it sends (opening the connections they need) and writes its
// effects to out in the script's output format. It is how service commands
// act on nodes; ev.At is ignored. Reset and transport-error events run at
// id only: Step does not break channels or notify peers as the reset
// command does. An application call or a send outside Spec.Messages fails
// the step with node.Registry.CheckMessage's error, as in every host.
func (h *Harness) Step(id node.ID, ev node.Event, out io.Writer) error {
	c, ok := h.cores[id]
	if !ok {
		return fmt.Errorf("node %v not started", id)
	}
	return h.step(c, ev, out)
}

func (h *Harness) step(c *node.Core, ev node.Event, out io.Writer) error {
	h.now = h.now.Add(eventSpacing)
	ev.At = h.now
	if ev.Kind != node.EventSendRefused {
		// A refusal belongs to the event whose send it refuses: the
		// contract runs it before any other event of the node, so the
		// rest of that event's TrySends stay refusable.
		h.lastGen++
		h.gens[c.ID()] = h.lastGen
	}
	switch ev.Kind {
	case node.EventReset:
		fmt.Fprintf(out, "%v: reset\n", c.ID())
	case node.EventTransportError:
		fmt.Fprintf(out, "%v: transport error from %v\n", c.ID(), ev.Peer)
	}
	if ev.Kind == node.EventApp {
		if err := h.reg.CheckMessage(ev.Msg); err != nil {
			return fmt.Errorf("%v: application call: %w", c.ID(), err)
		}
	}
	fx, err := c.Step(ev)
	if err != nil {
		return fmt.Errorf("%v: %v: %w", c.ID(), ev, err)
	}
	if err := h.reg.CheckSends(fx.Sends); err != nil {
		return fmt.Errorf("%v: %v: %w", c.ID(), ev, err)
	}
	if fx.Ignored {
		fmt.Fprintf(out, "%v: %v ignored\n", c.ID(), ev)
	}
	for _, e := range fx.Sends {
		ch := channel{from: e.From, to: e.To}
		h.queues[ch] = append(h.queues[ch], queued{msg: e.Msg, datagram: e.Datagram, refusable: e.Refusable, gen: h.gens[c.ID()]})
		if !e.Datagram {
			h.contact[ch] = true
			h.contact[ch.reverse()] = true
		}
		fmt.Fprintf(out, "%v %s %v %v\n", e.From, arrow(e), e.To, e.Msg)
	}
	for _, op := range fx.Timers {
		if op.Cancel {
			fmt.Fprintf(out, "%v: cancel timer %s\n", c.ID(), op.Name)
		} else {
			fmt.Fprintf(out, "%v: set timer %s +%v\n", c.ID(), op.Name, op.At.Sub(h.now))
		}
	}
	return nil
}

// arrow is how a send prints between its ends: "->" for a message, "~>"
// for a datagram, "?>" for a message sent with TrySend.
func arrow(e node.Envelope) string {
	switch {
	case e.Datagram:
		return "~>"
	case e.Refusable:
		return "?>"
	}
	return "->"
}

// start creates, registers and initialises the node id.
func (h *Harness) start(id node.ID, out io.Writer) error {
	if _, ok := h.cores[id]; ok {
		return fmt.Errorf("%v already started", id)
	}
	spec, err := h.ensureSpec()
	if err != nil {
		return err
	}
	c, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New, Seed: h.seed})
	if err != nil {
		return err
	}
	h.cores[id] = c
	i, _ := slices.BinarySearch(h.ids, id)
	h.ids = slices.Insert(h.ids, i, id)
	return h.step(c, node.Event{Kind: node.EventInit}, out)
}

// ensureSpec builds the spec on first use; from then on the options are
// frozen, because nodes built from different options would not be one
// service.
func (h *Harness) ensureSpec() (node.Spec, error) {
	if h.specSet {
		return h.spec, nil
	}
	spec := h.cfg.Spec()
	if err := spec.Validate(); err != nil {
		return node.Spec{}, err
	}
	reg, err := spec.Registry()
	if err != nil {
		return node.Spec{}, err
	}
	h.spec, h.reg, h.specSet = spec, reg, true
	return spec, nil
}

// core returns the started node named s.
func (h *Harness) core(s string) (*node.Core, error) {
	id, err := node.ParseID(s)
	if err != nil {
		return nil, err
	}
	c, ok := h.cores[id]
	if !ok {
		return nil, fmt.Errorf("node %v not started", id)
	}
	return c, nil
}
