package steering

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// includeFiltered asks the node's gathers to take in every peer whose
// events the gate keeps from the handler — the senders its filters drop,
// the peers of its held kinds — whether or not the service counts them as
// neighbours (snapshot.Layer.Include; core goroutine). A round judges a
// filter on its snapshot: replaying its path, and walking with the filter
// in place against the liveness properties. Without the filtered peer in
// the snapshot neither can see what the filter does to that peer. The case
// that needs it is a restarted node: its restored filters name peers of
// its previous incarnation that its fresh state no longer lists, and a
// RandTree node's restored "drop Keepalive from <old parent>" silenced the
// very keepalive whose answer (Disown) repairs the old parent's stale
// child, unseen by every round on the restarted node's neighbourhood
// (docs/RESULTS.md, "What a reset keeps"). Cheap when nothing changed:
// the gate's version is compared first.
func (l *Layer) includeFiltered() {
	if l.snaps == nil || l.gate == nil || l.cfg.Controller.NeighbourhoodGathers || (l.includedSet && l.gate.version == l.includedVersion) {
		return
	}
	l.includedSet, l.includedVersion = true, l.gate.version
	var ids []node.ID
	add := func(fs []Filter) {
		for _, f := range fs {
			if f.From != node.None && f.From != l.self {
				ids = append(ids, f.From)
			}
		}
	}
	add(l.gate.Filters())
	add(l.gate.heldKinds().all())
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if slices.Equal(ids, l.included) {
		return
	}
	l.included = ids
	l.snaps.Include(ids)
}
