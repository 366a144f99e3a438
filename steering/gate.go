package steering

import (
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// eventKey is the kind of an event, for the intervention budget.
type eventKey struct {
	kind node.EventKind
	peer node.ID
	name string // message type, timer name or call type
}

// keyOf is the kind of event ev.
func keyOf(ev node.Event) eventKey {
	k := eventKey{kind: ev.Kind}
	switch ev.Kind {
	case node.EventMessage:
		k.peer = ev.From
		k.name = messageTypeOf(ev.Msg)
	case node.EventTimer:
		k.name = ev.Timer
	case node.EventApp:
		k.name = messageTypeOf(ev.Msg)
	case node.EventTransportError:
		k.peer = ev.Peer
	}
	return k
}

// messageTypeOf is m's message type, empty for an event without a
// message.
func messageTypeOf(m node.Message) string {
	if m == nil {
		return ""
	}
	return m.MessageType()
}

// keyOfFilter is the kind of the events f stops.
func keyOfFilter(f Filter) eventKey {
	switch f.Kind {
	case FilterMessage:
		return eventKey{kind: node.EventMessage, peer: f.From, name: f.Type}
	case FilterTimer:
		return eventKey{kind: node.EventTimer, name: f.Timer}
	case FilterApp:
		return eventKey{kind: node.EventApp, name: f.Type}
	case FilterTransportError:
		return eventKey{kind: node.EventTransportError, peer: f.From}
	}
	return eventKey{}
}

// escalation is an event kind whose intervention budget ran out while a
// filter or the immediate check still stopped it.
//
// The budget exists so that steering never keeps a node from healing: a
// filter reinstalled round after round must not stop an event for ever.
// Letting the event through the moment the budget is spent, though, lets
// through exactly the events steering predicted most often (on RandTree
// under churn a filter hit 322 times was overridden 1,013 times), and
// letting it through when a timer runs out does the same a little later
// (the zoo's meter and logship are violated by the one event let through
// after a 10 s hold). So a kind whose budget is spent is held — a message dropped,
// a timer, call or transport error postponed, as the filter or the check
// says — until it is safe or the hold itself threatens liveness:
//
//   - safe: a round whose snapshot completed after the escalation began
//     installs no filter that stops it, or the immediate check, on the
//     newest view, no longer vetoes it (a veto is the event itself
//     checked again at every retry). Until such a round, the escalated
//     filter stays in force even if an older round's filters replace the
//     others (it has not been re-checked yet).
//   - liveness: a round's liveness walks, with the held kinds in place as
//     filters, fail to reach a live state (Config.LiveFraction of
//     Config.Walks) where they reach one without them — without the
//     round's own filters of those kinds too (guardHolds): the holds keep
//     the neighbourhood from making progress. These walks take only what
//     is under way (no declared application call, no fault): a way out
//     that needs a client's call or a crash is not one the node is owed. Every hold is
//     released then, counted in Stats.ReleasedForLiveness. This is the
//     only early release, and it needs rounds that walk against liveness
//     properties: where none do (mode Off, walks off, a service without
//     liveness properties) a hold lasts at most UnguardedFilterHold or
//     UnguardedVetoHold.
//
// A released kind runs for one Config.InterventionWindow, counted as
// overrides, before the budget counts again. Config.FilterHold and
// Config.VetoHold, when positive, bound a hold in time as well.
type escalation struct {
	since  time.Time // when the budget ran out
	filter *Filter   // the filter that stopped the kind then (nil: a veto)
	key    eventKey
	free   time.Time // zero while held; else the kind runs until then
}

// heldByFilter reports whether e holds its kind under a filter (not a
// veto's hold, and not in its free window).
func (e *escalation) heldByFilter() bool { return e.filter != nil && e.free.IsZero() }

// Bounds of a hold when no liveness guard watches it (Controller.holdFor),
// by measurement: a filter's hold of a minute starves Paxos learners, a
// veto's hold of 10 s lets one more Paxos run violate.
const (
	UnguardedFilterHold = 10 * time.Second
	UnguardedVetoHold   = time.Minute
)

// holdFor is how long escalation e may hold its kind at most (zero: no
// bound): Config.FilterHold for a filter's, Config.VetoHold for a veto's
// when set; else no bound if the liveness guard watches the holds (the
// node's rounds walk against liveness properties), and
// UnguardedFilterHold or UnguardedVetoHold if nothing does — a hold no
// one can find harmful to liveness must not last for ever.
func (c *Controller) holdFor(e *escalation) time.Duration {
	hold, unguarded := c.cfg.FilterHold, UnguardedFilterHold
	if e.filter == nil {
		hold, unguarded = c.cfg.VetoHold, UnguardedVetoHold
	}
	if hold == 0 && !c.guarded {
		hold = unguarded
	}
	return hold
}

// setGuarded tells the gate controller whether a liveness guard watches
// its holds: its layer's rounds run (mode Debug or Steer) with walks
// against liveness properties (guardHolds).
func (c *Controller) setGuarded(on bool) { c.guarded = on }

// guards reports whether this controller's rounds guard holds.
func (c *Controller) guards() bool { return c.cfg.Mode != Off && c.walksLiveness() }

// walksLiveness reports whether this controller's rounds take liveness
// walks: it has liveness properties and Config.Walks is positive.
func (c *Controller) walksLiveness() bool { return len(c.live) > 0 && c.cfg.Walks > 0 }

// heldKinds are the kinds a gate holds, as filters at its node, for the
// round's liveness guard (guardHolds). The guard explores with them in
// place, so they must hold what the gate holds, no more and no less:
//
//   - filters: escalated filters, which stop every event of their kind
//     while held, as the model's filters do;
//   - vetoes: kinds escalated by the immediate check (filterOfKey), whose
//     events the gate holds only while the check still finds them unsafe
//     (each retry is checked again) — the walks hold an event of such a
//     kind only when handling it would make a safety property fail
//     (vetoModel), and drop a message as the veto does, breaking its
//     connection unless its type is lossy (vetoBreaks). Modelled as a plain filter, a
//     veto hold stopped every entry the zoo's logship leader shipped, not
//     just the one out of order, and the guard released it as starving.
type heldKinds struct{ filters, vetoes filterSet }

// all returns every held kind.
func (h heldKinds) all() filterSet { return append(slices.Clone(h.filters), h.vetoes...) }

// heldKinds returns the kinds held now.
func (c *Controller) heldKinds() heldKinds {
	var h heldKinds
	for _, e := range c.escalated {
		switch {
		case !e.free.IsZero():
		case e.filter != nil:
			h.filters = h.filters.with(*e.filter)
		default:
			h.vetoes = h.vetoes.with(c.vetoHoldFilter(e.key))
		}
	}
	byName := func(a, b Filter) int { return strings.Compare(a.String(), b.String()) }
	slices.SortFunc(h.filters, byName)
	slices.SortFunc(h.vetoes, byName)
	return h
}

// vetoHoldFilter is the filter that models a veto's hold of kind k at this
// node: a message is dropped as the veto drops it (vetoBreaks).
func (c *Controller) vetoHoldFilter(k eventKey) Filter {
	return filterOfKey(c.self, k, k.kind == node.EventMessage && c.vetoBreaks(k.name))
}

// releaseHolds ends every hold at now for the liveness guard: each held
// kind runs for one InterventionWindow.
func (c *Controller) releaseHolds(now time.Time) {
	for _, e := range c.escalated {
		if e.free.IsZero() {
			e.free = now.Add(c.cfg.InterventionWindow)
			c.stats.ReleasedForLiveness++
			c.version++
		}
	}
}

// filterOfKey is the filter at node self that stops the events of kind k.
func filterOfKey(self node.ID, k eventKey, brk bool) Filter {
	switch k.kind {
	case node.EventMessage:
		return Filter{Kind: FilterMessage, Node: self, From: k.peer, Type: k.name, Break: brk}
	case node.EventTimer:
		return Filter{Kind: FilterTimer, Node: self, Timer: k.name}
	case node.EventApp:
		return Filter{Kind: FilterApp, Node: self, Type: k.name}
	}
	return Filter{Kind: FilterTransportError, Node: self, From: k.peer}
}

// allow reports whether ev may still be kept from the handler under the
// intervention budget, and records the intervention if so.
func (c *Controller) allow(ev node.Event) bool {
	if c.cfg.MaxInterventions < 0 {
		return true
	}
	k := keyOf(ev)
	ts := timesAfter(c.recent[k], ev.At.Add(-c.cfg.InterventionWindow))
	if len(ts) >= c.cfg.MaxInterventions {
		c.recent[k] = ts
		return false
	}
	if c.recent == nil {
		c.recent = map[eventKey][]time.Time{}
	}
	c.recent[k] = append(ts, ev.At)
	return true
}

// timesAfter drops from ts (ascending) the times up to cut: what is left
// is within the intervention window that ends after cut.
func timesAfter(ts []time.Time, cut time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cut) {
		i++
	}
	return ts[i:]
}

// intervene decides, for an event the filter f (nil: the immediate check)
// stopped, whether it is kept from the handler: within the budget it is;
// past it the kind is escalated and held (see escalation) until a re-check
// finds it safe or the hold times out, after which it runs for a window
// (an override). It counts what it decided (retries not as new holds).
func (c *Controller) intervene(ev node.Event, f *Filter, retry bool) bool {
	k := keyOf(ev)
	e, free := c.currentEscalation(k, ev.At)
	if free {
		c.stats.Overrides++
		return false
	}
	if e == nil {
		if c.allow(ev) {
			return true
		}
		e = c.escalate(k, ev.At, f)
	}
	if c.holdSpent(e, ev.At) {
		c.stats.Overrides++
		return false
	}
	if !retry {
		c.stats.Held++
	}
	return true
}

// currentEscalation returns the escalation of kind k at time at (nil if
// none), and whether the kind is in its free window then. An escalation
// whose free window is over is ended: the budget counts again.
func (c *Controller) currentEscalation(k eventKey, at time.Time) (e *escalation, free bool) {
	e = c.escalated[k]
	if e == nil || e.free.IsZero() {
		return e, false
	}
	if at.Before(e.free) {
		return e, true
	}
	delete(c.escalated, k)
	c.version++
	return nil, false
}

// escalate starts holding kind k at time at, its budget spent, under a
// copy of filter f (nil: the immediate check's veto).
func (c *Controller) escalate(k eventKey, at time.Time, f *Filter) *escalation {
	if c.escalated == nil {
		c.escalated = map[eventKey]*escalation{}
	}
	e := &escalation{since: at, key: k}
	if f != nil {
		g := *f
		e.filter = &g
	}
	c.escalated[k] = e
	c.version++
	c.stats.Escalations++
	return e
}

// holdSpent reports whether e has held its kind as long as it may
// (holdFor) at time at; if so the kind's free window starts: liveness
// first.
func (c *Controller) holdSpent(e *escalation, at time.Time) bool {
	hold := c.holdFor(e)
	if hold <= 0 || at.Before(e.since.Add(hold)) {
		return false
	}
	e.free = at.Add(c.cfg.InterventionWindow)
	c.version++
	return true
}

// passed ends the escalation of ev's kind, if any: the filters in force and
// the immediate check let ev through, so the re-check found it safe.
func (c *Controller) passed(ev node.Event) {
	if len(c.escalated) == 0 {
		return // the common case: no key to compute
	}
	k := keyOf(ev)
	if e := c.escalated[k]; e != nil && e.free.IsZero() {
		delete(c.escalated, k)
		c.stats.Released++
		c.version++
	}
}

// InstallChecked replaces the filters in force with fs (copied), the
// filters of a round whose snapshot completed at checked (its re-check).
// An escalated kind that fs no longer stops is released if the round is
// fresh (checked after the escalation began); if it is not, the escalated
// filter stays in force beside fs until a fresh round has re-checked it.
func (c *Controller) InstallChecked(fs []Filter, checked time.Time) {
	in := filterSet(fs)
	for k, e := range c.escalated {
		if !e.heldByFilter() || in.stops(k) {
			continue
		}
		if checked.After(e.since) {
			delete(c.escalated, k)
			c.stats.Released++
			c.version++
			continue
		}
		in = append(in, *e.filter)
	}
	c.Install(in)
}

// ForgetEscalations drops every escalation: the node restarted, and a new
// process would hold none.
func (c *Controller) ForgetEscalations() { c.escalated = nil; c.version++ }

// stops reports whether a filter of fs stops events of kind k.
func (fs filterSet) stops(k eventKey) bool {
	for _, f := range fs {
		if keyOfFilter(f) == k {
			return true
		}
	}
	return false
}

// Gate decides whether ev (with ev.At set) may run on this node's handler
// now: the installed filters first, then, if immediate, the immediate
// safety check on core, and before a risky event its look-ahead
// (LookAheadConfig). It returns a verdict that handles the event, or
// what to do instead — a drop for a message (a filter's with Break under
// Config.BreakConnection, a veto's unless its type is lossy: vetoBreaks),
// a postponement by Config.PostponeDelay for a timer,
// application call or transport error — with the veto when the check
// decided. retry marks an event the caller postponed before and tries
// again: it is checked the same way but not counted as a new hit or veto.
// Every intervention is charged to the event kind's budget
// (Config.MaxInterventions); past it the kind is escalated (held until a
// re-check finds it safe, for at most the escalation hold: see
// escalation), and past that the event runs and the override is counted.
func (c *Controller) Gate(core *node.Core, ev node.Event, immediate, retry bool) (layer.Verdict, *Veto) {
	if v, i := c.filters.verdict(c.self, ev, c.cfg.PostponeDelay); !v.Handle {
		return c.filterIntervention(ev, v, i, retry), nil
	}
	var veto *Veto
	if immediate && ev.Kind != node.EventInit && ev.Kind != node.EventReset {
		veto = c.gateVeto(core, ev, retry)
	}
	if veto == nil {
		c.passed(ev)
		return layer.Verdict{Handle: true}, nil
	}
	return c.vetoIntervention(ev, veto, retry)
}

// filterIntervention is the gate's verdict on ev, which the filter in
// force i stops with verdict v: v within the intervention budget, else
// the event runs (intervene).
func (c *Controller) filterIntervention(ev node.Event, v layer.Verdict, i int, retry bool) layer.Verdict {
	if !c.intervene(ev, &c.filters[i], retry) {
		return layer.Verdict{Handle: true}
	}
	if !retry {
		c.stats.FilterHits++
	}
	return v
}

// gateVeto runs the immediate check on ev, and before a risky event its
// look-ahead, and returns the veto (nil: ev may run). An error means the
// copy's handler panicked: the real one runs and the caller surfaces the
// panic as it always does.
func (c *Controller) gateVeto(core *node.Core, ev node.Event, retry bool) *Veto {
	if !retry {
		c.stats.ImmediateChecks++
	}
	veto, err := c.immediateCheck(core, ev)
	if err == nil && veto == nil && c.risky(ev) {
		veto, err = c.lookAhead(core, ev)
	}
	if err != nil {
		return nil
	}
	return veto
}

// vetoIntervention is the gate's verdict on ev, which veto stops: within
// the intervention budget a drop for a message (vetoBreaks) or a
// postponement, else the event runs (intervene).
func (c *Controller) vetoIntervention(ev node.Event, veto *Veto, retry bool) (layer.Verdict, *Veto) {
	if !c.intervene(ev, nil, retry) {
		return layer.Verdict{Handle: true}, nil
	}
	if !retry {
		c.stats.Vetoes++
		if veto.Ahead > 0 {
			c.stats.LookAheadVetoes++
		}
	}
	if ev.Kind != node.EventMessage {
		return layer.Verdict{RetryAt: ev.At.Add(c.cfg.PostponeDelay)}, veto
	}
	return layer.Verdict{Break: c.vetoBreaks(ev.Msg.MessageType())}, veto
}

// filterBreaks reports whether a filter the node's rounds install for a
// message of type typ breaks its connection: always with
// Config.BreakConnection, else by the veto's rule (vetoBreaks) — a
// message that vanishes from a connection that stays up is a fault no
// protocol written for TCP handles, so a filter of a type the service
// does not declare lossy breaks the connection for both ends.
func (c *Controller) filterBreaks(typ string) bool { return c.vetoBreaks(typ) }

// vetoBreaks reports whether a vetoed message of type typ breaks its
// connection. A message on a connection that vanished while the
// connection stayed up is a fault no protocol written for TCP handles: the
// veto breaks the connection, both ends' services are told, and their own
// recovery runs. A type the service declares lossy (node.Delivery.Lost) is
// dropped alone — losing it is a fault the protocol handles already — and
// a datagram is never broken for (the shells hold no connection for it).
func (c *Controller) vetoBreaks(typ string) bool {
	if c.cfg.BreakConnection {
		return true
	}
	return !c.cfg.Spec.Delivery.OfType(typ).Lost
}
