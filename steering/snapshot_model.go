package steering

import (
	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// SnapshotModel returns the actor model a Controller's rounds explore from
// snap: its members' checkpoints at the snapshot's time, the in-flight
// messages it recorded, and workload and faults as in Config.Workload and
// Config.Faults. A path a round predicted replays on it (the reports of
// `crystalball node --reports` rebuild it so). Errors are consequence's.
func SnapshotModel(spec node.Spec, snap *snapshot.Snapshot, workload func(id node.ID, restart bool) []node.Message, faults consequence.Faults) (*consequence.ActorModel, error) {
	cps := make([]consequence.Checkpoint, 0, len(snap.Nodes))
	for _, n := range snap.Nodes {
		cps = append(cps, consequence.Checkpoint{ID: n.Node, Bytes: n.State, At: snap.At})
	}
	var inFlight []node.Envelope
	for _, ch := range snap.Channels {
		inFlight = append(inFlight, ch.Messages...)
	}
	return consequence.NewActorModelFromCheckpoints(spec, cps, inFlight, consequence.ActorOptions{Workload: workload, Faults: faults})
}
