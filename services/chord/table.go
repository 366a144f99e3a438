package chord

import (
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The routing table of a node: its successor list and its fingers. Both
// only ever hold nodes the node has heard of; learn adds a node to them
// (Mace's register_knowledge), forget removes one (Mace's error handler).

// successor is the node's successor: the head of its successor list, or
// the node itself when the list is empty (it is alone on its ring).
func (s *State) successor(self node.ID) node.ID {
	if len(s.Successors) == 0 {
		return self
	}
	return s.Successors[0]
}

// initFingers gives a node that just joined a finger table that points
// every finger at itself (no node known).
func (s *State) initFingers(self node.ID) {
	s.Fingers = make([]node.ID, s.ring.bits)
	for k := range s.Fingers {
		s.Fingers[k] = self
	}
}

// fingerCount is the number of usable fingers: a decoded state may carry
// a table of another length, which must not index the ring out of range.
func (s *State) fingerCount() int { return min(len(s.Fingers), s.ring.bits) }

// learn records that peer exists: it becomes finger k wherever it falls in
// [start_k, finger_k) (finger_k = self means no node known there), and it
// enters the successor list if the list has room or peer is nearer than
// the list's farthest entry. It reports whether the successor list changed.
func (s *State) learn(self, peer node.ID) bool {
	if peer == node.None || peer == self {
		return false
	}
	r := s.ring
	me, p := r.pos(self), r.pos(peer)
	for k := range s.fingerCount() {
		start := r.fingerStart(me, k)
		f := s.Fingers[k]
		end := me
		if f != self {
			end = r.pos(f)
		}
		if r.dist(start, p) < r.dist(start, end) {
			s.Fingers[k] = peer
		}
	}
	return s.addSuccessor(self, peer)
}

// addSuccessor inserts peer into the successor list, which stays sorted by
// clockwise distance from self and at most MaxSuccessors long.
func (s *State) addSuccessor(self, peer node.ID) bool {
	r := s.ring
	me := r.pos(self)
	d := r.dist(me, r.pos(peer))
	i := len(s.Successors)
	for j, x := range s.Successors {
		if x == peer {
			return false
		}
		if i == len(s.Successors) && d < r.dist(me, r.pos(x)) {
			i = j
		}
	}
	if i >= s.opts.MaxSuccessors {
		return false
	}
	s.Successors = append(s.Successors, node.None)
	copy(s.Successors[i+1:], s.Successors[i:])
	s.Successors[i] = peer
	if len(s.Successors) > s.opts.MaxSuccessors {
		s.Successors = s.Successors[:s.opts.MaxSuccessors]
	}
	return true
}

// forget removes peer everywhere after a transport error, as Mace's error
// handler does: the predecessor is cleared, peer leaves the successor list,
// a finger on peer falls back to the next larger finger (the last to self),
// and the successor list is refilled from the fingers. It reports whether
// peer was the predecessor.
func (s *State) forget(self, peer node.ID) bool {
	wasPred := s.Pred == peer
	if wasPred {
		s.Pred = node.None
	}
	for j, x := range s.Successors {
		if x == peer {
			s.Successors = append(s.Successors[:j], s.Successors[j+1:]...)
			break
		}
	}
	if len(s.Successors) == 0 {
		s.Successors = nil
	}
	if n := s.fingerCount(); n > 0 {
		if s.Fingers[n-1] == peer {
			s.Fingers[n-1] = self
		}
		for k := n - 2; k >= 0; k-- {
			if s.Fingers[k] == peer {
				s.Fingers[k] = s.Fingers[k+1]
			}
		}
	}
	// The predecessor, the fingers and the remaining successors are
	// learnt again so that the table they share stays filled: a successor
	// list with room holds every finger.
	s.learn(self, s.Pred)
	for _, x := range s.Successors {
		s.learn(self, x) // already listed: only the fingers can change
	}
	for k := range s.fingerCount() {
		if len(s.Successors) >= s.opts.MaxSuccessors {
			break
		}
		if f := s.Fingers[k]; f != self && f != node.None {
			s.addSuccessor(self, f)
		}
	}
	return wasPred
}

// closestPreceding returns the known node nearest before key (in the open
// interval (self, key)) among the fingers and successors, or None. A
// lookup forwarded to it gets strictly closer to key, so routing ends.
func (s *State) closestPreceding(self node.ID, key uint64) node.ID {
	r := s.ring
	me := r.pos(self)
	best, bestD := node.None, uint64(0)
	consider := func(x node.ID) {
		if x == node.None || x == self {
			return
		}
		p := r.pos(x)
		if !r.between(p, me, key) {
			return
		}
		if d := r.dist(me, p); best == node.None || d > bestD {
			best, bestD = x, d
		}
	}
	for k := range s.fingerCount() {
		consider(s.Fingers[k])
	}
	for _, x := range s.Successors {
		consider(x)
	}
	return best
}

// formatIDs renders ids as the paper writes them: [n9 n13].
func formatIDs(ids []node.ID) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(id.String())
	}
	b.WriteByte(']')
	return b.String()
}
