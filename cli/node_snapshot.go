package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.uber.org/zap"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// snapshotFormat names the format of a snapshotDoc.
const snapshotFormat = "crystalball-snapshot/1"

// snapshotDoc is the JSON body of `crystalball node`'s GET /snapshot: the
// last neighbourhood snapshot the node gathered, with every member's
// checkpoint both as bytes (restorable with node.DecodeCheckpoint) and
// decoded, the recorded channels, and the service's properties evaluated
// on the snapshot's view. README.md ("Live nodes") documents it.
type snapshotDoc struct {
	// Format is snapshotFormat.
	Format   string  `json:"format"`
	Gatherer node.ID `json:"gatherer"`
	snapshot.SnapshotSummary
	Nodes      []snapshotNodeDoc `json:"nodes"`
	Channels   []channelDoc      `json:"channels"`
	Properties []propertyDoc     `json:"properties"`
}

// snapshotNodeDoc is one member's checkpoint.
type snapshotNodeDoc struct {
	ID node.ID `json:"id"`
	// CN is the checkpoint's own number (≥ the snapshot's cut).
	CN         uint64 `json:"cn"`
	SizeBytes  int    `json:"size_bytes"`
	Checkpoint []byte `json:"checkpoint"`
	// Summary, State and Timers are the decoded checkpoint: the service
	// state's String(), its exported fields and its scheduled timers.
	Summary string          `json:"summary,omitempty"`
	State   json.RawMessage `json:"state"`
	Timers  []timerDoc      `json:"timers"`
}

type timerDoc struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
}

// channelDoc is the recorded state of the channel From → To at the cut.
type channelDoc struct {
	From     node.ID      `json:"from"`
	To       node.ID      `json:"to"`
	Complete bool         `json:"complete"`
	Lossy    bool         `json:"lossy"`
	Messages []messageDoc `json:"messages"`
}

// messageDoc is an in-flight message: Body is its JSON rendering, Msgpack
// the service registry's encoding (Registry.DecodeMessage restores it).
type messageDoc struct {
	Type    string          `json:"type"`
	CN      uint64          `json:"cn"`
	Body    json.RawMessage `json:"body"`
	Msgpack []byte          `json:"msgpack"`
}

// propertyDoc is a property evaluated on the snapshot's view. A liveness
// property that does not hold at one cut is not a violation by itself.
type propertyDoc struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Holds bool   `json:"holds"`
	Error string `json:"error,omitempty"`
}

// newSnapshotDoc renders s for spec's service; now sets its age.
func newSnapshotDoc(s *snapshot.Snapshot, spec node.Spec, now time.Time) (snapshotDoc, error) {
	doc := snapshotDoc{Format: snapshotFormat, Gatherer: s.Gatherer, SnapshotSummary: s.Summarize(now),
		Nodes: []snapshotNodeDoc{}, Channels: []channelDoc{}, Properties: []propertyDoc{}}
	view, err := s.Decode(spec.New)
	if err != nil {
		return doc, err
	}
	reg, err := spec.Registry()
	if err != nil {
		return doc, err
	}
	for _, nc := range s.Nodes {
		st := view.State(nc.Node)
		nd := snapshotNodeDoc{ID: nc.Node, CN: nc.CN, SizeBytes: len(nc.State), Checkpoint: nc.State, Timers: []timerDoc{}}
		if str, ok := st.Service.(fmt.Stringer); ok {
			nd.Summary = str.String()
		}
		if nd.State, err = json.Marshal(st.Service); err != nil {
			return doc, fmt.Errorf("state of %v: %w", nc.Node, err)
		}
		for _, tm := range st.Timers {
			nd.Timers = append(nd.Timers, timerDoc{Name: tm.Name, At: tm.At})
		}
		doc.Nodes = append(doc.Nodes, nd)
	}
	for _, c := range s.Channels {
		cd := channelDoc{From: c.From, To: c.To, Complete: c.Complete, Lossy: c.Lossy, Messages: []messageDoc{}}
		for _, m := range c.Messages {
			body, err := json.Marshal(m.Msg)
			if err != nil {
				return doc, fmt.Errorf("message %s on %v→%v: %w", m.Msg.MessageType(), c.From, c.To, err)
			}
			raw, err := reg.EncodeMessage(m.Msg)
			if err != nil {
				return doc, fmt.Errorf("message %s on %v→%v: %w", m.Msg.MessageType(), c.From, c.To, err)
			}
			cd.Messages = append(cd.Messages, messageDoc{Type: m.Msg.MessageType(), CN: m.CN, Body: body, Msgpack: raw})
		}
		doc.Channels = append(doc.Channels, cd)
	}
	for _, p := range spec.Properties {
		pd := propertyDoc{Name: p.Name, Kind: p.Kind.String(), Holds: true}
		if err := p.Check(view); err != nil {
			pd.Holds, pd.Error = false, err.Error()
		}
		doc.Properties = append(doc.Properties, pd)
	}
	return doc, nil
}

// predictionFormat names the format of the files --reports writes.
const predictionFormat = "crystalball-prediction/1"

// predictionDoc is the JSON file `crystalball node --reports DIR` and
// `crystalball emulate --reports DIR` write per predicted violation
// (README.md, "Steering a live node"), and `crystalball trace show` opens:
// the prediction, its path as a consequence.ActorReport (fingerprint
// included) and the snapshot it was predicted from — checkpoints, recorded
// in-flight messages (msgpack bodies) and cut time — so predictionModel can
// rebuild the explorer's model and replay the path from that state.
type predictionDoc struct {
	Format  string  `json:"format"`
	Node    node.ID `json:"node"`
	Service string  `json:"service"`
	Options string  `json:"options"`
	// Fix and Nodes are the service flags the spec was built with
	// (lookupService), so the model can be rebuilt.
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
	// Workload marks a round that issued the service's workload to the
	// nodes it reset (steering.Config.Workload); without it, the reset
	// nodes got their node.Restarter calls.
	Workload bool `json:"workload,omitempty"`
	// Resets, Silent and Breaks are the faults the explorer could inject.
	Resets   int                     `json:"resets"`
	Silent   bool                    `json:"silent"`
	Breaks   int                     `json:"breaks"`
	Report   consequence.ActorReport `json:"report"`
	Snapshot snapshotDoc             `json:"snapshot"`
}

// predictionSource is what a prediction report says about the node and
// service that made it.
type predictionSource struct {
	node    node.ID
	service string
	fix     string
	nodes   int
	options string
	spec    node.Spec
	mode    steering.Mode
	// workload and faults are the controller's (steering.Config).
	workload func(id node.ID, restart bool) []node.Message
	faults   consequence.Faults
}

// newPredictionDoc renders prediction p of a round on snapshot snap (the
// round's RoundReport.Snapshot), checking that its path replays on the
// snapshot's model and recording the fingerprint it reaches.
func newPredictionDoc(src predictionSource, snap *snapshot.Snapshot, p steering.Prediction) (predictionDoc, error) {
	doc, err := newSnapshotDoc(snap, src.spec, snap.At)
	if err != nil {
		return predictionDoc{}, fmt.Errorf("rendering the snapshot: %w", err)
	}
	m, err := steering.SnapshotModel(src.spec, snap, src.workload, src.faults)
	if err != nil {
		return predictionDoc{}, fmt.Errorf("rebuilding the model: %w", err)
	}
	r := p.Report
	fp, err := pathFingerprint(m, r)
	if err != nil {
		return predictionDoc{}, fmt.Errorf("the path does not replay on the snapshot's model: %w", err)
	}
	r.Fingerprint = fp
	pd := predictionDoc{Format: predictionFormat, Node: src.node, Service: src.service, Options: src.options,
		Fix: src.fix, Nodes: src.nodes, Mode: src.mode.String(), Property: p.Property, Error: r.Error,
		Shape: steering.Shape(p.Path), Replayed: p.Replayed, Workload: src.workload != nil,
		Resets: src.faults.Resets, Silent: src.faults.SilentResets, Breaks: src.faults.Breaks, Report: r, Snapshot: doc}
	if p.Filter != nil {
		pd.Filter = p.Filter.String()
	}
	return pd, nil
}

// writePredictionDoc writes pd as indented JSON to the file name.
func writePredictionDoc(name string, pd predictionDoc) error {
	b, err := json.MarshalIndent(pd, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(name, append(b, '\n'), 0o644)
}

// predictionModel rebuilds, from a report --reports wrote, the model its
// path replays on (consequence.ActorModel.ReplayReport), with svc, the
// service the report names configured by the flags it records.
func predictionModel(doc predictionDoc, svc serviceRun) (*consequence.ActorModel, error) {
	if doc.Format != predictionFormat {
		return nil, fmt.Errorf("not a prediction report (format %q, want %q)", doc.Format, predictionFormat)
	}
	if f := doc.Snapshot.Format; f != snapshotFormat && f != "" { // reports of crystalball-prediction/1 before the snapshot's format
		return nil, fmt.Errorf("unknown snapshot format %q (want %q)", f, snapshotFormat)
	}
	reg, err := svc.spec.Registry()
	if err != nil {
		return nil, err
	}
	s := &snapshot.Snapshot{Gatherer: doc.Snapshot.Gatherer, CN: doc.Snapshot.CN, At: doc.Snapshot.At}
	for _, n := range doc.Snapshot.Nodes {
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: n.ID, CN: n.CN, State: n.Checkpoint})
	}
	for _, c := range doc.Snapshot.Channels {
		ch := snapshot.Channel{From: c.From, To: c.To, Complete: c.Complete, Lossy: c.Lossy}
		for _, m := range c.Messages {
			msg, err := reg.DecodeMessage(m.Type, m.Msgpack)
			if err != nil {
				return nil, fmt.Errorf("message %s on %v→%v: %w", m.Type, c.From, c.To, err)
			}
			ch.Messages = append(ch.Messages, node.Envelope{From: c.From, To: c.To, CN: m.CN, Msg: msg})
		}
		s.Channels = append(s.Channels, ch)
	}
	var workload func(node.ID, bool) []node.Message
	if doc.Workload {
		workload = svc.workload
	}
	return steering.SnapshotModel(svc.spec, s, workload, consequence.Faults{Resets: doc.Resets, SilentResets: doc.Silent, Breaks: doc.Breaks})
}

// reportWriter writes a predictionDoc per prediction of a steering round
// into dir (steering.LayerConfig.OnRound). It runs on the steering layer's
// round goroutine only, so seq needs no lock.
type reportWriter struct {
	dir string
	src predictionSource
	log *zap.Logger
	seq int
}

// write writes the reports of one round; failures are logged, not fatal.
func (w *reportWriter) write(s *snapshot.Snapshot, rep *steering.RoundReport) {
	if len(rep.Predictions) == 0 {
		return
	}
	if rep.Snapshot != nil {
		s = rep.Snapshot // with the last known members the round added
	}
	for _, p := range rep.Predictions {
		pd, err := newPredictionDoc(w.src, s, p)
		if err != nil {
			w.log.Error("steering report", zap.String("property", p.Property), zap.Error(err))
			continue
		}
		w.seq++
		name := filepath.Join(w.dir, fmt.Sprintf("prediction-%v-cut%d-%d.json", w.src.node, s.CN, w.seq))
		if err := writePredictionDoc(name, pd); err != nil {
			w.log.Error("steering report: writing", zap.String("file", name), zap.Error(err))
			continue
		}
		w.log.Info("steering report written", zap.String("file", name), zap.String("property", p.Property))
	}
}

// pathFingerprint replays r's path on m and returns the fingerprint of the
// state it reaches.
func pathFingerprint(m *consequence.ActorModel, r consequence.ActorReport) (string, error) {
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
