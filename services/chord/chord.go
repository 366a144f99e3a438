package chord

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timer names.
const (
	// TimerJoin re-sends the join lookup to the bootstrap while joining.
	TimerJoin = "join"
	// TimerStabilize periodically asks the successor for its predecessor.
	TimerStabilize = "stabilize"
	// TimerFixFingers periodically looks up one random finger.
	TimerFixFingers = "fix-fingers"
	// TimerRecovery periodically looks the node's own identifier up through
	// its bootstrap, which reconnects rings that formed apart.
	TimerRecovery = "recovery"
)

// Status is where a node stands in joining the ring.
type Status uint8

const (
	// StatusInit: started (or reset) and not yet asked to join.
	StatusInit Status = iota
	// StatusJoining: sent its join lookup, waiting for a FindPredReply.
	StatusJoining
	// StatusJoined: on a ring, possibly alone.
	StatusJoined
)

// String returns "init", "joining" or "joined".
func (s Status) String() string {
	switch s {
	case StatusInit:
		return "init"
	case StatusJoining:
		return "joining"
	case StatusJoined:
		return "joined"
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// State is the service state of one Chord node; it implements node.Service
// and node.Cloner. Its exported fields are the node state that is
// checkpointed and hashed. The configuration is unexported and comes from
// the factory (NewSpec); ring positions are computed from it, not stored.
//
// Callers other than the runtimes (properties, the CLI) must treat a State
// they did not create as read-only.
type State struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`

	// Init does nothing: a node starts (and restarts after a reset) in
	// StatusInit until the application asks it to join.
	node.NopHandlers

	// Status is the node's join status.
	Status Status
	// Bootstrap is the node the JoinOverlay call named (the node itself
	// when it formed its own ring); None before the call.
	Bootstrap node.ID
	// Pred is the node's predecessor: itself when it is alone on its ring,
	// None when unknown (before joining, or after a transport error from
	// it).
	Pred node.ID
	// Successors is the successor list: the nearest known nodes clockwise,
	// nearest first, at most Options.MaxSuccessors, never the node itself;
	// nil when empty, and then the node is its own successor.
	Successors []node.ID
	// Fingers is the finger table once joined (nil before): finger k is the
	// first known node at or after the node's position + 2^k and before
	// the node itself, or the node itself when none is known.
	Fingers []node.ID

	opts Options
	ring ring
}

var (
	_ node.Service    = (*State)(nil)
	_ node.Cloner     = (*State)(nil)
	_ node.Neighborer = (*State)(nil)
)

// newState returns a node in StatusInit with the given configuration.
func newState(opts Options) *State { return &State{opts: opts, ring: newRing(opts)} }

// Options returns the configuration the node runs with.
func (s *State) Options() Options { return s.opts }

// RingID returns the ring identifier of node id under the node's options.
func (s *State) RingID(id node.ID) uint64 { return s.ring.pos(id) }

// Successor returns the node's successor: the head of its successor list,
// or self when the list is empty.
func (s *State) Successor(self node.ID) node.ID { return s.successor(self) }

// Clone implements node.Cloner: a deep copy sharing no memory with s.
func (s *State) Clone() node.Service {
	c := *s
	if n := len(s.Successors) + len(s.Fingers); n > 0 {
		// One backing array for both tables, each window capped so that
		// growing one reallocates it rather than overwriting the other.
		buf := make([]node.ID, 0, n)
		c.Successors, buf = carve(buf, s.Successors)
		c.Fingers, _ = carve(buf, s.Fingers)
	}
	return &c
}

// carve appends src to buf and returns the appended window, capped at its
// length (nil for an empty src), and the grown buf.
func carve(buf, src []node.ID) (window, rest []node.ID) {
	if len(src) == 0 {
		return nil, buf
	}
	start := len(buf)
	buf = append(buf, src...)
	return buf[start:len(buf):len(buf)], buf
}

// Neighbors implements node.Neighborer: the predecessor, the successors and
// the fingers, ascending, without self — the nodes whose states the
// properties of this node relate it to.
func (s *State) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	add := func(id node.ID) {
		if id == node.None || id == self {
			return
		}
		if i, ok := slices.BinarySearch(out, id); !ok {
			out = slices.Insert(out, i, id)
		}
	}
	add(s.Pred)
	for _, x := range s.Successors {
		add(x)
	}
	for k := range s.fingerCount() {
		add(s.Fingers[k])
	}
	return out
}

// String renders the state on one line for traces and the CLI, e.g.
// "joined pred=n2 successors=[n4 n1] fingers=[n4 n1 n3] bootstrap=n1":
// the finger table in finger order with runs of equal fingers collapsed
// (fingers that point at the node itself included), absent before joining.
func (s *State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v pred=%v successors=%s", s.Status, s.Pred, formatIDs(s.Successors))
	if s.Fingers != nil {
		fmt.Fprintf(&b, " fingers=%s", formatIDs(s.fingerRuns()))
	}
	fmt.Fprintf(&b, " bootstrap=%v", s.Bootstrap)
	return b.String()
}

// fingerRuns is the finger table with consecutive repeats collapsed.
func (s *State) fingerRuns() []node.ID {
	var out []node.ID
	for _, f := range s.Fingers {
		if len(out) == 0 || out[len(out)-1] != f {
			out = append(out, f)
		}
	}
	return out
}

// HandleApp implements node.Service: JoinOverlay starts joining. Other calls
// are ignored.
func (s *State) HandleApp(env node.Env, call node.Message) {
	c, ok := call.(JoinOverlay)
	if !ok || s.Status != StatusInit {
		return
	}
	self := env.Self()
	s.Bootstrap = c.Bootstrap
	if s.Bootstrap == node.None {
		s.Bootstrap = self
	}
	if s.Bootstrap == self {
		// The first node: a ring of its own, its own predecessor and
		// successor.
		s.Status = StatusJoined
		s.Pred = self
		s.Successors = nil
		s.initFingers(self)
		s.armMaintenance(env)
		return
	}
	s.Status = StatusJoining
	s.sendJoinLookup(env)
}

// sendJoinLookup asks the bootstrap for the predecessor of the node's own
// identifier and arms the retry timer.
func (s *State) sendJoinLookup(env node.Env) {
	self := env.Self()
	env.Send(s.Bootstrap, FindPred{Key: s.ring.pos(self), Who: self})
	env.SetTimer(TimerJoin, s.opts.JoinRetry)
}

// armMaintenance starts the timers of a joined node. The recovery timer
// runs only on nodes that joined through another node.
func (s *State) armMaintenance(env node.Env) {
	env.CancelTimer(TimerJoin)
	env.SetTimer(TimerStabilize, s.opts.StabilizeInterval)
	env.SetTimer(TimerFixFingers, s.opts.FixFingersInterval)
	if s.Bootstrap != env.Self() {
		env.SetTimer(TimerRecovery, s.opts.RecoveryInterval)
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	self := env.Self()
	switch name {
	case TimerJoin:
		if s.Status == StatusJoining {
			s.sendJoinLookup(env)
		}
	case TimerStabilize:
		if s.Status != StatusJoined {
			return
		}
		if succ := s.successor(self); succ != self {
			env.Send(succ, GetPred{})
		}
		env.SetTimer(TimerStabilize, s.opts.StabilizeInterval)
	case TimerFixFingers:
		if s.Status != StatusJoined {
			return
		}
		s.fixFinger(env)
		env.SetTimer(TimerFixFingers, s.opts.FixFingersInterval)
	case TimerRecovery:
		if s.Status != StatusJoined || s.Bootstrap == self {
			return
		}
		env.Send(s.Bootstrap, FindPred{Key: s.ring.pos(self), Who: self})
		env.SetTimer(TimerRecovery, s.opts.RecoveryInterval)
	}
}

// fixFinger looks up the start of a random finger, unless the node is alone
// or is that identifier's predecessor itself (it then knows the answer: its
// successor).
func (s *State) fixFinger(env node.Env) {
	self := env.Self()
	succ := s.successor(self)
	if s.Pred == self || succ == self {
		return
	}
	k := env.Rand().IntN(s.ring.bits)
	me := s.ring.pos(self)
	key := s.ring.fingerStart(me, k)
	if s.ring.betweenIncl(key, me, s.ring.pos(succ)) {
		return
	}
	if next := s.closestPreceding(self, key); next != node.None {
		env.Send(next, FindPred{Key: key, Who: self})
	}
}

// HandleMessage implements node.Service. Unknown messages are ignored.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case FindPred:
		s.onFindPred(env, m)
	case FindPredReply:
		s.onFindPredReply(env, from, m)
	case GetPred:
		if s.Status == StatusJoined {
			env.Send(from, GetPredReply{Pred: s.Pred, Successors: s.successorList()})
		}
	case GetPredReply:
		s.onGetPredReply(env, from, m)
	case UpdatePred:
		s.onUpdatePred(env, from)
	}
}

// successorList returns a copy of the successor list for a message, so
// that later changes to the list do not reach messages already sent.
func (s *State) successorList() []node.ID {
	return slices.Clone(s.Successors)
}

// onFindPred answers a lookup if this node is the key's predecessor (the
// key lies in (self, successor]) and forwards it to the closest preceding
// node it knows otherwise. A node that is not joined cannot route; the
// asker retries.
func (s *State) onFindPred(env node.Env, m FindPred) {
	if s.Status != StatusJoined || m.Who == node.None {
		return
	}
	self := env.Self()
	key := m.Key & s.ring.mask
	me := s.ring.pos(self)
	next := node.None
	if !s.ring.betweenIncl(key, me, s.ring.pos(s.successor(self))) {
		next = s.closestPreceding(self, key)
	}
	if next != node.None {
		env.Send(next, m)
		return
	}
	if m.Who == self {
		return
	}
	succs := s.successorList()
	if len(succs) == 0 {
		succs = []node.ID{self}
	}
	env.Send(m.Who, FindPredReply{Key: key, Successors: succs})
}

// onFindPredReply completes a join, or takes in what a fix-fingers or
// recovery lookup found.
func (s *State) onFindPredReply(env node.Env, from node.ID, m FindPredReply) {
	self := env.Self()
	switch s.Status {
	case StatusJoining:
		// The answer to another lookup cannot place this node, and a node
		// never answers its own lookup, so a reply from itself is forged.
		if m.Key&s.ring.mask != s.ring.pos(self) || from == self {
			return
		}
		// The paper's join, in its order: (i) the predecessor is the
		// replier, (ii) its successor list becomes ours, (iii) UpdatePred
		// goes to the replier's successor. Bug 1 (Figure 10): the
		// replier's successor may be this very node — it reset and the
		// replier never learnt — and the UpdatePred is then sent to
		// itself.
		s.Status = StatusJoined
		s.Pred = from
		s.initFingers(self)
		for _, x := range m.Successors {
			s.learn(self, x)
		}
		s.learn(self, from)
		target := from
		if len(m.Successors) > 0 && m.Successors[0] != node.None {
			target = m.Successors[0]
		}
		env.Send(target, UpdatePred{})
		s.armMaintenance(env)
	case StatusJoined:
		// A node alone on its ring that hears of another stops being its
		// own predecessor, as in Mace Chord: it is no longer alone.
		if s.Pred == self {
			s.Pred = node.None
		}
		s.learn(self, from)
		for _, x := range m.Successors {
			s.learn(self, x)
		}
	default:
		return
	}
	s.settle(self)
}

// onGetPredReply is stabilize's second half: take in the successor's
// successors and predecessor, and if the successor does not name this node
// as its predecessor, tell the (possibly new) successor about this node.
// Replies from anyone but the current successor are stale and ignored.
func (s *State) onGetPredReply(env node.Env, from node.ID, m GetPredReply) {
	self := env.Self()
	// A node alone on its ring is its own successor, but never asks
	// itself: a reply from itself is forged.
	if s.Status != StatusJoined || from != s.successor(self) || from == self {
		return
	}
	// Bug 2 (Figure 11): the successor list grows here while the
	// predecessor is left as it was, even when a new successor lies
	// between the predecessor and this node.
	for _, x := range m.Successors {
		s.learn(self, x)
	}
	if m.Pred != self {
		s.learn(self, m.Pred)
		if succ := s.successor(self); succ != self {
			env.Send(succ, UpdatePred{})
		}
	}
	s.settle(self)
}

// onUpdatePred makes the sender the predecessor if there is none or the
// sender lies between the predecessor and this node; the old predecessor is
// told of its new successor with an unasked GetPredReply.
func (s *State) onUpdatePred(env node.Env, from node.ID) {
	self := env.Self()
	if s.Status != StatusJoined {
		return
	}
	me := s.ring.pos(self)
	if s.Pred != node.None && !s.ring.between(s.ring.pos(from), s.ring.pos(s.Pred), me) {
		return
	}
	// Bug 1 (Figure 10): an UpdatePred the node sent itself, arriving
	// after a transport error cleared its predecessor, makes it its own
	// predecessor while its successor list names other nodes. The paper's
	// correction keeps Mace's style of sending UpdatePred to oneself and
	// guards the assignment instead.
	if from == self && s.opts.FixSelfPredecessor && len(s.Successors) > 0 {
		return
	}
	if old := s.Pred; old != node.None && old != self {
		env.Send(old, GetPredReply{Pred: from, Successors: s.successorList()})
	}
	s.Pred = from
	s.learn(self, from)
	s.settle(self)
}

// settle applies the correction of bug 2 (FixNodeOrdering) after the
// routing table changed: a successor lying between the predecessor and
// this node is a nearer predecessor, so the nearest such one becomes the
// predecessor. The paper's code leaves the predecessor alone.
func (s *State) settle(self node.ID) {
	if !s.opts.FixNodeOrdering || s.Pred == node.None || s.Pred == self {
		return
	}
	r := s.ring
	me, p := r.pos(self), r.pos(s.Pred)
	best, bestD := node.None, uint64(0)
	for _, x := range s.Successors {
		px := r.pos(x)
		if !r.between(px, p, me) {
			continue
		}
		if d := r.dist(px, me); best == node.None || d < bestD {
			best, bestD = x, d
		}
	}
	if best != node.None {
		s.Pred = best
	}
}

// HandleTransportError implements node.Service: peer is gone (reset,
// down or unreachable), so it is removed from the predecessor, the
// successor list and the fingers.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	self := env.Self()
	if peer == self {
		return
	}
	s.forget(self, peer)
	s.settle(self)
}
