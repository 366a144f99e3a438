package steering

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
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
// (docs/history/results-steering-rules.md, "What a reset keeps"). Cheap
// when nothing changed:
// the gate's version is compared first.
//
// With Config.RecallView, a restarted node's gathers also take in the
// nodes its previous incarnation's check view held (recall), until a
// gather has reached each or found it unreachable: what the node knew
// before its reset is who it must hear from before it judges, and its
// fresh state names none of them. The zoo lease's restarted grantor
// gathered only the client that asked it, and granted that client the
// lease another still held: the holder was in no gather of the new
// incarnation, so neither the check nor a round could see it. It is off
// by default: RandTree's restarted nodes, gathering the tree they left,
// did worse under churn (Config.RecallView).
func (l *Layer) includeFiltered() {
	if l.includeUpToDate() {
		return
	}
	l.includedSet, l.includedVersion = true, l.gate.version
	ids := peersFilteredAt(l.self, l.gate.Filters(), l.gate.heldKinds().all())
	ids = append(ids, l.recall...)
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if slices.Equal(ids, l.included) {
		return
	}
	l.included = ids
	l.snaps.Include(ids)
}

// includeUpToDate reports whether the gathers' inclusions need no update:
// there is no snapshot layer or gate yet, or the gate has not changed
// since the last update.
func (l *Layer) includeUpToDate() bool {
	return l.snaps == nil || l.gate == nil || (l.includedSet && l.gate.version == l.includedVersion)
}

// peersFilteredAt returns the peers, other than self, that the filters of
// each set in fss are about (senders dropped, peers of transport errors),
// in the sets' order.
func peersFilteredAt(self node.ID, fss ...[]Filter) []node.ID {
	var ids []node.ID
	for _, fs := range fss {
		for _, f := range fs {
			if f.From != node.None && f.From != self {
				ids = append(ids, f.From)
			}
		}
	}
	return ids
}

// recallView makes the nodes of a restored check view the recall set
// (includeFiltered), this node left out.
func (l *Layer) recallView(ks []durableKnown) {
	l.recall = l.recall[:0]
	for _, k := range ks {
		if k.Node != l.self {
			l.recall = append(l.recall, k.Node)
		}
	}
	l.includedSet = false
}

// recalled takes out of the recall set the nodes snapshot s reached or
// found unreachable.
func (l *Layer) recalled(s *snapshot.Snapshot) {
	if len(l.recall) == 0 {
		return
	}
	heard := func(id node.ID) bool {
		return slices.Contains(s.Dead, id) || slices.ContainsFunc(s.Nodes, func(n snapshot.NodeCheckpoint) bool { return n.Node == id })
	}
	n := len(l.recall)
	if l.recall = slices.DeleteFunc(l.recall, heard); len(l.recall) != n {
		l.includedSet = false
	}
}
