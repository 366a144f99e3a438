package pastry

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The failure detector: every ProbeInterval a joined node probes every
// node it knows; a node that left MissLimit probes in a row unanswered is
// purged at the next round, and a side of the leaf set that lost a node
// is repaired by asking the farthest remaining leaf on that side for its
// leaf set. A node that does not know its bootstrap (any more) announces
// itself to it every round.

// probeRound purges the nodes that stopped answering, probes the others,
// and repairs the leaf set.
func (s *State) probeRound(env node.Env) {
	self := env.Self()
	var lostLeft, lostRight bool
	known := s.known()
	for _, x := range known {
		if s.missCount(x) >= s.opts.MissLimit {
			l, r := s.purge(self, x)
			lostLeft, lostRight = lostLeft || l, lostRight || r
		}
	}
	leaves := s.leaves()
	for _, x := range known {
		if !s.knows(x) {
			continue // purged above
		}
		env.SendDatagram(x, Probe{Leaves: leaves})
		s.missed(x)
	}
	if s.Bootstrap != self && s.Bootstrap != node.None && !s.knows(s.Bootstrap) {
		// The bootstrap was purged (it was down) or is not in the table:
		// announce to it, as Chord's recovery lookup does, so that a
		// restarted bootstrap, which formed an overlay of its own, and
		// a node that purged everyone it knew are merged back.
		s.announce(env, s.Bootstrap)
	}
	var asked node.ID
	if lostLeft && len(s.Left) > 0 {
		asked = s.Left[len(s.Left)-1]
		s.announce(env, asked)
	}
	if lostRight && len(s.Right) > 0 {
		if far := s.Right[len(s.Right)-1]; far != asked {
			s.announce(env, far)
		}
	}
}

// missCount is the number of unanswered probes to x.
func (s *State) missCount(x node.ID) int {
	if i, ok := s.missIndex(x); ok {
		return s.Misses[i].Count
	}
	return 0
}

func (s *State) missIndex(x node.ID) (int, bool) {
	return slices.BinarySearchFunc(s.Misses, x, func(m Miss, id node.ID) int {
		switch {
		case m.Peer < id:
			return -1
		case m.Peer > id:
			return 1
		}
		return 0
	})
}

// missed counts one more unanswered probe to x.
func (s *State) missed(x node.ID) {
	i, ok := s.missIndex(x)
	if ok {
		s.Misses[i].Count++
		return
	}
	s.Misses = slices.Insert(s.Misses, i, Miss{Peer: x, Count: 1})
}

// answered clears x's unanswered probes: it is alive.
func (s *State) answered(x node.ID) {
	if i, ok := s.missIndex(x); ok {
		s.Misses = slices.Delete(s.Misses, i, i+1)
		if len(s.Misses) == 0 {
			s.Misses = nil
		}
	}
}

// dropMisses forgets the probe counts of nodes the node no longer knows.
func (s *State) dropMisses(self node.ID) {
	if len(s.Misses) == 0 {
		return
	}
	s.Misses = slices.DeleteFunc(s.Misses, func(m Miss) bool { return m.Peer == self || !s.knows(m.Peer) })
	if len(s.Misses) == 0 {
		s.Misses = nil
	}
}
