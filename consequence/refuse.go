package consequence

import (
	"cmp"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// winSalt changes a channel item's contribution to the channel's hash when
// the item is in its sender's refusal window, by its position there (an
// odd multiplier keeps the 255 positions apart): a state in which a
// message may still be refused has a future that one where it may not
// lacks, so the two must not merge. Items outside every window hash as
// they always did, so a service that never calls TrySend explores the
// same states.
const winSalt = 0x3c6ef372fe94f82b

// maxWindow is the longest refusal window: TrySends of one step past it
// are not refusable (an under-approximation no service near it should
// meet).
const maxWindow = 255

// canRefuse reports whether g's successors may still refuse a send: only
// then do the messages a step sends with TrySend join its window.
func (m *ActorModel) canRefuse(g *GlobalState) bool {
	return int(g.refusals) < m.opts.Faults.Refusals
}

// appendRefusals appends an ActRefuse for every distinct message (by hash)
// of each channel's part of a refusal window, channels in order: a local
// action and a fault of the sender. Equal messages on one channel's part
// are one action, which refuses the first of them (the future of refusing
// a later one is a part of it: the earlier stays in the window).
func (m *ActorModel) appendRefusals(out []Action[ActorAction], g *GlobalState) []Action[ActorAction] {
	for _, c := range g.chans {
		if c.window == 0 {
			continue
		}
		i, ok := m.index(c.from)
		if !ok {
			continue
		}
		for k, it := range c.items {
			if it.win == 0 || slices.ContainsFunc(c.items[:k], func(x inflight) bool { return x.win != 0 && x.h == it.h }) {
				continue
			}
			out = append(out, Action[ActorAction]{Node: i, Local: true, Fault: true,
				Act: ActorAction{Kind: ActRefuse, Node: c.from, Peer: c.to, Msg: it.msg}})
		}
	}
	return out
}

// nextRefuse refuses, within Faults.Refusals, the first message equal to
// a.Msg in node i's refusal window on the channel a.Node → a.Peer: it
// leaves the channel (what follows it stays, in order) and the sender
// runs node.EventSendRefused. A shell reports the refusals of one step in
// the order the messages were sent, before any other event of the sender:
// what the window holds after the refused message stays refusable (ahead
// of what the refusal's handler sends), what it holds before it no longer
// is. A message that opened its connection hands that mark to the next
// message behind it, so the connection is still being opened.
func (m *ActorModel) nextRefuse(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	if !m.canRefuse(g) || a.Msg == nil {
		return nil, false
	}
	c := g.channel(a.Node, a.Peer)
	if c == nil || c.window == 0 {
		return nil, false
	}
	h, err := m.msgHash(a.Msg)
	if err != nil {
		return nil, false
	}
	k := slices.IndexFunc(c.items, func(it inflight) bool { return it.win != 0 && it.h == h })
	if k < 0 {
		return nil, false
	}
	refused := c.items[k]
	items := append(slices.Clone(c.items[:k]), c.items[k+1:]...)
	if refused.syn != 0 {
		if next := slices.IndexFunc(items[k:], func(it inflight) bool { return it.msg != nil }); next >= 0 {
			items[k+next].syn |= refused.syn
		}
	}
	s := newSucc(g)
	s.setChan(a.Node, a.Peer, items)
	s.setAllFaults(g.resets, g.breaks, g.drops, int(g.refusals)+1)
	if m.canRefuse(s.g) {
		s.shiftWindow(a.Node, refused.win)
	} else {
		s.forgetWindows()
	}
	n := g.nodes[i]
	return m.run(g, s, i, n.pending, node.Event{Kind: node.EventSendRefused, Peer: a.Peer, Msg: refused.msg, At: n.now})
}

// senderChans returns the position of the first channel from id in s.g.
func (s *succ) senderChans(id node.ID) int {
	k, _ := slices.BinarySearchFunc(s.g.chans, id, func(c *channel, f node.ID) int { return cmp.Compare(c.from, f) })
	return k
}

// clearWindow empties id's refusal window: id is stepping, and a shell
// refuses a send only before the sender's next event.
func (s *succ) clearWindow(id node.ID) { s.shiftWindow(id, maxWindow) }

// shiftWindow takes the first n messages out of id's refusal window and
// moves the rest up by n, so that equal windows hash alike however they
// came about.
func (s *succ) shiftWindow(id node.ID, n uint8) {
	for k := s.senderChans(id); k < len(s.g.chans) && s.g.chans[k].from == id; k++ {
		c := s.g.chans[k]
		if c.window == 0 {
			continue
		}
		items := slices.Clone(c.items)
		for j := range items {
			if items[j].win <= n {
				items[j].win = 0
			} else {
				items[j].win -= n
			}
		}
		s.setChan(c.from, c.to, items)
	}
}

// windowLen returns the length of id's refusal window: its last position.
func (s *succ) windowLen(id node.ID) uint8 {
	var n uint8
	for k := s.senderChans(id); k < len(s.g.chans) && s.g.chans[k].from == id; k++ {
		if c := s.g.chans[k]; c.window > 0 {
			for _, it := range c.items {
				n = max(n, it.win)
			}
		}
	}
	return n
}

// forgetWindows empties every refusal window: the budget is spent, and
// states that differ only in what could have been refused merge.
func (s *succ) forgetWindows() {
	for k := 0; k < len(s.g.chans); k++ {
		if c := s.g.chans[k]; c.window > 0 {
			items := slices.Clone(c.items)
			for j := range items {
				items[j].win = 0
			}
			s.setChan(c.from, c.to, items)
		}
	}
}

// windowFingerprint mixes node i's refusal window — its outgoing channels
// holding one, by content — and the refusals spent into its local
// fingerprint h, so that consequence prediction expands a refusal whenever
// the node has a new message to refuse. Without a window and with no
// refusal spent it returns h unchanged.
func (m *ActorModel) windowFingerprint(g *GlobalState, i int, h node.Hash) node.Hash {
	id := m.ids[i]
	k, _ := slices.BinarySearchFunc(g.chans, id, func(c *channel, f node.ID) int { return cmp.Compare(c.from, f) })
	for ; k < len(g.chans) && g.chans[k].from == id; k++ {
		if c := g.chans[k]; c.window > 0 {
			h = xorHash(h, mix(tagWindow, uint64(c.to), 0, c.hash))
		}
	}
	if g.refusals > 0 {
		h = mix(tagRefusals, uint64(g.refusals), 0, h)
	}
	return h
}
