package pastry

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// onJoin routes a Join one hop toward the node numerically closest to the
// joiner, or answers it when this node is that node. A node that is not
// joined cannot route and drops the Join: the joiner retries.
//
// The bug (MaceMC §1): a node that resets and rejoins with the same
// identifier before the others purged its entry is, to them, the node
// closest to its own identifier — its old entry is still in their leaf
// sets, kept alive because the new incarnation answers probes. Its Join is
// therefore routed to itself, unjoined, which drops it; every retry ends
// the same way. The correction (FixRapidRejoin) never routes a Join to its
// joiner and drops the joiner's entry on the way: a node that asks to join
// is not a member, whatever an older incarnation was.
func (s *State) onJoin(env node.Env, m Join) {
	self := env.Self()
	if s.Status != StatusJoined || m.Joiner == node.None || m.Joiner == self {
		return
	}
	if s.opts.FixRapidRejoin && s.knows(m.Joiner) {
		s.purge(self, m.Joiner)
	}
	if m.Hops < 0 || m.Hops >= s.maxHops() {
		return
	}
	key := s.sp.pos(m.Joiner)
	fwd := Join{Joiner: m.Joiner, Hops: m.Hops + 1, Seen: s.routeSeen(self, key, s.maxSeen(m.Seen))}
	next := s.nextHop(self, key, m.Joiner)
	if next != self {
		env.SendDatagram(next, fwd)
		return
	}
	env.SendDatagram(m.Joiner, JoinReply{Leaves: addSorted(s.leaves(), self), Seen: fwd.Seen})
}

// routeSeen returns seen with this node and its routing-table row for key
// (the row of the prefix they share) added, ascending. seen is not
// modified.
func (s *State) routeSeen(self node.ID, key uint64, seen []node.ID) []node.ID {
	out := addSorted(slices.Clone(seen), self)
	if r := s.sp.prefix(s.sp.pos(self), key); r < s.sp.digits && len(s.Table) == s.sp.digits*s.sp.cols() {
		out = addSorted(out, s.Table[r*s.sp.cols():(r+1)*s.sp.cols()]...)
	}
	return out
}

// nextHop is Pastry's routing rule for key: within the leaf set's range,
// the numerically closest of the leaf set and self; otherwise the routing
// table entry that shares one more digit with key; otherwise (the rare
// case) any known node that shares as long a prefix with key and is
// numerically closer than self. It returns self when no node is closer.
// With the correction the joiner is never a candidate.
func (s *State) nextHop(self node.ID, key uint64, joiner node.ID) node.ID {
	skip := func(x node.ID) bool { return x == node.None || s.opts.FixRapidRejoin && x == joiner }
	if s.inLeafRange(self, key) {
		best := self
		for _, x := range s.Left {
			if !skip(x) && s.sp.closer(key, x, best) {
				best = x
			}
		}
		for _, x := range s.Right {
			if !skip(x) && s.sp.closer(key, x, best) {
				best = x
			}
		}
		return best
	}
	r := s.sp.prefix(s.sp.pos(self), key)
	if r < s.sp.digits && len(s.Table) == s.sp.digits*s.sp.cols() {
		if e := s.Table[r*s.sp.cols()+s.sp.digit(key, r)]; !skip(e) {
			return e
		}
	}
	best := self
	for _, x := range s.known() {
		if !skip(x) && s.sp.prefix(s.sp.pos(x), key) >= r && s.sp.closer(key, x, best) {
			best = x
		}
	}
	return best
}
