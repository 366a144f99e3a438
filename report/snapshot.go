package report

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// SnapshotFormat names the format of a Snapshot.
const SnapshotFormat = "crystalball-snapshot/1"

// Snapshot is a gathered neighbourhood snapshot as a document: the JSON
// body of a live node's GET /snapshot (package status) and the snapshot
// inside every Prediction. It holds every member's checkpoint both as bytes
// (restorable with node.DecodeCheckpoint) and decoded, the recorded
// channels, and the service's properties evaluated on the snapshot's view.
// docs/live-node.md ("The status server: --http", GET /snapshot)
// documents its fields. Restore turns it back
// into a snapshot.Snapshot.
type Snapshot struct {
	// Format is SnapshotFormat.
	Format   string  `json:"format"`
	Gatherer node.ID `json:"gatherer"`
	snapshot.SnapshotSummary
	Nodes      []SnapshotNode   `json:"nodes"`
	Channels   []Channel        `json:"channels"`
	Properties []PropertyResult `json:"properties"`
}

// SnapshotNode is one member's checkpoint in a Snapshot.
type SnapshotNode struct {
	ID node.ID `json:"id"`
	// CN is the checkpoint's own number (≥ the snapshot's cut).
	CN         uint64 `json:"cn"`
	SizeBytes  int    `json:"size_bytes"`
	Checkpoint []byte `json:"checkpoint"`
	// Peers are the nodes it exchanged messages with recently, members
	// or not (snapshot.NodeCheckpoint.Peers).
	Peers []node.ID `json:"peers,omitempty"`
	// Summary, State and Timers are the decoded checkpoint: the service
	// state's String(), its exported fields and its scheduled timers.
	Summary string          `json:"summary,omitempty"`
	State   json.RawMessage `json:"state"`
	Timers  []Timer         `json:"timers"`
}

// Timer is a scheduled timer of a checkpointed node.
type Timer struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
}

// Channel is the recorded state of the channel From → To at the cut.
type Channel struct {
	From     node.ID   `json:"from"`
	To       node.ID   `json:"to"`
	Complete bool      `json:"complete"`
	Lossy    bool      `json:"lossy"`
	Messages []Message `json:"messages"`
}

// Message is an in-flight message: Body is its JSON rendering, Msgpack
// the service registry's encoding (Registry.DecodeMessage restores it).
type Message struct {
	Type    string          `json:"type"`
	CN      uint64          `json:"cn"`
	Body    json.RawMessage `json:"body"`
	Msgpack []byte          `json:"msgpack"`
}

// PropertyResult is a property evaluated on the snapshot's view. A liveness
// property that does not hold at one cut is not a violation by itself.
type PropertyResult struct {
	Name  string `json:"name"`
	Kind  string `json:"kind"`
	Holds bool   `json:"holds"`
	Error string `json:"error,omitempty"`
}

// NewSnapshot renders s for spec's service; now sets its age. Its errors
// (a checkpoint or message the spec cannot decode or encode) are
// prefixed "report:".
func NewSnapshot(s *snapshot.Snapshot, spec node.Spec, now time.Time) (Snapshot, error) {
	doc := Snapshot{Format: SnapshotFormat, Gatherer: s.Gatherer, SnapshotSummary: s.Summarize(now),
		Nodes: []SnapshotNode{}, Channels: []Channel{}, Properties: []PropertyResult{}}
	view, err := s.Decode(spec.New)
	if err != nil {
		return doc, fmt.Errorf("report: %w", err)
	}
	reg, err := spec.Registry()
	if err != nil {
		return doc, fmt.Errorf("report: %w", err)
	}
	for _, nc := range s.Nodes {
		st := view.State(nc.Node)
		nd := SnapshotNode{ID: nc.Node, CN: nc.CN, SizeBytes: len(nc.State), Checkpoint: nc.State, Peers: nc.Peers, Timers: []Timer{}}
		nd.Summary = node.Summary(st.Service)
		if nd.State, err = json.Marshal(st.Service); err != nil {
			return doc, fmt.Errorf("report: state of %v: %w", nc.Node, err)
		}
		for _, tm := range st.Timers {
			nd.Timers = append(nd.Timers, Timer{Name: tm.Name, At: tm.At})
		}
		doc.Nodes = append(doc.Nodes, nd)
	}
	for _, c := range s.Channels {
		cd := Channel{From: c.From, To: c.To, Complete: c.Complete, Lossy: c.Lossy, Messages: []Message{}}
		for _, m := range c.Messages {
			body, err := json.Marshal(m.Msg)
			if err != nil {
				return doc, fmt.Errorf("report: message %s on %v→%v: %w", m.Msg.MessageType(), c.From, c.To, err)
			}
			raw, err := reg.EncodeMessage(m.Msg)
			if err != nil {
				return doc, fmt.Errorf("report: message %s on %v→%v: %w", m.Msg.MessageType(), c.From, c.To, err)
			}
			cd.Messages = append(cd.Messages, Message{Type: m.Msg.MessageType(), CN: m.CN, Body: body, Msgpack: raw})
		}
		doc.Channels = append(doc.Channels, cd)
	}
	for _, p := range spec.Properties {
		pd := PropertyResult{Name: p.Name, Kind: p.Kind.String(), Holds: true}
		if err := p.Check(view); err != nil {
			pd.Holds, pd.Error = false, err.Error()
		}
		doc.Properties = append(doc.Properties, pd)
	}
	return doc, nil
}

// Restore turns the document back into the snapshot it renders: the
// members' checkpoints and the channels' messages, decoded with reg (the
// service's registry). The result is what Decode, steering.SnapshotModel
// and the explorer take. A message reg cannot decode is an error wrapping
// the registry's.
func (doc Snapshot) Restore(reg *node.Registry) (*snapshot.Snapshot, error) {
	s := &snapshot.Snapshot{Gatherer: doc.Gatherer, CN: doc.CN, At: doc.At}
	for _, n := range doc.Nodes {
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: n.ID, CN: n.CN, State: n.Checkpoint, Peers: n.Peers})
	}
	for _, c := range doc.Channels {
		ch := snapshot.Channel{From: c.From, To: c.To, Complete: c.Complete, Lossy: c.Lossy}
		for _, m := range c.Messages {
			msg, err := reg.DecodeMessage(m.Type, m.Msgpack)
			if err != nil {
				return nil, fmt.Errorf("report: message %s on %v→%v: %w", m.Type, c.From, c.To, err)
			}
			ch.Messages = append(ch.Messages, node.Envelope{From: c.From, To: c.To, CN: m.CN, Msg: msg})
		}
		s.Channels = append(s.Channels, ch)
	}
	return s, nil
}
