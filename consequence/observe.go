package consequence

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Properties that judge more than a state: a bounded property
// (node.Within) judges how long its obligation has been open, a history
// property (node.OnHistory) the client history of the path. For a model
// whose spec declares either, a global state also holds what its path
// observed — every bounded property's node.Obligation and the history's
// events — as one more fingerprint component, and the messages in flight
// carry their send times, so that the virtual clock can bound how long a
// message waits (TimelyOptions). A model whose spec declares neither
// keeps none of it: its states, fingerprints and counts are what they
// were.

// DefaultMaxDelay is TimelyOptions.MaxDelay's default: a message is
// delivered within a second of its send, on the virtual clock.
const DefaultMaxDelay = time.Second

// TimelyOptions configure the virtual clock of a model whose spec
// declares a bounded property. Without a bound on network delay every
// bounded property fails along a path that holds a message while timers
// fire; with one, a timer may fire only while no message in flight has
// waited past MaxDelay at its due time.
type TimelyOptions struct {
	// MaxDelay bounds how long a message waits in flight on the virtual
	// clock: a timer due later than a deliverable message's send time
	// (its sender's clock then) plus MaxDelay does not fire before that
	// message is delivered. Datagrams are not bound (they may be lost).
	// Zero means the spec's declaration (node.DeliverySpec.MaxDelay), or
	// DefaultMaxDelay if it declares none; negative is an error.
	MaxDelay time.Duration
}

// atSalt changes a message's contribution to its channel's hash by its
// send time (inflight.at), as winSalt does by its refusal window.
const atSalt = 0x8cb92ba72f3d8dd7

// Next implements Model: it runs the action's handler on a clone of the
// node's state with a pooled scratch core and builds the successor (see
// transition), then, for a spec with bounded or history properties, what
// the path observed on the way (observeNext).
func (m *ActorModel) Next(g *GlobalState, a ActorAction) (*GlobalState, bool) {
	s, ok := m.transition(g, a)
	if !ok || m.obs == nil {
		return s, ok
	}
	return m.observeNext(g, s), true
}

// observer is a model's part for the properties that judge more than a
// state; nil when the spec declares none.
type observer struct {
	bounded []node.Property
	// history is set when the spec declares a history property; start
	// when the model's history begins with the system (an initial
	// configuration), not at a snapshot.
	history, start bool
	// epoch is what send times count from (timely), maxDelay the bound
	// (zero: no bounded property, no send times).
	epoch    time.Time
	maxDelay time.Duration
}

// observed is what a global state's path observed (see observer). It is
// immutable once a state holds it.
type observed struct {
	bounded []boundedState
	hist    *histEvent
	histN   int
	histH   node.Hash
	// h is the state's fingerprint component for all of it.
	h node.Hash
}

// boundedState is one bounded property's obligation in a state, and
// whether the state is past the property's deadline: on the way to it the
// obligation opened at overdueSince passed its bound, or it is still late.
type boundedState struct {
	o            node.Obligation
	overdue      bool
	overdueSince time.Time
}

// histEvent is one event of a path's history, linked to the one before.
type histEvent struct {
	prev *histEvent
	ev   node.HistoryEvent
}

// newObserver returns the observer of spec's properties (nil when none
// needs one).
func newObserver(spec node.Spec, opts ActorOptions, initial bool, epoch time.Time) (*observer, error) {
	o := &observer{start: initial, epoch: epoch}
	for _, p := range spec.Properties {
		switch p.Kind {
		case node.Bounded:
			o.bounded = append(o.bounded, p)
		case node.HistoryKind:
			o.history = true
		}
	}
	if len(o.bounded) == 0 && !o.history {
		return nil, nil
	}
	if opts.Timely.MaxDelay < 0 {
		return nil, fmt.Errorf("%w: negative TimelyOptions.MaxDelay %v", ErrActorModel, opts.Timely.MaxDelay)
	}
	if opts.Symmetry {
		return nil, fmt.Errorf("%w: symmetry reduction does not combine with bounded or history properties", ErrNoSymmetry)
	}
	if len(o.bounded) > 0 {
		o.maxDelay = cmp.Or(opts.Timely.MaxDelay, spec.Delivery.MaxDelay, DefaultMaxDelay)
	}
	return o, nil
}

// observeStart sets up m's observer and g's observed part (g is the
// start state, complete but for its fingerprint). initial says whether g
// is an initial configuration (its history begins with the system).
func (m *ActorModel) observeStart(g *GlobalState, initial bool) error {
	epoch := g.now()
	for _, n := range g.nodes {
		if n.now.Before(epoch) {
			epoch = n.now
		}
	}
	obs, err := newObserver(m.spec, m.opts, initial, epoch.Add(-time.Millisecond))
	if err != nil || obs == nil {
		return err
	}
	m.obs = obs
	if obs.maxDelay > 0 {
		// What was in flight at the start was sent by then.
		at := obs.stamp(g.now())
		for k, c := range g.chans {
			items := make([]inflight, len(c.items))
			for j, it := range c.items {
				if it.msg != nil {
					it.at = at
				}
				items[j] = it
			}
			g.chans[k] = &channel{from: c.from, to: c.to, items: items, window: c.window, hash: hashList(tagChan, node.Hash{}, items)}
		}
	}
	seen := &observed{bounded: make([]boundedState, len(obs.bounded))}
	g.seen = seen
	if err := m.seedHistory(g); err != nil {
		return err
	}
	seen = g.seen
	m.judge(g, nil, seen)
	g.seen = seen
	return nil
}

// stamp is a send time as a message in flight carries it: milliseconds
// since the epoch, from 1 (0 marks an item without one).
func (o *observer) stamp(at time.Time) int32 {
	ms := at.Sub(o.epoch).Milliseconds()
	return int32(min(max(ms, 1), 1<<31-1))
}

// sentAt is the send time of a message that node sends at its clock at,
// as its inflight item carries it (0 without a bounded property).
func (m *ActorModel) sentAt(at time.Time) int32 {
	if m.obs == nil || m.obs.maxDelay == 0 {
		return 0
	}
	return m.obs.stamp(at)
}

// timelyFirst lowers first (when the earliest timer of g is due) so that
// no timer due past a deliverable message's deadline — its send time plus
// MaxDelay — fires before that message is delivered: the clock rule lets
// a timer fire only within the skew bound of first.
func (m *ActorModel) timelyFirst(g *GlobalState, first time.Time, ok bool) (time.Time, bool) {
	if !ok || m.obs == nil || m.obs.maxDelay == 0 {
		return first, ok
	}
	oldest := int32(0)
	for _, c := range g.chans {
		if _, in := m.index(c.to); !in || (c.items[0].msg == nil && !m.intercept(ActorAction{Kind: ActDeliver, Node: c.to, Peer: c.from}).Handle) {
			continue // a postponed transport error holds the channel
		}
		// The channel's head is its oldest item: what follows waits
		// behind it, without a deadline behind a late head (ActDelay).
		if at := c.items[0].at; at > 0 && (oldest == 0 || at < oldest) {
			oldest = at
		}
	}
	if oldest == 0 {
		return first, ok
	}
	deadline := m.obs.epoch.Add(time.Duration(oldest)*time.Millisecond + m.obs.maxDelay - m.clockSkew())
	if deadline.Before(first) {
		return deadline, true
	}
	return first, ok
}

// observeNext completes the successor s of parent: it takes in what the
// path observed on the way (the bounded properties' obligations; the
// history run recorded) and its fingerprint component.
func (m *ActorModel) observeNext(parent, s *GlobalState) *GlobalState {
	if s.crash != nil {
		return s
	}
	if m.obs.maxDelay > 0 {
		m.stampTransportErrors(parent, s)
	}
	seen := *s.seen // parent's, or the one run recorded the history in
	seen.bounded = make([]boundedState, len(m.obs.bounded))
	m.judge(s, parent.seen.bounded, &seen)
	s.seen = &seen
	s.fp = xorHash(xorHash(s.fp, parent.seen.h), seen.h)
	return s
}

// stampTransportErrors gives the transport errors the step to s put in
// flight (a reset's RST, a break's, a write's answer over a stale
// connection) their send time, as run gives the messages theirs: an RST
// travels as a message does, and a peer that never learns of a reset
// while time passes would otherwise fail every bounded property.
func (m *ActorModel) stampTransportErrors(parent, s *GlobalState) {
	at := m.obs.stamp(parent.now())
	// s is the step's own state; its channel list is its parent's until
	// the step changed a channel.
	owned := len(parent.chans) == 0 || len(s.chans) == 0 || &s.chans[0] != &parent.chans[0]
	for k, c := range s.chans {
		if pc := parent.channel(c.from, c.to); pc == c || !slices.ContainsFunc(c.items, func(it inflight) bool { return it.at == 0 }) {
			continue
		}
		items := slices.Clone(c.items)
		for j := range items {
			if items[j].at == 0 {
				items[j].at = at
			}
		}
		nc := &channel{from: c.from, to: c.to, items: items, window: c.window, hash: hashList(tagChan, node.Hash{}, items)}
		s.fp = xorHash(xorHash(s.fp, chanComponent(c)), chanComponent(nc))
		if !owned {
			s.chans, owned = slices.Clone(s.chans), true
		}
		s.chans[k] = nc
	}
}

// judge evaluates the bounded properties on g at its clock, from their
// state before it (prev; nil at the start), into seen's bounded slice (to
// fill), and sets seen's fingerprint component.
func (m *ActorModel) judge(g *GlobalState, prev []boundedState, seen *observed) {
	now := g.now()
	for k, p := range m.obs.bounded {
		var b boundedState
		if prev != nil {
			b = prev[k]
		}
		o, crossed := b.o.Elapse(now, p.Bound)
		since := o.Since
		pending, _ := p.Pending(g)
		o = o.Observe(now, pending)
		next := boundedState{o: o, overdue: crossed || o.Late}
		if next.overdue {
			next.overdueSince = since
		}
		seen.bounded[k] = next
	}
	seen.h = m.observedHash(g, seen)
}

// observedHash is seen's fingerprint component: the obligations' times
// relative to the clock's reference (as the clock component's), and the
// history's running hash.
func (m *ActorModel) observedHash(g *GlobalState, seen *observed) node.Hash {
	ref, _ := m.clockRef(g)
	var buf [8 * 16]byte
	b := buf[:0]
	for k, bs := range seen.bounded {
		flags := uint64(k) << 3
		if bs.o.Open {
			flags |= 1
		}
		if bs.o.Late {
			flags |= 2
		}
		if bs.overdue {
			flags |= 4
		}
		b = binary.LittleEndian.AppendUint64(b, flags)
		b = binary.LittleEndian.AppendUint64(b, uint64(bs.o.Since.Sub(ref)))
		b = binary.LittleEndian.AppendUint64(b, uint64(bs.overdueSince.Sub(ref)))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(seen.histN))
	b = binary.LittleEndian.AppendUint64(b, seen.histH.Hi)
	b = binary.LittleEndian.AppendUint64(b, seen.histH.Lo)
	r := xxh3.Hash128(b)
	return mix(tagObserved, 0, 0, node.Hash{Hi: r.Hi, Lo: r.Lo})
}

// tagObserved is the fingerprint tag of a state's observed component.
const tagObserved = tagNodeClock + 16

// boundedErr returns the failure of the bounded property named name in
// g: its obligation passed its bound on the way to g, or g is still
// late. Nil when it holds, or when g's model does not track it.
func (g *GlobalState) boundedErr(name string) error {
	if g.seen == nil || g.crash != nil {
		return nil
	}
	for k, p := range g.m.obs.bounded {
		if p.Name != name {
			continue
		}
		b := g.seen.bounded[k]
		if !b.overdue || g.Delays() > 0 {
			return nil // a late message broke the delay bound it assumes
		}
		_, goal := p.Pending(g)
		return &node.OverdueError{Property: p.Name, Bound: p.Bound, Since: b.overdueSince, At: g.now(), Goal: goal}
	}
	return nil
}

// Obligation returns the obligation of g's bounded property named name
// and whether g tracks it.
func (g *GlobalState) Obligation(name string) (node.Obligation, bool) {
	if g.seen == nil {
		return node.Obligation{}, false
	}
	for k, p := range g.m.obs.bounded {
		if p.Name == name {
			return g.seen.bounded[k].o, true
		}
	}
	return node.Obligation{}, false
}
