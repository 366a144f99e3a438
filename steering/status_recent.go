package steering

import (
	"cmp"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// MaxRecentPredictions is how many of its newest predictions a Layer's
// status lists (LayerStatus.Recent).
const MaxRecentPredictions = 8

// PredictionRecord is one prediction of a finished round as a node's
// status lists it: what a person reads first on its /ui page.
type PredictionRecord struct {
	Property string `json:"property"`
	// Kind is "safety" or "liveness".
	Kind  string `json:"kind"`
	Error string `json:"error,omitempty"`
	// Path is the path's steps as text; Rank its rank in its round
	// (1: likeliest); Cut the snapshot's cut and Gatherer its gatherer.
	Path     []string `json:"path,omitempty"`
	Rank     int      `json:"rank,omitempty"`
	Cut      uint64   `json:"cut"`
	Replayed bool     `json:"replayed,omitempty"`
	// Filter is the filter that would stop it at this node ("": none).
	Filter string `json:"filter,omitempty"`
}

// HoldRecord is one kind of event the gate holds now: its budget of
// interventions ran out while a filter (By "filter") or the immediate
// check (By "check") still stopped it, so it is kept from the handler
// until it is safe or the hold ends (see the gate's escalations).
type HoldRecord struct {
	// Event renders the kind as the filter that stops it would ("n9:
	// drop randtree.Join from n13").
	Event string `json:"event"`
	By    string `json:"by"`
	// Filter is the filter that stopped the kind when it was escalated
	// (By "filter").
	Filter string    `json:"filter,omitempty"`
	Since  time.Time `json:"since"`
}

// noteRecent keeps rep's predictions as the newest of LayerStatus.Recent
// (where the round is handed back).
func (l *Layer) noteRecent(snap *snapshot.Snapshot, rep *RoundReport) {
	if len(rep.Predictions) == 0 {
		return
	}
	var add []PredictionRecord
	for _, p := range rep.Predictions {
		r := PredictionRecord{Property: p.Property, Kind: p.Report.Kind, Error: p.Report.Error, Rank: p.Rank, Cut: snap.CN, Replayed: p.Replayed}
		for _, s := range p.Report.Path {
			r.Path = append(r.Path, s.Text)
		}
		if p.Filter != nil {
			r.Filter = p.Filter.String()
		}
		add = append(add, r)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	recent := append(add, l.st.Recent...)
	l.st.Recent = slices.Clip(recent[:min(len(recent), MaxRecentPredictions)])
}

// publishHolds puts the gate's holds in the status when they changed
// (core goroutine, after the gate's counters are read).
func (l *Layer) publishHolds() {
	if l.gate == nil || l.gate.version == l.holdsVersion {
		return
	}
	l.holdsVersion = l.gate.version
	holds := l.gate.holdRecords(l.self)
	l.mu.Lock()
	l.st.Holds = holds
	l.mu.Unlock()
}

// holdRecords lists the kinds the gate holds now (a released kind, which
// runs until its window ends, is not held), ordered by event.
func (c *Controller) holdRecords(self node.ID) []HoldRecord {
	var out []HoldRecord
	for k, e := range c.escalated {
		if !e.free.IsZero() {
			continue
		}
		r := HoldRecord{Event: filterOfKey(self, k, false).String(), By: "check", Since: e.since}
		if e.filter != nil {
			r.By, r.Filter = "filter", e.filter.String()
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b HoldRecord) int { return cmp.Compare(a.Event, b.Event) })
	return out
}
