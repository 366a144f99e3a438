package randtree

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timer names.
const (
	// TimerJoin re-sends Join to the next bootstrap target while joining.
	TimerJoin = "join"
	// TimerRecovery periodically probes peers for a more eligible root.
	TimerRecovery = "recovery"
)

// Status is where a node stands in joining the tree.
type Status uint8

const (
	// StatusInit: started (or reset) and not yet asked to join.
	StatusInit Status = iota
	// StatusJoining: sent Join, waiting for a JoinReply.
	StatusJoining
	// StatusJoined: part of a tree, as a root or under a parent.
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

// State is the service state of one RandTree node; it implements
// node.Service and node.Cloner. Its exported fields are the node state that
// is checkpointed and hashed; every set is an ascending, duplicate-free
// slice, nil when empty, so equal states encode to equal bytes. The
// configuration is unexported and comes from the factory (NewSpec).
//
// Callers other than the runtimes (properties, the CLI) must treat a State
// they did not create as read-only.
type State struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`

	// Init does nothing: a node starts (and restarts after a reset) in
	// StatusInit and waits for the application to ask it to join (in Mace
	// joining is an application call, and MaceMC's liveness bug depends on a
	// reset node sitting in Init while old messages reach it).
	node.NopHandlers

	// Status is the node's join status.
	Status Status
	// Root is the root of the tree as this node believes it; itself when
	// it is a root; None until joined.
	Root node.ID
	// Parent is the node's parent; None for a root and before joining.
	Parent node.ID
	// Children are the nodes this node accepted as children.
	Children []node.ID
	// Siblings are the root's other children, kept by children of the root.
	Siblings []node.ID
	// Peers are the nodes the recovery timer probes: the bootstrap targets
	// and every root this node has learned of. Never the node itself.
	Peers []node.ID
	// Targets is the bootstrap list of the JoinOverlay call, in the order
	// given (it may include the node itself).
	Targets []node.ID
	// NextTarget indexes the target the next Join goes to.
	NextTarget int
	// PendingRoot is the more eligible node this root asked to take over
	// the root position (by sending it Join); None when no handover is
	// under way.
	PendingRoot node.ID

	opts Options
}

var (
	_ node.Service = (*State)(nil)
	_ node.Cloner  = (*State)(nil)
)

// newState returns a node in StatusInit with the given configuration.
func newState(opts Options) *State { return &State{opts: opts} }

// Options returns the configuration the node runs with.
func (s *State) Options() Options { return s.opts }

// Clone implements node.Cloner: a deep copy sharing no memory with s.
func (s *State) Clone() node.Service {
	c := *s
	// The explorer clones a state per transition: one backing array for
	// all four sets instead of four. Each set gets a capacity-capped
	// window, so growing one reallocates it rather than overwriting its
	// neighbour.
	if n := len(s.Children) + len(s.Siblings) + len(s.Peers) + len(s.Targets); n > 0 {
		buf := make([]node.ID, 0, n)
		c.Children, buf = carve(buf, s.Children)
		c.Siblings, buf = carve(buf, s.Siblings)
		c.Peers, buf = carve(buf, s.Peers)
		c.Targets, _ = carve(buf, s.Targets)
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

// IsRoot reports whether the node, whose ID is self, is a joined root.
func (s *State) IsRoot(self node.ID) bool {
	return s.Status == StatusJoined && s.Root == self
}

// Neighbors returns the nodes this node's tree state names — root, parent,
// children, siblings and a pending root — ascending, without self. It is the
// node's snapshot neighbourhood: the nodes whose states a prediction from
// here needs.
func (s *State) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	add := func(id node.ID) {
		if id != node.None && id != self {
			out = insert(out, id)
		}
	}
	add(s.Root)
	add(s.Parent)
	add(s.PendingRoot)
	for _, id := range s.Children {
		add(id)
	}
	for _, id := range s.Siblings {
		add(id)
	}
	return out
}

// String renders the state on one line for traces and the CLI, e.g.
// "joined root=n1 parent=n1 children=[n13] siblings=[n13] peers=[n1 n13]
// targets=[n13]"; " pending-root=n2" is appended while a handover is
// pending.
func (s *State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v root=%v parent=%v children=%s siblings=%s peers=%s targets=%s",
		s.Status, s.Root, s.Parent, formatIDs(s.Children), formatIDs(s.Siblings),
		formatIDs(s.Peers), formatIDs(s.Targets))
	if s.PendingRoot != node.None {
		fmt.Fprintf(&b, " pending-root=%v", s.PendingRoot)
	}
	return b.String()
}

// HandleApp implements node.Service: JoinOverlay starts joining. Other calls
// are ignored.
func (s *State) HandleApp(env node.Env, call node.Message) {
	c, ok := call.(JoinOverlay)
	if !ok || s.Status != StatusInit {
		return
	}
	self := env.Self()
	s.Targets = nil
	for _, t := range c.Targets {
		if t != node.None {
			s.Targets = append(s.Targets, t)
			if t != self {
				s.Peers = insert(s.Peers, t)
			}
		}
	}
	s.NextTarget = 0
	s.Status = StatusJoining
	if !s.sendJoin(env) {
		// Nobody else to ask: this node is the first of its tree.
		s.becomeRoot(env)
	}
}

// sendJoin sends Join to the next bootstrap target other than self, arms the
// retry timer and reports whether there was such a target.
func (s *State) sendJoin(env node.Env) bool {
	self := env.Self()
	n := len(s.Targets)
	if s.NextTarget < 0 || s.NextTarget >= n {
		s.NextTarget = 0
	}
	for i := 0; i < n; i++ {
		k := (s.NextTarget + i) % n
		if t := s.Targets[k]; t != self {
			s.NextTarget = (k + 1) % n
			env.Send(t, Join{Joiner: self})
			env.SetTimer(TimerJoin, s.opts.JoinRetry)
			return true
		}
	}
	return false
}

// currentTarget is the target the last Join went to.
func (s *State) currentTarget() node.ID {
	n := len(s.Targets)
	if n == 0 {
		return node.None
	}
	k := s.NextTarget - 1
	if k < 0 || k >= n {
		k = n - 1
	}
	return s.Targets[k]
}

// becomeRoot makes a joining node the root of its own tree.
func (s *State) becomeRoot(env node.Env) {
	s.Status = StatusJoined
	s.Root = env.Self()
	s.Parent = node.None
	env.CancelTimer(TimerJoin)
	s.armRecovery(env)
	env.Logger().Debug("randtree: became root", slog.Any("children", s.Children))
}

// armRecovery schedules the recovery timer for a node that just joined.
func (s *State) armRecovery(env node.Env) {
	// Bug 4: the paper's code arms the timer only when there is someone to
	// probe, and never re-checks when the peer list later grows (a root
	// that hands over adds the new root to its peers): the node then never
	// probes again.
	if s.opts.FixRecoveryTimer || len(s.Peers) > 0 {
		env.SetTimer(TimerRecovery, s.opts.RecoveryInterval)
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case TimerJoin:
		if s.Status == StatusJoining {
			s.sendJoin(env)
		}
	case TimerRecovery:
		s.recover(env)
	}
}

// recover probes every peer this node has no tree link to, so that a more
// eligible root anywhere in the peer list eventually becomes known, and
// checks every tree link with a Keepalive, so that a link the other end no
// longer holds is dropped (see Keepalive).
func (s *State) recover(env node.Env) {
	if s.Status != StatusJoined {
		return
	}
	if s.Parent != node.None {
		env.Send(s.Parent, Keepalive{AsChild: true})
	}
	// A handover whose Join was lost (the new root was restarting and
	// ignored it) would otherwise block every later one: retry it.
	if s.PendingRoot != node.None && s.Root == env.Self() {
		env.Send(s.PendingRoot, Join{Joiner: env.Self()})
	}
	isRoot := s.Root == env.Self()
	for _, c := range s.Children {
		// A child's siblings are the root's other children; a child of any
		// other node has none. Sending the list refreshes it, which is the
		// only way entries of children that left the root ever expire.
		var siblings []node.ID
		if isRoot {
			siblings = without(s.Children, c)
		}
		env.Send(c, Keepalive{AsChild: false, Siblings: siblings})
	}
	for _, p := range s.Peers {
		if p == s.Parent || contains(s.Children, p) || contains(s.Siblings, p) {
			continue
		}
		env.Send(p, Probe{Root: s.Root})
	}
	// Bug 4 again: with an empty peer list the timer dies here.
	if s.opts.FixRecoveryTimer || len(s.Peers) > 0 {
		env.SetTimer(TimerRecovery, s.opts.RecoveryInterval)
	}
}

// HandleMessage implements node.Service. Unknown messages are ignored.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Join:
		s.onJoin(env, m)
	case JoinReply:
		s.onJoinReply(env, from, m)
	case UpdateSibling:
		s.onUpdateSibling(env, m)
	case NewRoot:
		s.onNewRoot(env, from, m)
	case Remove:
		s.Children = remove(s.Children, from)
		s.Siblings = remove(s.Siblings, from)
	case Probe:
		if s.Status != StatusJoined {
			return
		}
		env.Send(from, ProbeReply{Root: s.Root})
		s.learn(env, m.Root)
	case ProbeReply:
		s.learn(env, m.Root)
	case Keepalive:
		s.onKeepalive(env, from, m)
	case Disown:
		s.onDisown(env, from)
	}
}

// onKeepalive answers Disown when from claims a link this node does not
// hold.
func (s *State) onKeepalive(env node.Env, from node.ID, m Keepalive) {
	if s.Status != StatusJoined {
		// A node that is not in a tree holds no children: a child's
		// keepalive is disowned, or a root that reset and is rejoining
		// through its own former child would stay that child's parent for
		// ever (the liveness walks of a steering round found this dead
		// end: the child forwards the join to its root, which is the
		// joiner itself). A parent's keepalive is not judged: the node
		// has no links yet, and FIFO delivery means it never overtakes
		// the parent's JoinReply.
		if m.AsChild {
			env.Send(from, Disown{})
		}
		return
	}
	holds := s.Parent == from
	if m.AsChild {
		holds = contains(s.Children, from)
	}
	if !holds {
		// The stale-child bug: the paper's child ignores a keepalive from
		// a parent it does not hold, and the parent, whose connection
		// works, keeps it as a child. A child's Keepalive to a parent that
		// dropped it is always disowned (a node must not stay orphaned
		// under a parent that does not know it).
		if m.AsChild || s.opts.FixStaleChild {
			env.Send(from, Disown{})
		}
		return
	}
	if !m.AsChild {
		s.Siblings = without(m.Siblings, env.Self())
	}
}

// onDisown drops the link to from: a child that disowned us is removed, and
// a parent that disowned us leaves us orphaned, exactly as if its
// connection had broken.
func (s *State) onDisown(env node.Env, from node.ID) {
	s.Children = remove(s.Children, from)
	if s.Status == StatusJoined && from == s.Parent {
		s.orphan(env)
	}
}

func (s *State) onJoin(env node.Env, m Join) {
	self := env.Self()
	j := m.Joiner
	if j == self || j == node.None {
		return
	}
	if s.Status != StatusJoined {
		// A root that found this node more eligible hands the root over by
		// joining it: take the position. A node that is not in a tree
		// cannot place anyone else; the joiner will retry.
		if j > self {
			s.takeOverRoot(env, j)
		}
		return
	}
	isRoot := s.Root == self
	switch {
	case !isRoot && !m.Down:
		env.Send(s.Root, m)
	case isRoot && j < self:
		s.relinquish(env, j)
	default:
		s.accept(env, j, isRoot)
	}
}

// takeOverRoot makes a node that is not yet joined the root, with the old
// root j as its first child.
func (s *State) takeOverRoot(env node.Env, j node.ID) {
	s.Children = insert(s.Children, j)
	s.becomeRoot(env)
	env.Send(j, JoinReply{Root: s.Root})
}

// relinquish starts handing the root position over to the more eligible r:
// this root joins r and becomes its child once r replies.
func (s *State) relinquish(env node.Env, r node.ID) {
	if s.PendingRoot == r {
		return // already asked; the handover is in flight
	}
	s.PendingRoot = r
	s.Peers = insert(s.Peers, r)
	env.Send(r, Join{Joiner: env.Self()})
}

// accept places j as a child if there is room, and otherwise passes the
// join down to a random child.
func (s *State) accept(env node.Env, j node.ID, isRoot bool) {
	if len(s.Children) < s.opts.MaxChildren || contains(s.Children, j) {
		s.Children = insert(s.Children, j)
		// The variation of bug 1: j may be a stale sibling (it reset while
		// a child of the root and is now rejoining under us).
		if s.opts.FixAcceptSibling {
			s.Siblings = remove(s.Siblings, j)
		}
		var siblings []node.ID
		if isRoot {
			siblings = without(s.Children, j)
		}
		env.Send(j, JoinReply{Root: s.Root, Siblings: siblings})
		if isRoot {
			for _, c := range s.Children {
				if c != j {
					env.Send(c, UpdateSibling{Sibling: j})
				}
			}
		}
		return
	}
	c := s.Children[env.Rand().IntN(len(s.Children))]
	env.Send(c, Join{Joiner: j, Down: true})
}

func (s *State) onJoinReply(env node.Env, from node.ID, m JoinReply) {
	self := env.Self()
	switch {
	case s.Status == StatusJoining:
		s.Status = StatusJoined
		s.Parent = from
		s.Root = m.Root
		if s.Root == node.None {
			s.Root = from
		}
		s.Siblings = setOf(m.Siblings, self)
		env.CancelTimer(TimerJoin)
		if s.Root != self {
			s.Peers = insert(s.Peers, s.Root)
		}
		s.armRecovery(env)
	case s.Status == StatusJoined && s.PendingRoot != node.None && s.Root == self && m.Root != self:
		// The handover completed: this node is now a child in the more
		// eligible root's tree. The reply usually comes from the pending
		// root itself, but if that node had meanwhile joined another tree
		// the Join went on to that tree's root, which accepted this node:
		// take the reply from whoever placed it, rather than refuse it
		// and stay a root that never hands over again.
		root := m.Root
		if root == node.None {
			root = from
		}
		s.Parent = from
		s.Root = root
		s.PendingRoot = node.None
		s.Peers = insert(s.Peers, root)
		// Bug 3: the paper's code keeps whatever sibling list the node had;
		// the correction replaces it with the new root's other children.
		if s.opts.FixRootSiblings {
			s.Siblings = setOf(m.Siblings, self)
		}
		for _, c := range s.Children {
			env.Send(c, NewRoot{Root: root})
		}
	case s.Status == StatusInit:
		// MaceMC's liveness bug: a reset node ignores the reply of the
		// parent its previous incarnation asked, and that parent keeps it
		// as a child forever since the connection never broke.
		if s.opts.FixJoinReplyInInit {
			env.Send(from, Remove{})
		}
	case s.Status == StatusJoined && from != s.Parent:
		env.Send(from, Remove{})
	}
}

func (s *State) onUpdateSibling(env node.Env, m UpdateSibling) {
	if s.Status != StatusJoined || m.Sibling == env.Self() || m.Sibling == node.None {
		return
	}
	s.Siblings = insert(s.Siblings, m.Sibling)
	// Bug 1 (Figure 2): without the fix a node that still lists the new
	// sibling as its child — a child that reset silently and rejoined under
	// the root — ends up with it in both lists.
	if s.opts.FixUpdateSibling {
		s.Children = remove(s.Children, m.Sibling)
	}
}

func (s *State) onNewRoot(env node.Env, from node.ID, m NewRoot) {
	self := env.Self()
	r := m.Root
	if s.Status != StatusJoined || r == node.None || r == self {
		return
	}
	s.Root = r
	s.Peers = insert(s.Peers, r)
	// Bug 2 (Figure 9): a node that reset silently keeps its place in its
	// old parent's children; when it becomes the root the parent lists the
	// root as a child unless installing the root cleans the lists.
	if s.opts.FixNewRootChild {
		s.Children = remove(s.Children, r)
		s.Siblings = remove(s.Siblings, r)
	}
	// Bug 3: siblings exist only under the root; once the parent hands the
	// root over they are stale, and survive into this node's own time as
	// root if it later loses its parent.
	if s.opts.FixRootSiblings && from == s.Parent && from != r {
		s.Siblings = nil
	}
	for _, c := range s.Children {
		env.Send(c, NewRoot{Root: r})
	}
}

// learn handles news of a root r (from a probe or a probe reply): a more
// eligible root than ours is passed to our root, which hands over to it.
func (s *State) learn(env node.Env, r node.ID) {
	self := env.Self()
	if s.Status != StatusJoined || r == node.None || r == s.Root || r == self || r > s.Root {
		return
	}
	s.Peers = insert(s.Peers, r)
	if s.Root == self {
		s.relinquish(env, r)
		return
	}
	env.Send(s.Root, Probe{Root: r})
}

// orphan handles the loss of the parent: the node carries on as the root of
// its subtree until recovery finds the real root.
func (s *State) orphan(env node.Env) {
	s.Parent = node.None
	s.Root = env.Self()
	// Bug 3: the paper's code keeps the sibling list, so the new root has
	// siblings.
	if s.opts.FixRootSiblings {
		s.Siblings = nil
	}
}

// HandleTransportError implements node.Service: peer is gone (reset or
// unreachable), so it is dropped from the tree state.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	s.Children = remove(s.Children, peer)
	s.Siblings = remove(s.Siblings, peer)
	if peer == s.PendingRoot {
		s.PendingRoot = node.None
	}
	if s.Status == StatusJoined && peer == s.Parent {
		s.orphan(env)
	}
	// Bootstrap targets stay: they are how this node finds the tree again.
	isTarget := false
	for _, t := range s.Targets {
		if t == peer {
			isTarget = true
			break
		}
	}
	if !isTarget {
		s.Peers = remove(s.Peers, peer)
	}
	if s.Status == StatusJoining && peer == s.currentTarget() {
		s.sendJoin(env)
	}
}
