package pastry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timer names.
const (
	// TimerJoin re-sends the Join to the bootstrap while joining.
	TimerJoin = "join"
	// TimerProbe periodically probes every known node and purges those
	// that stopped answering.
	TimerProbe = "probe"
)

// Status is where a node stands in joining the overlay.
type Status uint8

const (
	// StatusInit: started (or reset) and its overlay not yet started by
	// the application; it answers nothing.
	StatusInit Status = iota
	// StatusJoining: sent its Join, waiting for a JoinReply. It answers
	// probes but cannot route.
	StatusJoining
	// StatusJoined: part of the overlay, possibly alone.
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

// Miss counts the consecutive probes a known node left unanswered.
type Miss struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Peer is the probed node.
	Peer node.ID
	// Count is the number of probes sent to Peer since its last
	// ProbeReply (at least 1).
	Count int
}

// State is the service state of one Pastry node; it implements
// node.Service, node.Cloner and node.Neighborer. Its exported fields are
// the node state that is checkpointed and hashed; the configuration is
// unexported and comes from the factory (NewSpec), and identifiers are
// computed from it, not stored.
//
// Callers other than the runtimes (properties, the CLI) must treat a State
// they did not create as read-only.
type State struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`

	// Init does nothing: a node starts (and restarts after a reset) in
	// StatusInit until the application asks it to join. HandleTransportError
	// does nothing: Pastry sends datagrams only, which never cause one, and
	// failure detection is the probes' job.
	node.NopHandlers

	// Status is the node's join status.
	Status Status
	// Bootstrap is the node the JoinOverlay call named (the node itself
	// when it formed its own overlay); None before the call.
	Bootstrap node.ID
	// Left is the left half of the leaf set: the nearest known nodes
	// counter-clockwise, nearest first, at most LeafSize/2, never the
	// node itself; nil when empty.
	Left []node.ID
	// Right is the right half: the nearest known nodes clockwise.
	Right []node.ID
	// Table is the routing table once joined (nil before): digits rows of
	// 2^DigitBits columns, row-major; the entry at row r, column c is a
	// node sharing r leading digits with this node whose next digit is c,
	// or None.
	Table []node.ID
	// Misses counts unanswered probes per known node, ascending by peer;
	// a node that answered its last probe has no entry.
	Misses []Miss

	opts Options
	sp   space
}

var (
	_ node.Service    = (*State)(nil)
	_ node.Cloner     = (*State)(nil)
	_ node.Neighborer = (*State)(nil)
)

// newState returns a node in StatusInit with the given configuration.
func newState(opts Options) *State { return &State{opts: opts, sp: newSpace(opts)} }

// Options returns the configuration the node runs with.
func (s *State) Options() Options { return s.opts }

// Key returns the Pastry identifier of node id under the node's options.
func (s *State) Key(id node.ID) uint64 { return s.sp.pos(id) }

// Leaves returns the node's leaf set, both sides, ascending and without
// repeats.
func (s *State) Leaves() []node.ID { return s.leaves() }

// Clone implements node.Cloner: a deep copy sharing no memory with s.
func (s *State) Clone() node.Service {
	c := *s
	c.Left = slices.Clone(s.Left)
	c.Right = slices.Clone(s.Right)
	c.Table = slices.Clone(s.Table)
	c.Misses = slices.Clone(s.Misses)
	return &c
}

// Neighbors implements node.Neighborer: the leaf set and the routing
// table's entries, ascending, without self — the nodes whose states the
// properties of this node relate it to.
func (s *State) Neighbors(self node.ID) []node.ID {
	out := s.known()
	if i, ok := slices.BinarySearch(out, self); ok {
		out = slices.Delete(out, i, i+1)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// String renders the state on one line for traces and the CLI, e.g.
// "joined left=[n2 n1] right=[n4 n5] table=[n1 n5] misses=[n4:1]
// bootstrap=n1": the table as its distinct entries, ascending, absent
// before joining, and the misses only when there are some.
func (s *State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v left=%s right=%s", s.Status, formatIDs(s.Left), formatIDs(s.Right))
	if s.Table != nil {
		var entries []node.ID
		entries = addSorted(entries, s.Table...)
		fmt.Fprintf(&b, " table=%s", formatIDs(entries))
	}
	if len(s.Misses) > 0 {
		b.WriteString(" misses=[")
		for i, m := range s.Misses {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%v:%d", m.Peer, m.Count)
		}
		b.WriteByte(']')
	}
	fmt.Fprintf(&b, " bootstrap=%v", s.Bootstrap)
	return b.String()
}

// HandleApp implements node.Service: JoinOverlay starts the overlay.
// Other calls are ignored.
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
		// The first node: an overlay of its own.
		s.becomeJoined(env)
		return
	}
	s.Status = StatusJoining
	s.sendJoin(env)
}

// sendJoin sends the node's Join to its bootstrap and arms the retry
// timer.
func (s *State) sendJoin(env node.Env) {
	env.SendDatagram(s.Bootstrap, Join{Joiner: env.Self()})
	env.SetTimer(TimerJoin, s.opts.JoinRetry)
}

// becomeJoined makes the node joined with an empty routing table and
// starts its failure detector.
func (s *State) becomeJoined(env node.Env) {
	s.Status = StatusJoined
	s.Table = make([]node.ID, s.sp.digits*s.sp.cols())
	env.CancelTimer(TimerJoin)
	env.SetTimer(TimerProbe, s.opts.ProbeInterval)
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case TimerJoin:
		if s.Status == StatusJoining {
			s.sendJoin(env)
		}
	case TimerProbe:
		if s.Status == StatusJoined {
			s.probeRound(env)
			env.SetTimer(TimerProbe, s.opts.ProbeInterval)
		}
	}
}

// HandleMessage implements node.Service. Unknown messages are ignored.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Join:
		s.onJoin(env, m)
	case JoinReply:
		s.onJoinReply(env, m)
	case Announce:
		if s.Status == StatusJoined && from != env.Self() {
			s.takeIn(env, from, s.bounded(m.Leaves))
			env.SendDatagram(from, LeafSet{Leaves: s.leaves()})
		}
	case LeafSet:
		if s.Status == StatusJoined && from != env.Self() {
			s.takeIn(env, from, s.bounded(m.Leaves))
		}
	case Probe:
		// Liveness is answered by any started node, joined or not, as a
		// transport-level ping is: this is what keeps a rejoining node's
		// old entry alive (the bug).
		if s.Status == StatusInit || from == env.Self() {
			return
		}
		env.SendDatagram(from, ProbeReply{})
		if s.Status == StatusJoined {
			// A prober this node does not know (it purged the prober
			// after missing its replies) is asked for its leaf set, and
			// so are the nodes of the prober's leaf set it would take in.
			s.consider(env, from)
			for _, x := range s.bounded(m.Leaves) {
				s.consider(env, x)
			}
		}
	case ProbeReply:
		s.answered(from)
	}
}

// onJoinReply completes a join: the replier's leaf set and the route's
// nodes become the node's leaf set and routing table, and the node
// announces itself to every node it now knows.
func (s *State) onJoinReply(env node.Env, m JoinReply) {
	if s.Status != StatusJoining {
		return
	}
	self := env.Self()
	s.becomeJoined(env)
	for _, x := range s.bounded(m.Leaves) {
		s.learn(self, x)
	}
	for _, x := range s.maxSeen(m.Seen) {
		s.learn(self, x)
	}
	for _, x := range s.known() {
		s.announce(env, x)
	}
}

// takeIn learns from, which spoke for itself, and announces this node to
// the nodes of from's leaf set it would take in, so that nodes that joined
// at once next to each other, or lost each other to spurious purges, learn
// of each other first-hand.
func (s *State) takeIn(env node.Env, from node.ID, leaves []node.ID) {
	s.learn(env.Self(), from)
	for _, x := range leaves {
		s.consider(env, x)
	}
}

// consider announces this node to x, a node it heard of, when it does not
// know x and x would enter its leaf set or an empty table slot; x's
// LeafSet reply, if x is a joined node, makes the node take it in.
func (s *State) consider(env node.Env, x node.ID) {
	self := env.Self()
	if x == node.None || x == self || s.knows(x) || !s.wants(self, x) {
		return
	}
	s.announce(env, x)
}

// bounded cuts a leaf list from a message to the longest a correct node
// sends (its leaf set and itself), so that a hostile list cannot make the
// node send without bound.
func (s *State) bounded(leaves []node.ID) []node.ID {
	return leaves[:min(len(leaves), s.opts.LeafSize+1)]
}

// maxSeen cuts a Join's Seen list to the longest a route can collect: per
// hop the node and its routing-table row.
func (s *State) maxSeen(seen []node.ID) []node.ID {
	return seen[:min(len(seen), s.maxHops()*(s.sp.cols()+1))]
}

// maxHops is the most hops a Join is forwarded before it is dropped.
func (s *State) maxHops() int { return s.sp.digits + s.opts.LeafSize + 1 }

// announce sends to an Announce with this node's leaf set.
func (s *State) announce(env node.Env, to node.ID) {
	env.SendDatagram(to, Announce{Leaves: s.leaves()})
}
