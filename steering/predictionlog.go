package steering

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// Shape renders a path with its node IDs replaced by roles — A for the
// first node the path names, B for the second, and so on — so that the
// same scenario predicted by different nodes, on different nodes, or
// found from an initial configuration compares equal, e.g. "A reset
// silent; A app randtree.JoinOverlay; B deliver randtree.Join from A".
// Message bodies are left out: two paths differ in shape when their
// events differ in kind, message type, timer or roles. A timer's name
// counts without its numbers (timerShape): "done3" and "done17", a timer
// per request, are one timer to the shape.
func Shape(path []consequence.ActorAction) string {
	var roles []node.ID
	role := func(id node.ID) string {
		i := slices.Index(roles, id)
		if i < 0 {
			i = len(roles)
			roles = append(roles, id)
		}
		if i < 26 {
			return string(rune('A' + i))
		}
		return fmt.Sprintf("R%d", i+1)
	}
	var b strings.Builder
	for i, a := range path {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(role(a.Node))
		switch a.Kind {
		case consequence.ActDeliver:
			if a.Msg == nil {
				fmt.Fprintf(&b, " transport-error from %s", role(a.Peer))
			} else {
				fmt.Fprintf(&b, " deliver %s from %s", a.Msg.MessageType(), role(a.Peer))
			}
		case consequence.ActTimer:
			b.WriteString(" timer " + timerShape(a.Timer))
		case consequence.ActApp:
			b.WriteString(" app " + a.Msg.MessageType())
		case consequence.ActReset:
			if a.Silent {
				b.WriteString(" reset silent")
			} else {
				b.WriteString(" reset rst")
			}
		case consequence.ActBreak:
			fmt.Fprintf(&b, " break %s", role(a.Peer))
		case consequence.ActDeliverDatagram, consequence.ActDropDatagram:
			verb := "deliver-datagram"
			if a.Kind == consequence.ActDropDatagram {
				verb = "drop-datagram"
			}
			typ := "<nil>"
			if a.Msg != nil {
				typ = a.Msg.MessageType()
			}
			fmt.Fprintf(&b, " %s %s from %s", verb, typ, role(a.Peer))
		case consequence.ActRefuse:
			typ := "<nil>"
			if a.Msg != nil {
				typ = a.Msg.MessageType()
			}
			fmt.Fprintf(&b, " refuse-send %s to %s", typ, role(a.Peer))
		case consequence.ActCrash, consequence.ActRestart, consequence.ActHeal, consequence.ActClockJump:
			// The action's own words after its node ("crash", "clock-jump back").
			_, words, _ := strings.Cut(a.String(), " ")
			b.WriteString(" " + words)
		case consequence.ActPartition:
			fmt.Fprintf(&b, " partition %v", a.Cut)
			if a.Cut == consequence.CutPartial || a.Cut == consequence.CutOneWay {
				b.WriteString(" " + role(a.Peer))
			}
		default:
			fmt.Fprintf(&b, " action(%d)", uint8(a.Kind))
		}
	}
	return b.String()
}

// LoggedPrediction is one distinct predicted violation of a
// PredictionLog: a property and a path shape, with where and when it was
// first predicted.
type LoggedPrediction struct {
	Property string
	// Shape is the path's shape (Shape).
	Shape string
	// First is when a round first predicted it, and Node the predicting
	// node; Nodes are every node that predicted it, ascending.
	First time.Time
	Node  node.ID
	Nodes []node.ID
	// Rounds counts the rounds that predicted it (replays included).
	Rounds int
	// Example is the first prediction of it: its error, path and report;
	// Snapshot the snapshot its round explored from (RoundReport.Snapshot),
	// on whose model the path replays.
	Example  Prediction
	Snapshot *snapshot.Snapshot
}

// PredictionLog collects the predictions of many rounds, of one node or
// many, deduplicated by property and path shape: the distinct violations a
// deep online debugging run found. It is deterministic: entries come in
// the order of the Add calls that first predicted them (chronological when
// rounds are added as they end). Not safe for concurrent use; the zero
// value is ready to use.
type PredictionLog struct {
	entries []LoggedPrediction
	index   map[string]int
}

// Add records the predictions of rep, a round node by ran at time at.
func (l *PredictionLog) Add(at time.Time, by node.ID, rep *RoundReport) {
	if rep == nil {
		return
	}
	if l.index == nil {
		l.index = map[string]int{}
	}
	var counted []int
	for _, p := range rep.Predictions {
		shape := Shape(p.Path)
		key := p.Property + "\x00" + shape
		i, ok := l.index[key]
		if !ok {
			i = len(l.entries)
			l.index[key] = i
			l.entries = append(l.entries, LoggedPrediction{Property: p.Property, Shape: shape, First: at, Node: by, Example: p, Snapshot: rep.Snapshot})
		}
		if slices.Contains(counted, i) {
			continue
		}
		counted = append(counted, i)
		e := &l.entries[i]
		e.Rounds++
		if j, found := slices.BinarySearch(e.Nodes, by); !found {
			e.Nodes = slices.Insert(e.Nodes, j, by)
		}
	}
}

// Entries returns the distinct predictions in the order they were first
// made. The slice is the log's: read it before the next Add.
func (l *PredictionLog) Entries() []LoggedPrediction { return l.entries }

// Len returns the number of distinct predictions.
func (l *PredictionLog) Len() int { return len(l.entries) }
