package snapshot

import (
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The JSON form of a Layer's status (Layer.Status): the "snapshots"
// object of a live node's /status.

// LayerStatus is a JSON-friendly picture of a Layer (the "snapshots" object
// of crystalball node's /status).
type LayerStatus struct {
	// IntervalSeconds and GatherIntervalSeconds are the configured periods
	// of checkpoint-number increments and automatic gathers (0: gathers
	// only on request).
	IntervalSeconds       float64 `json:"interval_seconds"`
	GatherIntervalSeconds float64 `json:"gather_interval_seconds"`
	// CN is the node's current checkpoint number.
	CN uint64 `json:"cn"`
	// CheckpointsStored is the number of stored checkpoints; StoredBytes
	// their cost against Config.Quota (the in-flight message log included).
	CheckpointsStored int `json:"checkpoints_stored"`
	StoredBytes       int `json:"stored_bytes"`
	// Gathering is set while a gather is in progress.
	Gathering bool `json:"gathering"`
	// Stats are the Manager's counters (checkpoints by reason, requests
	// answered, response bytes, gathers, ...).
	Stats Stats `json:"stats"`
	// Last summarises the most recently gathered snapshot (absent before
	// the first).
	Last *SnapshotSummary `json:"last,omitempty"`
	// LastFailure is the most recent gather given up (absent if none).
	LastFailure *FailureSummary `json:"last_failure,omitempty"`
}

// SnapshotSummary describes a gathered snapshot.
type SnapshotSummary struct {
	// Gather identifies the gather at its gatherer; CN is its cut.
	Gather uint64 `json:"gather"`
	CN     uint64 `json:"cn"`
	// Started and At are when the gather began and completed; AgeSeconds
	// is the time from At to the status.
	Started    time.Time `json:"started"`
	At         time.Time `json:"at"`
	AgeSeconds float64   `json:"age_seconds"`
	Rounds     int       `json:"rounds"`
	// SizeBytes is the total raw size of its checkpoints; InFlight the
	// number of recorded in-flight messages.
	SizeBytes int `json:"size_bytes"`
	InFlight  int `json:"in_flight"`
	// Members are the included nodes (gatherer included), Dead the members
	// left out after a transport error or a timeout, Excluded those left
	// out for another reason. All ascending.
	Members  []node.ID       `json:"members"`
	Dead     []node.ID       `json:"dead"`
	Excluded []ExclusionJSON `json:"excluded"`
}

// ExclusionJSON is an Exclusion with JSON field names.
type ExclusionJSON struct {
	Node   node.ID `json:"node"`
	Reason string  `json:"reason"`
}

// FailureSummary describes a gather given up.
type FailureSummary struct {
	At     time.Time `json:"at"`
	Rounds int       `json:"rounds"`
	Reason string    `json:"reason"`
}

// Summarize describes s; now sets AgeSeconds.
func (s *Snapshot) Summarize(now time.Time) SnapshotSummary {
	sum := SnapshotSummary{Gather: s.Gather, CN: s.CN, Started: s.Started.Round(0), At: s.At.Round(0),
		AgeSeconds: now.Sub(s.At).Seconds(), Rounds: s.Rounds,
		Members: make([]node.ID, 0, len(s.Nodes)), Dead: slices.Clone(s.Dead), Excluded: []ExclusionJSON{}}
	if sum.Dead == nil {
		sum.Dead = []node.ID{}
	}
	for _, n := range s.Nodes {
		sum.Members = append(sum.Members, n.Node)
		sum.SizeBytes += len(n.State)
	}
	for _, c := range s.Channels {
		sum.InFlight += len(c.Messages)
	}
	for _, e := range s.Excluded {
		sum.Excluded = append(sum.Excluded, ExclusionJSON(e))
	}
	return sum
}
