package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// PredictionFormat names the format of a Prediction document.
const PredictionFormat = "crystalball-prediction/1"

// Prediction is the JSON file written per predicted violation (`crystalball
// node --reports DIR`, `crystalball emulate --reports DIR`, a Writer; docs/live-node.md,
// "Steering a live node") and opened by `crystalball trace show`: the
// prediction, its path as a consequence.ActorReport (fingerprint included)
// and the snapshot it was predicted from — checkpoints, recorded in-flight
// messages (msgpack bodies) and cut time — so Model can rebuild the
// explorer's model and replay the path from that state.
type Prediction struct {
	Format  string  `json:"format"`
	Node    node.ID `json:"node"`
	Service string  `json:"service"`
	Options string  `json:"options"`
	// Fix and Nodes are the service flags the spec was built with, so the
	// model can be rebuilt.
	Fix      string `json:"fix,omitempty"`
	Nodes    int    `json:"nodes,omitempty"`
	Mode     string `json:"mode"`
	Property string `json:"property"`
	Error    string `json:"error"`
	// Shape is the path with node IDs replaced by roles (steering.Shape).
	Shape string `json:"shape,omitempty"`
	// Replayed marks the path of an earlier round that still fails on
	// this snapshot; Filter is the filter that would stop it at Node.
	Replayed bool   `json:"replayed"`
	Filter   string `json:"filter,omitempty"`
	// Rank and Likelihood say how likely the path is among its round's
	// safety predictions (steering.Prediction.Rank: 1 is the likeliest;
	// 0 for a liveness prediction).
	Rank       int                  `json:"rank,omitempty"`
	Likelihood *steering.Likelihood `json:"likelihood,omitempty"`
	// Workload marks a round that issued the service's workload to the
	// nodes it reset (steering.Config.Workload); without it, the reset
	// nodes got their node.Restarter calls.
	Workload bool `json:"workload,omitempty"`
	// Resets, Silent and Breaks are the faults the explorer could inject.
	Resets int  `json:"resets"`
	Silent bool `json:"silent"`
	// StaleConnections marks a model in which a silent reset leaves the
	// peers stale connections (consequence.Faults.StaleConnections): the
	// model of a liveness prediction's walks.
	StaleConnections bool `json:"stale_connections,omitempty"`
	Breaks           int  `json:"breaks"`
	// Refusals is the bound of refused sends along a path
	// (consequence.Faults.Refusals); absent, in reports written before it
	// existed, it is zero. It is part of the model even when the path
	// refuses nothing: a message sent with TrySend hashes differently
	// while it may still be refused.
	Refusals int `json:"refusals,omitempty"`
	// Drops, Losses, Duplicates and Reorders are the bounds of dropped
	// datagrams and of the delivery faults on declared-unreliable messages
	// along a path (consequence.Faults); absent, zero.
	Drops      int `json:"drops,omitempty"`
	Losses     int `json:"losses,omitempty"`
	Duplicates int `json:"duplicates,omitempty"`
	Reorders   int `json:"reorders,omitempty"`
	// Delays is the bound of messages delivered past the model's delay
	// bound along a path (consequence.Faults.Delays); absent, zero.
	Delays int `json:"delays,omitempty"`
	// Lasting is the lasting-fault budgets of the round's model (the ones
	// its node had observed: steering.RoundFaults); absent when none.
	Lasting *Lasting `json:"lasting,omitempty"`
	// Arrivals is the bound of arrivals the model held
	// (steering.Prediction.Arrivals): zero for the snapshot's members
	// alone.
	Arrivals int                     `json:"arrivals,omitempty"`
	Report   consequence.ActorReport `json:"report"`
	// Liveness is set on a liveness prediction (Report.Kind "liveness"):
	// the path enters a dead end at its last step.
	Liveness *DeadEnd `json:"liveness,omitempty"`
	Snapshot Snapshot `json:"snapshot"`
}

// DeadEnd is what a liveness prediction report adds: MaceMC's critical
// transition and the nearest live path (steering.Critical).
type DeadEnd struct {
	// Verdict is "C1": the state before the critical step recovers (a walk
	// from it reaches a state where every liveness property holds), the
	// state after it does not.
	Verdict string `json:"verdict"`
	// CriticalStep is the step of Report.Path (1-based) that is the
	// critical transition.
	CriticalStep int `json:"critical_step"`
	// LivePath is the nearest live path from the snapshot: the first
	// CriticalStep-1 steps of Report.Path, then a walk that reached a live
	// state.
	LivePath []consequence.ActionRecord `json:"live_path"`
	// Failing are the liveness properties that failed at the end of the
	// suspect walk, with why ("Property: error").
	Failing []string `json:"failing,omitempty"`
	// Walks and Live count the round's walks and those that reached a live
	// state; Probes the states the critical-transition search probed.
	Walks  int `json:"walks"`
	Live   int `json:"live"`
	Probes int `json:"probes"`
}

// Source is what a prediction report says about the node and service
// that made it, and what NewPrediction needs to check its path.
type Source struct {
	// Node is the predicting node.
	Node node.ID
	// Service is the service's name (cli.Service.Name): what 'trace show'
	// looks the service up by.
	Service string
	// Fix and Nodes are the service flags its Spec was built with, so the
	// model can be rebuilt; Options describes its configuration.
	Fix     string
	Nodes   int
	Options string
	// Spec is the service.
	Spec node.Spec
	// Mode is the steering mode of the round.
	Mode steering.Mode
	// Workload and Faults are the controller's (steering.Config).
	Workload func(id node.ID, restart bool) []node.Message
	Faults   consequence.Faults
	// TimerSkew is the controller's declared timer skew
	// (steering.Config.TimerSkew).
	TimerSkew time.Duration
}

// NewPrediction renders prediction p of a round on snapshot snap (the
// round's RoundReport.Snapshot), checking that its path replays on the
// snapshot's model and recording the fingerprint it reaches.
func NewPrediction(src Source, snap *snapshot.Snapshot, p steering.Prediction) (Prediction, error) {
	doc, err := NewSnapshot(snap, src.Spec, snap.At)
	if err != nil {
		return Prediction{}, fmt.Errorf("report: rendering the snapshot: %w", err)
	}
	faults := src.Faults.WithLasting(p.Faults)  // the round's lasting faults
	faults.StaleConnections = p.Critical != nil // the walks' model
	m, err := steering.SnapshotModelWith(src.Spec, snap, steering.SnapshotOptions{Workload: src.Workload, Faults: faults, Arrivals: p.Arrivals, TimerSkew: src.TimerSkew})
	if err != nil {
		return Prediction{}, fmt.Errorf("report: rebuilding the model: %w", err)
	}
	r := p.Report
	fp, err := PathFingerprint(m, r)
	if err != nil {
		return Prediction{}, fmt.Errorf("report: the path does not replay on the snapshot's model: %w", err)
	}
	r.Fingerprint = fp
	pd := Prediction{Format: PredictionFormat, Node: src.Node, Service: src.Service, Options: src.Options,
		Fix: src.Fix, Nodes: src.Nodes, Mode: src.Mode.String(), Property: p.Property, Error: r.Error,
		Shape: steering.Shape(p.Path), Replayed: p.Replayed, Workload: src.Workload != nil,
		Resets: faults.Resets, Silent: faults.SilentResets, StaleConnections: faults.StaleConnections, Breaks: faults.Breaks, Refusals: faults.Refusals,
		Drops: faults.Drops, Losses: faults.Losses, Duplicates: faults.Duplicates, Reorders: faults.Reorders, Delays: faults.Delays,
		Lasting: LastingOf(faults, src.TimerSkew), Arrivals: p.Arrivals, Report: r, Snapshot: doc}
	if p.Filter != nil {
		pd.Filter = p.Filter.String()
	}
	if p.Rank > 0 {
		l := p.Likelihood
		pd.Rank, pd.Likelihood = p.Rank, &l
	}
	if c := p.Critical; c != nil {
		if len(c.LiveReport) > 0 {
			if _, err := PathFingerprint(m, consequence.ActorReport{Path: c.LiveReport}); err != nil {
				return Prediction{}, fmt.Errorf("report: the nearest live path does not replay on the snapshot's model: %w", err)
			}
		}
		pd.Liveness = &DeadEnd{Verdict: c.Verdict.String(), CriticalStep: c.Step + 1, LivePath: c.LiveReport,
			Walks: c.Walks, Live: c.Live, Probes: c.Probes}
		for _, f := range c.Failing {
			pd.Liveness.Failing = append(pd.Liveness.Failing, fmt.Sprintf("%s: %v", f.Property, f.Err))
		}
	}
	return pd, nil
}

// WriteFile writes pd as indented JSON to the file name (mode 0644),
// atomically: to a temporary file beside it, synced, then renamed over
// name, and the directory synced; a kill at any moment leaves the old
// file or the new one, never part of it.
func (pd Prediction) WriteFile(name string) error {
	b, err := json.MarshalIndent(pd, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(name)
	tmp, err := writeTemp(dir, "."+filepath.Base(name)+".*.tmp", append(b, '\n'))
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("report: %w", err)
	}
	return syncDir(dir)
}

// Model rebuilds the model the report's path replays on
// (consequence.ActorModel.ReplayReport): the snapshot it holds, explored
// with spec — the service the report names, configured by the flags it
// records — and, if the round used it, workload. Its errors wrap
// ErrFormat for a document of another format.
func (doc Prediction) Model(spec node.Spec, workload func(id node.ID, restart bool) []node.Message) (*consequence.ActorModel, error) {
	if doc.Format != PredictionFormat {
		return nil, fmt.Errorf("%w: not a prediction report (format %s, want %q)", ErrFormat, Quote(doc.Format), PredictionFormat)
	}
	if f := doc.Snapshot.Format; f != SnapshotFormat && f != "" { // reports of crystalball-prediction/1 before the snapshot's format
		return nil, fmt.Errorf("%w: unknown snapshot format %s (want %q)", ErrFormat, Quote(f), SnapshotFormat)
	}
	reg, err := spec.Registry()
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	s, err := doc.Snapshot.Restore(reg)
	if err != nil {
		return nil, err
	}
	if !doc.Workload {
		workload = nil
	}
	faults, err := doc.Lasting.Apply(consequence.Faults{Resets: doc.Resets, SilentResets: doc.Silent, StaleConnections: doc.StaleConnections, Breaks: doc.Breaks, Refusals: doc.Refusals,
		Drops: doc.Drops, Losses: doc.Losses, Duplicates: doc.Duplicates, Reorders: doc.Reorders, Delays: doc.Delays})
	if err != nil {
		return nil, err
	}
	return steering.SnapshotModelWith(spec, s, steering.SnapshotOptions{Workload: workload, Faults: faults, Arrivals: doc.Arrivals, TimerSkew: doc.Lasting.Skew()})
}

// PathFingerprint replays r's path on m and returns the fingerprint of the
// state it reaches.
func PathFingerprint(m *consequence.ActorModel, r consequence.ActorReport) (string, error) {
	g := m.Start()
	for i, rec := range r.Path {
		a, err := m.Action(rec)
		if err != nil {
			return "", fmt.Errorf("step %d: %w", i+1, err)
		}
		next, ok := m.Next(g, a)
		if !ok {
			return "", fmt.Errorf("step %d (%v) is not enabled", i+1, a)
		}
		g = next
	}
	return m.Fingerprint(g).String(), nil
}
