package consequence

import "github.com/seed6eee2ec7/crystalball/node"

var _ Commuter[*GlobalState, ActorAction] = (*ActorModel)(nil)

// Commute implements Commuter: in g, x and y commute when they are steps
// of two different nodes — a message delivery, a timer or a queued
// application call at each — that share no part of the global state
// either may change:
//
//   - neither is a fault (faults draw on budgets shared by all nodes), a
//     transport error (it closes a connection the other node may be
//     writing to), a datagram action or a declared application call (their
//     identity is a message value, which SameAction cannot compare);
//   - the connection between the two nodes is settled: not stale at either
//     end, no first message of a connection (a SYN mark) in flight either
//     way, and established if resets are still to come (then the first
//     of two writers marks its message as the SYN, so the order shows);
//   - x cannot hold y back when y is a timer (the virtual clock's skew
//     rule): x is a timer too (a firing moves the earliest timer only
//     later), or y is due no later than x's node's clock plus the skew
//     bound (a handler arms timers no earlier than its node's clock). The
//     other way round — y's handler arming a timer that holds x back — is
//     the case Commuter leaves to the checker, which carries x over only
//     if it is still enabled after y.
//
// A model with filters (WithIntercept) commutes nothing: a filter may
// break a connection on delivery. Nor does one with AnyOrderTimers: its
// fingerprint leaves time out, so it merges states that behave
// differently, and sleep sets are sound only over exact fingerprints.
// Nor does one with symmetry reduction: its fingerprint merges a state
// with its images under renaming, whose Actions lists are in another
// order, so the search could not intersect their sleep sets (a sleep set
// names positions in one state's list); the two reductions are not
// combined until that is proved sound. Nor does a state with lasting
// faults in it (a node down, a link cut, a clock jumped: lasting.go): a
// write over a link cut one way breaks the connection the other end's
// write opened, so the order of two nodes' writes to each other shows.
// Nor does one whose spec declares a bounded or history property: the
// order of two steps shows in what the path observed (when an obligation
// opened, the history's order).
// A handler that panics makes the two
// orders differ (the crash records which node crashed first); the search
// still visits the first crash state, which is all CrashCheck needs.
func (m *ActorModel) Commute(g *GlobalState, x, y Action[ActorAction]) bool {
	if x.Node == y.Node || x.Fault || y.Fault || g.crash != nil || g.ext != nil || m.opts.Intercept != nil || m.opts.AnyOrderTimers || m.sym != nil || m.obs != nil {
		return false
	}
	a, b := x.Act, y.Act
	if !commutingKind(a) || !commutingKind(b) || !m.settledPair(g, a.Node, b.Node) {
		return false
	}
	return m.cannotHoldBack(g, x, y)
}

// commutingKind reports whether a is a kind of step Commute may pair.
func commutingKind(a ActorAction) bool {
	switch a.Kind {
	case ActDeliver:
		return a.Msg != nil
	case ActTimer:
		return true
	case ActApp:
		return a.Pending
	}
	return false
}

// settledPair reports whether what either node writes to the other lands
// the same in both orders (see node's send).
func (m *ActorModel) settledPair(g *GlobalState, a, b node.ID) bool {
	if g.Stale(a, b) || g.Stale(b, a) {
		return false
	}
	if _, _, ok := g.syn(a, b); ok {
		return false
	}
	if _, _, ok := g.syn(b, a); ok {
		return false
	}
	return !m.tracksSYN(g) || g.Connected(a, b)
}

// cannotHoldBack reports whether step x cannot keep timer y from firing:
// y is not a timer, or x is a timer too, or x's node cannot arm a timer
// due early enough (timers are armed no earlier than their node's clock).
func (m *ActorModel) cannotHoldBack(g *GlobalState, x, y Action[ActorAction]) bool {
	if y.Act.Kind != ActTimer || x.Act.Kind == ActTimer {
		return true
	}
	n := g.nodes[y.Node]
	for _, t := range n.st.Timers {
		if t.Name == y.Act.Timer {
			return !due(n, t).After(g.nodes[x.Node].now.Add(m.clockSkew()))
		}
	}
	return false
}

// SameAction implements Commuter: the same kind of step of the same node
// on the same channel or timer. Among a channel's deliveries, the one of a
// message (Msg set) is the only one Commute pairs.
func (m *ActorModel) SameAction(x, y Action[ActorAction]) bool {
	a, b := x.Act, y.Act
	if x.Node != y.Node || a.Kind != b.Kind || a.Node != b.Node || !commutingKind(a) || !commutingKind(b) {
		return false
	}
	switch a.Kind {
	case ActDeliver:
		return a.Peer == b.Peer
	case ActTimer:
		return a.Timer == b.Timer
	}
	return a.Pending && b.Pending
}
