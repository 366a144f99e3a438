package consequence

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Declared delivery semantics (node.Spec.Delivery): a message whose type
// the service declares unreliable travels on its FIFO channel like any
// other, and the explorer may, within Faults.Losses, Faults.Duplicates and
// Faults.Reorders, lose it (ActLose), copy it to the channel's tail
// (ActDuplicate) or deliver it ahead of earlier messages (ActDeliverAhead).
// A model of a service that declares nothing, or with those budgets zero,
// adds no action, no state component and no hash: its states, counts and
// fingerprints are what they were before declarations existed.

// The kinds of actions on declared-unreliable messages.
const (
	// ActLose loses the message Msg at position Pos of the channel Peer →
	// Node (declared Lost; within Faults.Losses): it leaves the channel,
	// the messages behind it stay in order, nobody is told.
	ActLose ActorActionKind = ActRefuse + 1 + iota
	// ActDuplicate copies the message Msg at position Pos of the channel
	// Peer → Node to the channel's tail (declared Duplicated; within
	// Faults.Duplicates): it will arrive again, after what was sent before
	// the copy was made.
	ActDuplicate
	// ActDeliverAhead delivers the message Msg at position Pos > 0 of the
	// channel Peer → Node before the Pos messages ahead of it (within
	// Faults.Reorders): it and each of them are declared Reordered, and
	// each of them has been overtaken fewer times than its bound.
	ActDeliverAhead
)

// overSalt changes a channel item's contribution to its channel's hash by
// the number of messages that overtook it (inflight.over), which bounds
// how often it may be overtaken again.
const overSalt = 0x85ebca6b9e3779b9

// deliveryModel is the part of an ActorModel that knows the service's
// declaration; nil when the service declares nothing.
type deliveryModel struct {
	spec node.DeliverySpec
}

// newDeliveryModel returns the declaration's model, nil for none.
func newDeliveryModel(spec node.Spec) *deliveryModel {
	if !spec.Delivery.Declared() {
		return nil
	}
	return &deliveryModel{spec: spec.Delivery}
}

// deliverySpent counts the delivery faults spent along a path. Immutable;
// a state that spent none holds nil.
type deliverySpent struct {
	losses, duplicates, reorders int32
	// delays are the messages taken off the delay bound (ActDelay,
	// late.go), which need no declaration.
	delays int32
}

// spentComponent is the counters' contribution to the fingerprint: zero
// when none was spent, so that states of models without declarations keep
// their fingerprints.
func spentComponent(d *deliverySpent) node.Hash {
	if d == nil {
		return node.Hash{}
	}
	return mix(tagDelivery, uint64(d.losses), uint64(d.duplicates), node.Hash{Hi: uint64(d.reorders) | uint64(d.delays)<<32, Lo: 1})
}

// tagDelivery tags the delivery counters' component (past the tags of
// globalstate.go).
const tagDelivery = tagNodeClock + 16

// Losses returns the declared-unreliable messages lost along the path to g.
func (g *GlobalState) Losses() int {
	if g.spent == nil {
		return 0
	}
	return int(g.spent.losses)
}

// Duplicates returns the messages duplicated along the path to g.
func (g *GlobalState) Duplicates() int {
	if g.spent == nil {
		return 0
	}
	return int(g.spent.duplicates)
}

// Reorders returns the deliveries ahead of earlier messages along the path
// to g.
func (g *GlobalState) Reorders() int {
	if g.spent == nil {
		return 0
	}
	return int(g.spent.reorders)
}

// setSpent replaces the counters and updates the fingerprint.
func (s *succ) setSpent(d deliverySpent) {
	s.g.fp = xorHash(s.g.fp, spentComponent(s.g.spent))
	s.g.spent = nil
	if d != (deliverySpent{}) {
		s.g.spent = &d
	}
	s.g.fp = xorHash(s.g.fp, spentComponent(s.g.spent))
}

// spentOf returns g's counters as a value.
func spentOf(g *GlobalState) deliverySpent {
	if g.spent == nil {
		return deliverySpent{}
	}
	return *g.spent
}

// faultable reports whether the channel item may be lost, duplicated,
// overtaken or overtake: a message (not a transport error), not the first
// of its connection (a SYN mark), not in its sender's refusal window.
func faultable(it inflight) bool { return it.msg != nil && it.syn == 0 && it.win == 0 }

// sameItem reports whether two channel items are interchangeable (an
// action on either has the same successor).
func sameItem(a, b inflight) bool {
	return a.h == b.h && a.syn == b.syn && a.win == b.win && a.over == b.over
}

// appendDelivery appends the delivery faults enabled in g (after every
// other action): per channel in order, its losses, then its duplications
// (each by position, equal neighbours once), then its deliveries ahead.
func (m *ActorModel) appendDelivery(out []Action[ActorAction], g *GlobalState) []Action[ActorAction] {
	f, spent := m.opts.Faults, spentOf(g)
	lose, dup, ahead := int(spent.losses) < f.Losses, int(spent.duplicates) < f.Duplicates, int(spent.reorders) < f.Reorders
	if !lose && !dup && !ahead {
		return out
	}
	for _, c := range g.chans {
		i, ok := m.index(c.to)
		if !ok || c.from == c.to {
			continue
		}
		add := func(kind ActorActionKind, k int) {
			out = append(out, Action[ActorAction]{Node: i, Fault: true,
				Act: ActorAction{Kind: kind, Node: c.to, Peer: c.from, Msg: c.items[k].msg, Pos: int32(k)}})
		}
		for _, kind := range [...]ActorActionKind{ActLose, ActDuplicate} {
			if (kind == ActLose && !lose) || (kind == ActDuplicate && !dup) {
				continue
			}
			for k, it := range c.items {
				if m.faultableAs(kind, it) && (k == 0 || !sameItem(it, c.items[k-1])) {
					add(kind, k)
				}
			}
		}
		if ahead {
			for k := 1; k < len(c.items) && m.overtakable(c.items[k-1]); k++ {
				if m.faultableAs(ActDeliverAhead, c.items[k]) {
					add(ActDeliverAhead, k)
				}
			}
		}
	}
	return out
}

// faultableAs reports whether the item may undergo the fault kind by its
// type's declaration.
func (m *ActorModel) faultableAs(kind ActorActionKind, it inflight) bool {
	if !faultable(it) {
		return false
	}
	d := m.delivery.spec.Of(it.msg)
	switch kind {
	case ActLose:
		return d.Lost
	case ActDuplicate:
		return d.Duplicated
	}
	return d.Reordered > 0
}

// overtakable reports whether a later message may still overtake the item:
// it may be reordered and has been overtaken fewer times than its bound.
func (m *ActorModel) overtakable(it inflight) bool {
	return faultable(it) && int(it.over) < m.delivery.spec.Of(it.msg).Reordered
}

// nextDelivery carries out a delivery fault on the channel a.Peer → a.Node
// (node i is a.Node), if it is still enabled in g.
func (m *ActorModel) nextDelivery(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	if m.delivery == nil || a.Peer == a.Node {
		return nil, false
	}
	c := g.channel(a.Peer, a.Node)
	k := int(a.Pos)
	if c == nil || k < 0 || k >= len(c.items) || a.Msg == nil {
		return nil, false
	}
	it := c.items[k]
	if h, err := m.msgHash(a.Msg); err != nil || h != it.h || !m.faultableAs(a.Kind, it) {
		return nil, false
	}
	f, spent := m.opts.Faults, spentOf(g)
	s := newSucc(g)
	switch a.Kind {
	case ActLose:
		if int(spent.losses) >= f.Losses {
			return nil, false
		}
		spent.losses++
		s.setSpent(spent)
		s.setChan(a.Peer, a.Node, append(c.items[:k:k], c.items[k+1:]...))
		return s.g, true
	case ActDuplicate:
		if int(spent.duplicates) >= f.Duplicates {
			return nil, false
		}
		spent.duplicates++
		s.setSpent(spent)
		s.appendChan(a.Peer, a.Node, inflight{msg: it.msg, h: it.h})
		return s.g, true
	}
	if int(spent.reorders) >= f.Reorders || k == 0 {
		return nil, false
	}
	rest := make([]inflight, 0, len(c.items)-1)
	for _, before := range c.items[:k] {
		if !m.overtakable(before) {
			return nil, false
		}
		before.over++
		rest = append(rest, before)
	}
	rest = append(rest, c.items[k+1:]...)
	spent.reorders++
	s.setSpent(spent)
	s.setChan(a.Peer, a.Node, rest)
	if !m.intercept(ActorAction{Kind: ActDeliver, Node: a.Node, Peer: a.Peer, Msg: it.msg}).Handle {
		return s.g, true // dropped by a filter (a late message breaks nothing)
	}
	n := g.nodes[i]
	return m.run(g, s, i, n.pending, node.Event{Kind: node.EventMessage, From: a.Peer, Msg: it.msg, At: n.now})
}

// deliveryString renders the actions of this file for traces: "n2 lose
// T from n1", "n2 duplicate T from n1", "n2 deliver-ahead T from n1".
func (a ActorAction) deliveryString() (string, bool) {
	verb, ok := deliveryVerbs[a.Kind]
	if !ok {
		return "", false
	}
	if a.Msg == nil {
		return fmt.Sprintf("%v %s <nil> from %v", a.Node, verb, a.Peer), true
	}
	return fmt.Sprintf("%v %s %s from %v (position %d)", a.Node, verb, a.Msg.MessageType(), a.Peer, a.Pos), true
}

// deliveryVerbs name the kinds of this file in traces and reports.
var deliveryVerbs = map[ActorActionKind]string{
	ActLose:         "lose",
	ActDuplicate:    "duplicate",
	ActDeliverAhead: "deliver-ahead",
	ActDelay:        "delay",
}

// validateDelivery reports delivery budgets the model cannot explore.
func (f Faults) validateDelivery() error {
	for _, b := range [...]struct {
		name string
		v    int
	}{{"losses", f.Losses}, {"duplicates", f.Duplicates}, {"reorders", f.Reorders}} {
		if b.v < 0 || b.v > MaxDeliveryFaults {
			return fmt.Errorf("%w: %s budget %d, want 0..%d", ErrActorModel, b.name, b.v, MaxDeliveryFaults)
		}
	}
	return nil
}

// MaxDeliveryFaults bounds Faults.Losses, Duplicates and Reorders (each
// multiplies the branching of every state with a declared message in
// flight).
const MaxDeliveryFaults = 1 << 10
