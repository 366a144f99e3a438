package steering

import (
	"cmp"
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// The weights of Likelihood.Cost: roughly the negative log-odds that the
// network does what one step of the path needs in the next few seconds.
// A message already in flight at the snapshot will be delivered (cost 0);
// one the path itself sends will be too, but only after the events that
// send it (a little); a timer or call fires when its node's clock gets
// there (a little more, since the path also needs it to come in this
// order); a fault — a reset, a broken connection, a lost datagram — is
// rare: under the paper's churn of one reset a minute among 100 nodes, a
// given neighbour resets in the next ten seconds with odds of about 1 in
// 600.
const (
	costSpawned = 0.25
	costLocal   = 1
	costFault   = 10
)

// Likelihood says how much a predicted path asks of the network, from the
// snapshot's state on: the faults it injects and the events it needs,
// split by whether they were already under way at the snapshot. Steering
// acts on the likely paths first, and reports give their rank.
type Likelihood struct {
	// Faults counts resets, connection breaks, datagram drops and refused
	// sends.
	Faults int `json:"faults"`
	// InFlight counts deliveries of messages (and transport errors) that
	// were already in flight when the snapshot was taken; Spawned those
	// of messages sent along the path.
	InFlight int `json:"in_flight"`
	Spawned  int `json:"spawned"`
	// Local counts timers and application calls.
	Local int `json:"local"`
	// Cost weighs them: lower is likelier (costFault per fault, costLocal
	// per timer or call, costSpawned per delivery of a message the path
	// sent, nothing for one already in flight).
	Cost float64 `json:"cost"`
}

// likelihood measures path from start.
func likelihood(start *consequence.GlobalState, path []consequence.ActorAction) Likelihood {
	backlog := snapshotBacklog{start: start, left: map[backlogChannel]int{}}
	var l Likelihood
	for _, a := range path {
		switch a.Kind {
		case consequence.ActReset, consequence.ActBreak, consequence.ActDropDatagram, consequence.ActRefuse,
			consequence.ActCrash, consequence.ActRestart, consequence.ActPartition, consequence.ActHeal, consequence.ActClockJump:
			l.Faults++
		case consequence.ActTimer, consequence.ActApp:
			l.Local++
		case consequence.ActDeliver, consequence.ActDeliverDatagram:
			if backlog.take(a) {
				l.InFlight++
			} else {
				l.Spawned++
			}
		}
	}
	l.Cost = costFault*float64(l.Faults) + costLocal*float64(l.Local) + costSpawned*float64(l.Spawned)
	return l
}

// backlogChannel is a channel of the snapshot's in-flight messages: a
// connection's stream, or the datagrams of a pair.
type backlogChannel struct {
	from, to node.ID
	datagram bool
}

// snapshotBacklog counts, per channel, the messages in flight at the
// snapshot's start state that a path has not delivered yet.
type snapshotBacklog struct {
	start *consequence.GlobalState
	left  map[backlogChannel]int
}

// take reports whether delivery a takes a message that was in flight at
// the snapshot (one fewer left on its channel), not one the path sent.
func (s *snapshotBacklog) take(a consequence.ActorAction) bool {
	ch := backlogChannel{a.Peer, a.Node, a.Kind == consequence.ActDeliverDatagram}
	n, ok := s.left[ch]
	if !ok {
		n = s.inFlightAtStart(ch)
	}
	taken := n > 0
	if taken {
		n--
	}
	s.left[ch] = n
	return taken
}

// inFlightAtStart counts the messages on ch in the start state.
func (s *snapshotBacklog) inFlightAtStart(ch backlogChannel) int {
	if ch.datagram {
		return len(s.start.Datagrams(ch.from, ch.to))
	}
	return len(s.start.InFlight(ch.from, ch.to))
}

// rank gives every prediction of preds its Likelihood (from start) and
// its Rank among them: 1 for the likeliest, by cost, then by the length
// of its path, then by its place in preds. preds keep their order.
func rank(start *consequence.GlobalState, preds []Prediction) {
	order := make([]int, len(preds))
	for i := range preds {
		preds[i].Likelihood = likelihood(start, preds[i].Path)
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		pa, pb := &preds[a], &preds[b]
		return cmp.Or(cmp.Compare(pa.Likelihood.Cost, pb.Likelihood.Cost), cmp.Compare(len(pa.Path), len(pb.Path)))
	})
	for r, i := range order {
		preds[i].Rank = r + 1
	}
}

// byRank returns the filters of preds' predictions that are not in skip,
// likeliest path first, each once.
func byRank(preds []Prediction, skip filterSet) filterSet {
	order := slices.Clone(preds)
	slices.SortStableFunc(order, func(a, b Prediction) int { return cmp.Compare(a.Rank, b.Rank) })
	var out filterSet
	for _, p := range order {
		if p.Filter != nil && !skip.has(*p.Filter) && !out.has(*p.Filter) {
			out = append(out, *p.Filter)
		}
	}
	return out
}
