package consequence

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// synState marks the first message of a connection while it is in flight
// (TCP's SYN): a reset of the receiver does not break such a connection,
// since the receiver has not established it yet, but what the endpoints'
// later incarnations do can still refuse it (see the package
// documentation, "Resets and connections"). The mark lives on the message
// itself, not on the pair of nodes, because a channel may hold messages of
// several connections one after the other: an older connection's messages
// arriving establish nothing about a newer one's.
type synState uint8

const (
	// synFresh marks the first message of a connection opened by a send.
	synFresh synState = 1 << iota
	// synOrphan: the receiver reset since; its new incarnation holds no
	// connection to the opener. If it writes to the opener first, it
	// opens its own, and this connection is refused on arrival: its
	// messages are lost and the opener gets a transport error.
	synOrphan
	// synGhost: the opener reset since. If its new incarnation writes to
	// the receiver first, the new connection replaces this one at the
	// receiver, and this one's messages are refused on arrival, telling
	// nobody (the incarnation that sent them is gone).
	synGhost

	synMask = synFresh | synOrphan | synGhost
)

// synSalt changes a channel item's contribution to the channel's hash by
// its mark, so that a channel whose first connection is still being
// opened is a different state from one carrying the same messages on an
// established connection.
var synSalt = [synMask + 1]uint64{0, 0x51ed2705ad1f9b3d, 0x2545f4914f6cdd1d, 0xd6e8feb86659fd93,
	0x9fb21c651e98df25, 0xc13fa9a902a6328f, 0x94d049bb133111eb, 0xbf58476d1ce4e5b9}

// syn returns the position and mark of the first message still in flight
// of the connection from opened to to, if that connection is not
// established yet.
func (g *GlobalState) syn(from, to node.ID) (int, synState, bool) {
	c := g.channel(from, to)
	if c == nil {
		return 0, 0, false
	}
	for k, it := range c.items {
		if it.syn != 0 {
			return k, it.syn, true
		}
	}
	return 0, 0, false
}

// markSyn adds mark to the first message at position k of the channel
// from → to, copying its items.
func (s *succ) markSyn(from, to node.ID, k int, mark synState) {
	items := slices.Clone(s.g.channel(from, to).items)
	items[k].syn |= mark
	s.setChan(from, to, items)
}

// refuse drops the messages of the connection whose first message is at
// position k of the channel from → to (what follows it: the newer
// connection it began), keeping transport errors.
func (s *succ) refuse(from, to node.ID, k int) {
	items := s.g.channel(from, to).items
	keep := slices.Clone(items[:k])
	for _, it := range items[k:] {
		if it.msg == nil {
			keep = append(keep, it)
		}
	}
	s.setChan(from, to, keep)
}

// forgetFresh removes the marks of connections nothing can refuse any
// more (fresh, with no reset left that could orphan or ghost them), so
// that states differing only in them merge.
func (s *succ) forgetFresh() {
	for _, c := range s.g.chans {
		if !slices.ContainsFunc(c.items, func(it inflight) bool { return it.syn == synFresh }) {
			continue
		}
		items := slices.Clone(c.items)
		for k := range items {
			if items[k].syn == synFresh {
				items[k].syn = 0
			}
		}
		s.setChan(c.from, c.to, items)
	}
}
