package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// snapshotDoc is the JSON body of `crystalball node`'s GET /snapshot: the
// last neighbourhood snapshot the node gathered, with every member's
// checkpoint both as bytes (restorable with node.DecodeCheckpoint) and
// decoded, the recorded channels, and the service's properties evaluated
// on the snapshot's view. README.md ("Live nodes") documents it.
type snapshotDoc struct {
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

type messageDoc struct {
	Type string          `json:"type"`
	CN   uint64          `json:"cn"`
	Body json.RawMessage `json:"body"`
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
	doc := snapshotDoc{Gatherer: s.Gatherer, SnapshotSummary: s.Summarize(now),
		Nodes: []snapshotNodeDoc{}, Channels: []channelDoc{}, Properties: []propertyDoc{}}
	view, err := s.Decode(spec.New)
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
			cd.Messages = append(cd.Messages, messageDoc{Type: m.Msg.MessageType(), CN: m.CN, Body: body})
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
