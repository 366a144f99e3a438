package tool

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// maxGraphNodes bounds the nodes of a replayed path whose event graph is
// drawn: building it scans every channel of a step's node, per step.
const maxGraphNodes = 64

// edge is one causal edge of an event graph: from step From (0: the start
// state, e.g. a message already in flight in a snapshot) to step To.
type edge struct {
	From, To int
	// Kind is "message", "datagram", "transport-error", "timer" or
	// "refused" (from the send to the sender's refusal); Label the message
	// type or timer name.
	Kind, Label string
	// Dropped marks a datagram dropped rather than delivered.
	Dropped bool
}

// eventGraph is MaceMC's event graph of a timeline: which step caused
// which — a send to the step that delivers it, a timer's setting to its
// firing.
type eventGraph struct {
	edges []edge
	// lost counts, per step, the messages in flight that the step cut
	// (a reset or a break).
	lost map[int]int
}

// sentBy is a message in flight with the step that sent it.
type sentBy struct {
	step int
	key  string // datagrams: the message's canonical body, to match equal ones
}

// graphOf builds tl's event graph once. For a replayed path, sends are
// read off the channels: a step's new messages on a channel are its sends,
// matched to deliveries in FIFO order per channel, and datagrams by equal
// message (the first unmatched equal one sent); timers are matched to the
// latest step that set them. An emulation trace uses the sends its lines
// record, matched the same way.
func (tl *timeline) graphOf() (*eventGraph, error) {
	if tl.graph != nil {
		return tl.graph, nil
	}
	if tl.m != nil && len(tl.nodes) > maxGraphNodes {
		return nil, fmt.Errorf("an event graph of a model of %d nodes: at most %d (each step scans every channel of its node)", len(tl.nodes), maxGraphNodes)
	}
	var g *eventGraph
	var err error
	if tl.m == nil {
		g = traceGraph(tl)
	} else if g, err = modelGraph(tl); err != nil {
		return nil, err
	}
	tl.graph = g
	return g, nil
}

// chanKey is a directed channel.
type chanKey struct{ from, to node.ID }

// graphBuilder holds what modelGraph tracks between steps.
type graphBuilder struct {
	tl     *timeline
	g      *eventGraph
	chans  map[chanKey][]sentBy // FIFO channels
	dgrams map[chanKey][]sentBy // datagram multisets
}

// modelGraph builds the event graph of a replayed path from its states.
func modelGraph(tl *timeline) (*eventGraph, error) {
	b := &graphBuilder{tl: tl, g: &eventGraph{lost: map[int]int{}}, chans: map[chanKey][]sentBy{}, dgrams: map[chanKey][]sentBy{}}
	tm := b.trackStart()
	for i := 1; i <= len(tl.steps); i++ {
		if err := b.step(i, tm); err != nil {
			return nil, err
		}
	}
	return b.g, nil
}

// trackStart tracks what is in flight in the start state (sent by "step
// 0") and returns the timers set there.
func (b *graphBuilder) trackStart() map[timerKey]int {
	start := b.tl.states[0]
	tm := map[timerKey]int{}
	for _, id := range b.tl.nodes {
		for _, from := range b.tl.nodes {
			b.reconcile(0, start, chanKey{from, id})
		}
		if st, _, ok := start.NodeState(id); ok {
			for _, t := range st.Timers {
				tm[timerKey{id, t.Name}] = 0
			}
		}
	}
	return tm
}

// step adds the edges into step i (a delivery's, a timer's) and tracks
// what it sent, set and cut; tm holds the step that set each timer.
func (b *graphBuilder) step(i int, tm map[timerKey]int) error {
	s := b.tl.steps[i-1]
	after := b.tl.states[i]
	if err := b.deliver(i, s); err != nil {
		return err
	}
	if from, ok := tm[timerKey{s.node, s.msg}]; ok && s.kind == "timer" {
		b.g.edges = append(b.g.edges, edge{From: from, To: i, Kind: "timer", Label: s.msg})
	}
	timerChanges(tm, b.tl.states[i-1], after, s, i)
	for _, other := range b.tl.nodes {
		b.reconcile(i, after, chanKey{s.node, other})
		b.reconcile(i, after, chanKey{other, s.node})
	}
	return nil
}

// timerKey is one node's timer.
type timerKey struct {
	node node.ID
	name string
}

// timerChanges records in tm the timers step i (step s) set on its node:
// those scheduled after it that were not before, moved, or fired by it
// and scheduled again; those it cancelled are forgotten.
func timerChanges(tm map[timerKey]int, before, after *consequence.GlobalState, s tstep, i int) {
	old, _, _ := before.NodeState(s.node)
	cur, _, ok := after.NodeState(s.node)
	if !ok {
		return
	}
	was := map[string]node.Timer{}
	for _, t := range old.Timers {
		was[t.Name] = t
	}
	now := map[string]bool{}
	for _, t := range cur.Timers {
		now[t.Name] = true
		if timerSetBy(s, was, t) {
			tm[timerKey{s.node, t.Name}] = i
		}
	}
	for name := range was {
		if !now[name] {
			delete(tm, timerKey{s.node, name})
		}
	}
}

// timerSetBy reports whether step s set timer t of its node, scheduled
// after it: t was not scheduled before (was), moved, or fired and was
// scheduled again.
func timerSetBy(s tstep, was map[string]node.Timer, t node.Timer) bool {
	w, ok := was[t.Name]
	return !ok || !w.At.Equal(t.At) || (s.kind == "timer" && s.msg == t.Name)
}

// deliver adds the edge of a delivery (or datagram drop, or refused send)
// at step i.
func (b *graphBuilder) deliver(i int, s tstep) error {
	switch s.kind {
	case "deliver", "transport-error":
		b.deliverMessage(i, s)
	case "deliver-datagram", "drop-datagram":
		return b.deliverDatagram(i, s)
	case "refuse-send":
		b.refuse(i, s)
	}
	return nil
}

// deliverMessage adds the edge of step i (s) delivering the first
// message in flight on its channel (or a transport error), from the step
// that sent it, and takes the message off the channel.
func (b *graphBuilder) deliverMessage(i int, s tstep) {
	c := chanKey{s.peer, s.node}
	q := b.chans[c]
	if len(q) == 0 {
		return // not traceable (a state restored without its senders)
	}
	kind := "message"
	if s.kind == "transport-error" {
		kind = "transport-error"
	}
	b.g.edges = append(b.g.edges, edge{From: q[0].step, To: i, Kind: kind, Label: s.msg})
	b.chans[c] = q[1:]
}

// deliverDatagram adds the edge of step i (s) delivering or dropping a
// datagram, from the step that sent the first equal one tracked, and
// forgets that one.
func (b *graphBuilder) deliverDatagram(i int, s tstep) error {
	c := chanKey{s.peer, s.node}
	key, err := b.datagramKey(i)
	if err != nil {
		return err
	}
	q := b.dgrams[c]
	for k, e := range q {
		if e.key == key {
			b.g.edges = append(b.g.edges, edge{From: e.step, To: i, Kind: "datagram", Label: s.msg, Dropped: s.kind == "drop-datagram"})
			b.dgrams[c] = append(q[:k:k], q[k+1:]...)
			break
		}
	}
	return nil
}

// refuse adds the edge of the send that step i (step s) refused, from the
// step that sent it, and forgets the message: the first position where
// the channel s.node → s.peer differs from before the step.
func (b *graphBuilder) refuse(i int, s tstep) {
	c := chanKey{s.node, s.peer}
	before, after := b.tl.states[i-1].InFlight(s.node, s.peer), b.tl.states[i].InFlight(s.node, s.peer)
	k := 0
	for k < len(after) && k < len(before) && messageKey(b.tl.m, before[k].Msg) == messageKey(b.tl.m, after[k].Msg) {
		k++
	}
	q := b.chans[c]
	if k >= len(q) || len(after) != len(before)-1 {
		return // not traceable
	}
	b.g.edges = append(b.g.edges, edge{From: q[k].step, To: i, Kind: "refused", Label: s.msg})
	b.chans[c] = append(q[:k:k], q[k+1:]...)
}

// datagramKey is the canonical body of the datagram step i delivers or
// drops.
func (b *graphBuilder) datagramKey(i int) (string, error) {
	// The step's record is not kept; the message is found again as the
	// one datagram of its sender that the step removed.
	before, after := b.tl.states[i-1], b.tl.states[i]
	s := b.tl.steps[i-1]
	gone := multisetMinus(b.tl.m, before.Datagrams(s.peer, s.node), after.Datagrams(s.peer, s.node))
	if len(gone) == 0 {
		return "", nil
	}
	return gone[0], nil
}

// reconcile brings the tracked messages of channel c in line with state g
// after step i: new ones were sent by step i, missing ones (beyond a
// delivery, already taken) were cut by it.
func (b *graphBuilder) reconcile(i int, g *consequence.GlobalState, c chanKey) {
	n := len(g.InFlight(c.from, c.to))
	q := b.chans[c]
	switch {
	case n > len(q):
		for k := len(q); k < n; k++ {
			q = append(q, sentBy{step: i})
		}
	case n < len(q):
		b.g.lost[i] += len(q) - n
		q = q[len(q)-n:]
	}
	b.chans[c] = q
	b.reconcileDatagrams(i, g, c)
}

// reconcileDatagrams is reconcile for the datagram multiset of c.
func (b *graphBuilder) reconcileDatagrams(i int, g *consequence.GlobalState, c chanKey) {
	cur := g.Datagrams(c.from, c.to)
	q := b.dgrams[c]
	if len(cur) == len(q) {
		return
	}
	keys := make([]string, 0, len(cur))
	for _, e := range cur {
		keys = append(keys, messageKey(b.tl.m, e.Msg))
	}
	var kept []sentBy
	for _, e := range q { // keep the tracked ones still there
		if countOf(keys, e.key) > countIn(kept, e.key) {
			kept = append(kept, e)
		}
	}
	for _, k := range keys {
		if countIn(kept, k) < countOf(keys, k) {
			kept = append(kept, sentBy{step: i, key: k})
		}
	}
	b.dgrams[c] = kept
}

func countOf(keys []string, k string) int {
	n := 0
	for _, x := range keys {
		if x == k {
			n++
		}
	}
	return n
}

func countIn(q []sentBy, k string) int {
	n := 0
	for _, x := range q {
		if x.key == k {
			n++
		}
	}
	return n
}

// multisetMinus returns the keys of the envelopes of a missing from b.
func multisetMinus(m *consequence.ActorModel, a, b []node.Envelope) []string {
	left := map[string]int{}
	for _, e := range b {
		left[messageKey(m, e.Msg)]++
	}
	var out []string
	for _, e := range a {
		k := messageKey(m, e.Msg)
		if left[k] > 0 {
			left[k]--
			continue
		}
		out = append(out, k)
	}
	return out
}

// messageKey is a message's type and canonical encoding: equal messages,
// equal keys.
func messageKey(m *consequence.ActorModel, msg node.Message) string {
	if msg == nil {
		return ""
	}
	r, err := m.Record(consequence.ActorAction{Kind: consequence.ActDeliverDatagram, Msg: msg})
	if err != nil {
		return msg.MessageType() + " " + fmt.Sprint(msg)
	}
	return r.Type + " " + string(r.Body)
}
