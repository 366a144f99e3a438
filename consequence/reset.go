package consequence

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// appendResets appends node i's reset actions, one per kind Faults
// explores, the reset with RST first.
func (m *ActorModel) appendResets(out []Action[ActorAction], i int, id node.ID) []Action[ActorAction] {
	k := m.opts.Faults.Kinds()
	if k&ResetRST != 0 {
		out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActReset, Node: id}})
	}
	if k&ResetSilent != 0 {
		out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActReset, Node: id, Silent: true}})
	}
	return out
}

// tracksSYN reports whether g's successors must know which connections
// are fresh: only a reset of their receiver tells a fresh connection from
// an established one, and only an RST reset or a faithful silent one.
func (m *ActorModel) tracksSYN(g *GlobalState) bool {
	f := m.opts.Faults
	if g.resets >= f.Resets {
		return false
	}
	return f.Kinds()&ResetRST != 0 || f.StaleConnections
}

// nextReset resets node i, within Faults.Resets, as the emulator does
// (emulation.Emulator.Reset): its restart calls become pending, and what
// was in flight to it — messages to itself, datagrams, transport errors,
// messages on established connections — is lost; what it had sent is
// still delivered. Per connection with a peer p (see the package
// documentation, "Resets and connections"):
//
//   - opened by p, its first message still on its way: it carries on, and
//     its messages reach the new incarnation (an orphan until one does);
//   - otherwise it is gone at the node; p's writes to it are lost until p
//     learns of the reset (stale), and a transport error reaches p after
//     what the node had sent it, at once with an RST, or, for a silent
//     reset, answering the messages p had in flight to the node (if any)
//     or p's next write.
//
// Without Faults.StaleConnections a silent reset instead leaves every
// connection working with the new incarnation (the over-approximation).
func (m *ActorModel) nextReset(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	n := g.nodes[i]
	if g.resets >= m.opts.Faults.Resets {
		return nil, false
	}
	id := a.Node
	pending := m.restartCalls(n, id)
	s := newSucc(g)
	s.setFaults(g.resets+1, g.breaks, g.drops)
	// Datagrams in flight to the node arrive at no one: lost, with or
	// without RST (a datagram does not outlive its receiver's reset).
	for _, d := range g.dgrams {
		if d.to == id {
			s.setDgrams(d.from, d.to, nil)
		}
	}
	s.setChan(id, id, nil) // sent to an incarnation that is gone
	s.clearStaleOf(id)
	keep := a.Silent && !m.opts.Faults.StaleConnections
	for _, c := range g.chans {
		if keep || c.from == id {
			continue
		}
		if k, _, ok := g.syn(c.from, id); ok {
			if c.to == id {
				// The SYN finds the new incarnation; what came before it
				// on an older connection is lost.
				s.setChan(c.from, id, c.items[k:])
				s.markSyn(c.from, id, 0, synOrphan)
			}
			continue
		}
		if c.to == id && !g.Connected(c.from, id) {
			// Transport errors (and refused writes they answer) about a
			// connection of the old incarnation.
			s.setChan(c.from, id, nil)
		}
	}
	if !keep {
		for _, c := range g.chans {
			if c.from == id && c.to != id {
				if k, _, ok := g.syn(id, c.to); ok {
					s.markSyn(id, c.to, k, synGhost)
				}
			}
		}
		for _, p := range peersOf(g.conns, id) {
			m.resetConn(g, s, id, p, a.Silent)
		}
	}
	if !m.tracksSYN(s.g) {
		s.forgetFresh()
	}
	return m.run(g, s, i, pending, node.Event{Kind: node.EventReset, At: n.now})
}

// resetConn applies node id's reset to its connection with p (see
// nextReset).
func (m *ActorModel) resetConn(g *GlobalState, s *succ, id, p node.ID, silent bool) {
	if _, _, ok := g.syn(p, id); ok {
		return // p's connection, not established at the node yet
	}
	c := g.channel(p, id)
	answered := c != nil && slices.ContainsFunc(c.items, func(it inflight) bool { return it.msg != nil })
	s.disconnect(id, p)
	s.setChan(p, id, nil)
	// One transport error per connection: one already queued is about an
	// older connection.
	switch {
	case !silent:
		s.appendChan(id, p, inflight{h: teHash})
	case answered:
		// The RST answers p's first message to arrive.
		s.appendChan(id, p, lateTE)
	}
	s.markStale(p, id)
}

// peersOf returns the other ends of id's connections among conns.
func peersOf(conns []connKey, id node.ID) []node.ID {
	var out []node.ID
	for _, c := range conns {
		switch id {
		case c.lo:
			out = append(out, c.hi)
		case c.hi:
			out = append(out, c.lo)
		}
	}
	return out
}

// nextBreak breaks the connection between a.Node and a.Peer, within
// Faults.Breaks, as emulation.Emulator.BreakConnection does: what is in
// flight both ways is lost, both ends get a transport error, and each
// end's writes until its transport error arrives are lost.
func (m *ActorModel) nextBreak(g *GlobalState, a ActorAction) (*GlobalState, bool) {
	if g.breaks >= m.opts.Faults.Breaks || !g.Connected(a.Node, a.Peer) {
		return nil, false
	}
	s := newSucc(g)
	s.setFaults(g.resets, g.breaks+1, g.drops)
	s.breakConn(a.Node, a.Peer)
	return s.g, true
}

// breakConn breaks the connection between a and b: the messages in flight
// both ways are lost, and each end gets a transport error and holds a
// stale connection until it arrives — a filter breaking the connection of
// the node it filters for tells that node too, as the shells do, so both
// ends' failure handling runs. Transport errors already on their way are
// about older connections: they stay.
func (s *succ) breakConn(a, b node.ID) {
	s.markStale(a, b)
	s.setChan(b, a, append(s.g.cut(b, a), inflight{h: teHash}))
	s.setChan(a, b, append(s.g.cut(a, b), inflight{h: teHash}))
	s.markStale(b, a)
	s.disconnect(a, b)
}

// cut returns a copy of the channel from → to without the messages of the
// open connection: those after the last transport error (which ended an
// older connection) or from the first message of a connection still being
// opened. What older connections carry is not the open one's to lose.
func (g *GlobalState) cut(from, to node.ID) []inflight {
	c := g.channel(from, to)
	if c == nil {
		return nil
	}
	start := 0
	for k, it := range c.items {
		if it.msg == nil || it.syn != 0 {
			start = k
			if it.msg == nil {
				start++
			}
		}
	}
	out := slices.Clone(c.items[:start])
	for _, it := range c.items[start:] {
		if it.msg == nil {
			out = append(out, it)
		}
	}
	return out
}
