package consequence

import (
	"time"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
)

// DefaultClockSkew is the bound on clock skew between nodes when
// ActorOptions.ClockSkew is zero: a timer may fire while another node's
// timer due up to this much earlier is still pending. It is well above the
// offsets of clocks kept by NTP (a few to tens of milliseconds) and of the
// checkpoint times of one gathered snapshot, so orders a deployment can
// show are explored, and well below the periods and timeouts protocols
// use (a second and more), so a lease or timeout is not reported broken by
// an order no clock shows.
const DefaultClockSkew = 100 * time.Millisecond

// The virtual clock (MODIST's, after its Section 4): a node's clock moves
// to a timer's deadline when the timer fires (a deadline already past
// fires at the node's clock), and to the latest clock of the snapshot when
// it resets. Among a node's timers, only
// the ones due first may fire; across nodes, a timer may fire only if it
// is due no later than the earliest timer of the whole snapshot plus the
// skew bound. Deliveries are not constrained: network delay is unbounded,
// so a message may arrive before or after any timer.

// now returns the virtual clock of g: the latest clock of its nodes (a
// node's clock is where its last timer fired, or the snapshot's time). A
// reset happens at it, so the new incarnation arms its timers from the
// time the run has reached, not from its predecessor's last firing.
func (g *GlobalState) now() time.Time {
	var t time.Time
	for _, n := range g.nodes {
		t = latest(t, n.now)
	}
	return t
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// due is when node n's timer t fires: its deadline, or the node's clock if
// that is past.
func due(n *actorNode, t node.Timer) time.Time {
	if t.At.Before(n.now) {
		return n.now
	}
	return t.At
}

// clockSkew returns the skew bound of the virtual clock.
func (m *ActorModel) clockSkew() time.Duration {
	skew := m.opts.ClockSkew
	if skew == 0 {
		skew = DefaultClockSkew
	}
	return max(skew, 2*m.opts.TimerSkew)
}

// passes reports whether the filters let node id's timer name fire.
func (m *ActorModel) passes(id node.ID, name string) bool {
	return m.intercept(ActorAction{Kind: ActTimer, Node: id, Timer: name}).Handle
}

// earliest returns when the first timer of g that the filters let fire
// is due, if there is one (a postponed timer does not hold the others
// back).
func (m *ActorModel) earliest(g *GlobalState) (time.Time, bool) {
	first, ok := g.first, g.hasFirst
	if m.opts.Intercept != nil {
		first, ok = m.earliestFiltered(g)
	}
	if g.ext != nil && !g.ext.healAt.IsZero() && (!ok || g.ext.healAt.Before(first)) {
		// A partition's heal is due like a timer (partition.go).
		first, ok = g.ext.healAt, true
	}
	return m.timelyFirst(g, first, ok)
}

// earliestFiltered computes earliest, asking the filters.
func (m *ActorModel) earliestFiltered(g *GlobalState) (time.Time, bool) {
	var first time.Time
	found := false
	for i, n := range g.nodes {
		for _, t := range n.st.Timers {
			if d := due(n, t); (!found || d.Before(first)) && m.passes(m.ids[i], t.Name) {
				first, found = d, true
			}
		}
	}
	return first, found
}

// timerEnabled reports whether node i's timer t may fire in a state whose
// earliest timer is due at first (see the virtual clock above): it must
// be due no later than the node's other timers the filters let fire, and
// no later than first plus the skew bound.
func (m *ActorModel) timerEnabled(n *actorNode, id node.ID, t node.Timer, first time.Time) bool {
	if m.opts.AnyOrderTimers {
		return true
	}
	d := due(n, t)
	if d.After(first.Add(m.clockSkew())) {
		return false
	}
	if m.opts.Intercept == nil {
		// Every timer passes: no other timer of n is due before d
		// exactly when d is n's earliest.
		return !n.first.Before(d)
	}
	for _, u := range n.st.Timers {
		if due(n, u).Before(d) && m.passes(id, u.Name) {
			return false
		}
	}
	return true
}

// clockComponent is the virtual clock's contribution to the fingerprint:
// every timer's due time and every node's clock relative to ref (the
// earliest timer, or the latest node clock if no timer is set), so that
// states whose times are all shifted alike merge, as the XOR of one hash
// per node, so that a step of one node updates it by that node's part
// alone while ref stays put. Node clocks are part of it because they set
// the deadlines of the timers a node arms later: two states that differ
// only by one node's clock behave differently, and merging them made the
// search depend on which of the two it met first (left out, they
// merged 1-5% of the states of the RandTree and Chord
// searches and made sleep sets miss states). Zero with AnyOrderTimers.
func (m *ActorModel) clockComponent(g *GlobalState, ref time.Time) node.Hash {
	var h node.Hash
	for i, n := range g.nodes {
		h = xorHash(h, timersComponent(m.ids[i], n, ref))
	}
	if g.ext != nil {
		h = xorHash(h, healComponent(g.ext, ref))
	}
	return h
}

// clockHash computes g's clock component from scratch, from its cached
// earliest timer (g.first, g.hasFirst): relative to it, or to the latest
// node clock when no timer is set.
func (m *ActorModel) clockHash(g *GlobalState) node.Hash {
	if !g.hasFirst {
		return m.clockComponent(g, g.now())
	}
	return m.clockComponent(g, g.first)
}

// timersComponent is node id's part of the clock component.
func timersComponent(id node.ID, n *actorNode, ref time.Time) node.Hash {
	h := mix(tagNodeClock, uint64(id), uint64(n.now.Sub(ref)), node.Hash{})
	for _, t := range n.st.Timers {
		h = xorHash(h, mix(tagClock, uint64(id), uint64(due(n, t).Sub(ref)), node.Hash{Hi: nameHash(t.Name)}))
	}
	return h
}

// nameHash is FNV-1a of a timer name (its place in the clock component).
func nameHash(name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return h
}

// nodeFirstDue returns when node n's earliest timer is due, if it has one.
func nodeFirstDue(n *actorNode) (time.Time, bool) {
	var first time.Time
	found := false
	for _, t := range n.st.Timers {
		if d := due(n, t); !found || d.Before(first) {
			first, found = d, true
		}
	}
	return first, found
}

// firstDue returns when g's earliest timer is due, if it has one.
func firstDue(g *GlobalState) (time.Time, bool) {
	var first time.Time
	found := false
	for _, n := range g.nodes {
		if n.hasTimer && (!found || n.first.Before(first)) {
			first, found = n.first, true
		}
	}
	return first, found
}

// nextFirstDue returns firstDue(s.g) after node i changed from old, the
// parent's earliest timer being due at pFirst (if pHas): when old's
// timers were all due after pFirst, another node holds it and only the
// new node can come before it; otherwise every node is looked at.
func nextFirstDue(s *succ, i int, old *actorNode, pFirst time.Time, pHas bool) (time.Time, bool) {
	if old == nil || !pHas || (old.hasTimer && !old.first.After(pFirst)) {
		return firstDue(s.g)
	}
	if n := s.g.nodes[i]; n.hasTimer && n.first.Before(pFirst) {
		return n.first, true
	}
	return pFirst, true
}

// setClock updates the state's clock component and its cached earliest
// timer (without filters: a model with filters asks them instead) after
// node i changed from old (nil: the state is new).
func (m *ActorModel) setClock(s *succ, i int, old *actorNode) {
	if m.opts.AnyOrderTimers {
		return
	}
	parentFirst, parentHas := s.g.first, s.g.hasFirst
	s.g.first, s.g.hasFirst = nextFirstDue(s, i, old, parentFirst, parentHas)
	var h node.Hash
	if old != nil && parentHas && s.g.hasFirst && parentFirst.Equal(s.g.first) {
		id := m.ids[i]
		h = xorHash(xorHash(s.g.clockH, timersComponent(id, old, s.g.first)), timersComponent(id, s.g.nodes[i], s.g.first))
	} else {
		h = m.clockHash(s.g)
	}
	s.g.fp = xorHash(xorHash(s.g.fp, s.g.clockH), h)
	s.g.clockH = h
}

// enabledTimerNames hashes the names of node i's timers that may fire in
// g, for its local fingerprint: whether a timer may fire depends on the
// other nodes' timers, and consequence prediction must not prune a timer
// as explored in a state where the clock held it back.
func (m *ActorModel) enabledTimerNames(g *GlobalState, i int) node.Hash {
	n := g.nodes[i]
	if m.opts.AnyOrderTimers || len(n.st.Timers) == 0 {
		return node.Hash{}
	}
	first, ok := m.earliest(g)
	if !ok {
		return node.Hash{}
	}
	var h node.Hash
	for _, t := range n.st.Timers {
		if m.timerEnabled(n, m.ids[i], t, first) {
			r := xxh3.HashString128(t.Name)
			h = xorHash(h, mix(tagClock, 1, 0, node.Hash{Hi: r.Hi, Lo: r.Lo}))
		}
	}
	return h
}
