package steering

import (
	"cmp"
	"fmt"
	"time"
)

// RoundModel is what a round's model takes in beyond the members its
// snapshot reached: members it could not reach, and nodes that may
// arrive.
type RoundModel struct {
	// LastKnownFor keeps members that a gather could not reach in the
	// round: a member the snapshot marks dead enters the round's model
	// and the immediate check's view at the checkpoint an earlier
	// snapshot of this controller held of it, if that snapshot completed
	// at most LastKnownFor before this one. In the model it takes part
	// like any member (with no messages in flight to or from it): a
	// member that is cut off now will act again once it is back, and one
	// that reset can be reset again by the explorer's fault budget. Zero
	// (the default) leaves dead members out, as the paper does.
	//
	// It suits services whose state survives a partition and a reset
	// (Paxos: what an acceptor promised and accepted, what a learner
	// learned), where a member's last state still binds the others while
	// it is out of reach; for a service whose dead members have usually
	// reset and forgotten (RandTree under churn) their old states would
	// mislead the round.
	LastKnownFor time.Duration
	// Arrivals is the most nodes a round's environment search adds to the
	// snapshot from what its members declare (node.Environment;
	// SnapshotArrivals chooses them): fresh nodes that start at the
	// snapshot's time having made their declared calls, such as two joins
	// racing through one node (the package documentation describes the
	// environment search; it has its own MaxStates and MaxTime). Zero
	// means DefaultArrivals; negative is an error. A service without
	// Environment declares none, and its rounds have no environment
	// search.
	Arrivals int
	// NoArrivals turns the environment search off.
	NoArrivals bool
}

func (m RoundModel) withDefaults() (RoundModel, error) {
	if anyNegative(int64(m.LastKnownFor), int64(m.Arrivals)) {
		return m, fmt.Errorf("%w: negative LastKnownFor %v or Arrivals %d", ErrInvalidConfig, m.LastKnownFor, m.Arrivals)
	}
	m.Arrivals = cmp.Or(m.Arrivals, DefaultArrivals)
	return m, nil
}

// GatherPolicy widens a layer's gathers further and adds gathers to the
// periodic ones (snapshot.Layer.Include, snapshot.Layer.Gather).
// Every gather takes in, beside the neighbourhood, every peer the node's
// filters and holds are about, so that rounds judge a filter on the peer
// it silences; these options add to that, and are off by default.
type GatherPolicy struct {
	// RecallView makes a restarted node's gathers also take in the nodes
	// of its restored check view, until a snapshot reaches each or finds
	// it unreachable (include.go): the zoo lease's restarted grantor then
	// gathers the client that still holds the lease, which its fresh
	// state does not name. Off by default: on RandTree under churn the
	// restarted nodes' rounds on their old neighbourhoods made seed 2's
	// steered run 9,616 inconsistent states against 2,570 without it
	// (docs/history/results-steering-rules.md).
	RecallView bool
	// GatherOnFault makes a layer gather its neighbourhood right after
	// the node handles a transport error (a broken connection, a
	// neighbour's reset: the events that open liveness windows), at most
	// once per FaultGatherSpacing, so that a round sees a dead end that
	// opens within a second rather than at the next periodic gather.
	// Joins and other neighbourhood changes gather already
	// (snapshot.Config.GatherSettle). Off by default: it adds rounds
	// (docs/RESULTS.md, "Liveness at the library's defaults"). The
	// round's budgets are unchanged.
	GatherOnFault bool
}
