package steering

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// DefaultArrivals is the most nodes a round adds to its model from the
// environment its snapshot's members declare (Config.Arrivals): two, the
// fewest that can race each other, as two joins through one node do in
// Chord's Figure 11.
const DefaultArrivals = 2

// SnapshotOptions configure the model SnapshotModelWith builds. The zero
// value of every field is its documented default.
type SnapshotOptions struct {
	// Workload gives the application calls a node makes after a reset the
	// explorer injects (consequence.ActorOptions.Workload); nil uses the
	// service's node.Restarter.
	Workload func(id node.ID, restart bool) []node.Message
	// Faults bound the faults explored along a path (default: none).
	Faults consequence.Faults
	// Arrivals is the most nodes added from the members' environment
	// (node.Environment, chosen by SnapshotArrivals); zero adds none (the
	// snapshot's members only), negative is an error.
	Arrivals int
	// TimerSkew is the declared bound of each node's timer skew
	// (consequence.ActorOptions.TimerSkew); zero: none.
	TimerSkew time.Duration
}

// SnapshotModel returns the actor model of snap's members alone, the one
// a Controller's safety search, replayed paths and liveness walks explore:
// SnapshotModelWith with workload and faults and no arrivals. A path a
// round predicted replays on it (the reports of `crystalball node
// --reports` rebuild it so). Errors are consequence's.
func SnapshotModel(spec node.Spec, snap *snapshot.Snapshot, workload func(id node.ID, restart bool) []node.Message, faults consequence.Faults) (*consequence.ActorModel, error) {
	return SnapshotModelWith(spec, snap, SnapshotOptions{Workload: workload, Faults: faults})
}

// SnapshotModelWith returns the actor model of snap: its members'
// checkpoints at the snapshot's time, the in-flight messages it recorded,
// workload and faults as o says, and the arrivals SnapshotArrivals
// chooses, each a fresh node started (Init) at the snapshot's time having
// made its declared calls (consequence.Fresh). Errors are consequence's,
// or wrap ErrInvalidConfig for a negative o.Arrivals.
func SnapshotModelWith(spec node.Spec, snap *snapshot.Snapshot, o SnapshotOptions) (*consequence.ActorModel, error) {
	if o.Arrivals < 0 {
		return nil, fmt.Errorf("%w: negative SnapshotOptions.Arrivals %d", ErrInvalidConfig, o.Arrivals)
	}
	arrivals, err := SnapshotArrivals(spec, snap, o.Arrivals)
	if err != nil {
		return nil, err
	}
	return consequence.NewActorModelWithFresh(spec, snapshotCheckpoints(snap), freshArrivals(arrivals, snap.At), snapshotInFlight(snap),
		consequence.ActorOptions{Workload: o.Workload, Faults: o.Faults, TimerSkew: o.TimerSkew})
}

// snapshotCheckpoints returns snap's members' checkpoints at the
// snapshot's time.
func snapshotCheckpoints(snap *snapshot.Snapshot) []consequence.Checkpoint {
	cps := make([]consequence.Checkpoint, 0, len(snap.Nodes))
	for _, n := range snap.Nodes {
		cps = append(cps, consequence.Checkpoint{ID: n.Node, Bytes: n.State, At: snap.At})
	}
	return cps
}

// snapshotInFlight returns the messages snap recorded in flight, channel
// by channel.
func snapshotInFlight(snap *snapshot.Snapshot) []node.Envelope {
	var inFlight []node.Envelope
	for _, ch := range snap.Channels {
		inFlight = append(inFlight, ch.Messages...)
	}
	return inFlight
}

// freshArrivals returns the arrivals as fresh nodes started at at,
// having made their declared calls.
func freshArrivals(arrivals []node.Arrival, at time.Time) []consequence.Fresh {
	var fresh []consequence.Fresh
	for _, a := range arrivals {
		fresh = append(fresh, consequence.Fresh{ID: a.ID, At: at, Calls: a.Calls})
	}
	return fresh
}

// SnapshotArrivals returns at most max of the arrivals snap's members
// declare through node.Environment, in a fixed order: the gatherer's
// first (its neighbourhood is the snapshot's centre, and two arrivals
// through one node are what can race), then the other members' by
// ascending ID, each member's in its own order. An arrival whose ID is
// None, a member's, a dead or excluded member's, or one already chosen is
// skipped. A service without Environment declares none. Errors wrap
// consequence.ErrActorModel (an undecodable checkpoint).
func SnapshotArrivals(spec node.Spec, snap *snapshot.Snapshot, max int) ([]node.Arrival, error) {
	if max <= 0 || len(snap.Nodes) == 0 {
		return nil, nil
	}
	taken := takenIDs(snap)
	var out []node.Arrival
	for _, n := range gathererFirst(snap) {
		declared, ok, err := declaredArrivals(spec, n)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil // one service: no member declares any
		}
		var full bool
		if out, full = appendArrivals(out, declared, taken, max); full {
			return out, nil
		}
	}
	return out, nil
}

// takenIDs returns the IDs an arrival may not take: snap's members, dead
// and excluded members.
func takenIDs(snap *snapshot.Snapshot) map[node.ID]bool {
	taken := make(map[node.ID]bool, len(snap.Nodes)+len(snap.Dead)+len(snap.Excluded))
	for _, n := range snap.Nodes {
		taken[n.Node] = true
	}
	for _, id := range snap.Dead {
		taken[id] = true
	}
	for _, x := range snap.Excluded {
		taken[x.Node] = true
	}
	return taken
}

// gathererFirst returns snap's members with the gatherer's checkpoint
// moved to the front, the others in their order.
func gathererFirst(snap *snapshot.Snapshot) []snapshot.NodeCheckpoint {
	order := make([]snapshot.NodeCheckpoint, 0, len(snap.Nodes))
	for _, n := range snap.Nodes {
		if n.Node == snap.Gatherer {
			order = append([]snapshot.NodeCheckpoint{n}, order...)
		} else {
			order = append(order, n)
		}
	}
	return order
}

// declaredArrivals decodes member n's checkpoint and returns the
// arrivals it declares; ok is false when its service is no
// node.Environment.
func declaredArrivals(spec node.Spec, n snapshot.NodeCheckpoint) ([]node.Arrival, bool, error) {
	st, err := node.DecodeCheckpoint(n.State, spec.New)
	if err != nil {
		return nil, false, fmt.Errorf("%w: checkpoint of %v: %w", consequence.ErrActorModel, n.Node, err)
	}
	env, ok := st.Service.(node.Environment)
	if !ok {
		return nil, false, nil
	}
	return env.Arrivals(n.Node), true, nil
}

// appendArrivals appends to out the arrivals of declared whose IDs are
// neither None nor taken (marking them taken), up to max; full reports
// that out reached max.
func appendArrivals(out, declared []node.Arrival, taken map[node.ID]bool, max int) ([]node.Arrival, bool) {
	for _, a := range declared {
		if a.ID == node.None || taken[a.ID] {
			continue
		}
		taken[a.ID] = true
		out = append(out, a)
		if len(out) == max {
			return out, true
		}
	}
	return out, false
}
