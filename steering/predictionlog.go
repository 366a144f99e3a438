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
	var roles shapeRoles
	var b strings.Builder
	for i, a := range path {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(roles.role(a.Node))
		b.WriteString(actionShape(a, &roles))
	}
	return b.String()
}

// shapeRoles names the nodes of a path by role, in the order the path
// first names them: A, B, ... Z, then R27, R28, ...
type shapeRoles struct {
	ids []node.ID
}

// role returns id's role, giving it the next one if it has none yet.
func (r *shapeRoles) role(id node.ID) string {
	i := slices.Index(r.ids, id)
	if i < 0 {
		i = len(r.ids)
		r.ids = append(r.ids, id)
	}
	if i < 26 {
		return string(rune('A' + i))
	}
	return fmt.Sprintf("R%d", i+1)
}

// actionShape renders a after its node's role: its kind and what the
// shape compares of it (message type, timer, the roles of its peers).
func actionShape(a consequence.ActorAction, roles *shapeRoles) string {
	if render, ok := actionShapes[a.Kind]; ok {
		return render(a, roles)
	}
	return fmt.Sprintf(" action(%d)", uint8(a.Kind))
}

// actionShapes holds, per kind of action, how Shape renders it.
var actionShapes = map[consequence.ActorActionKind]func(consequence.ActorAction, *shapeRoles) string{
	consequence.ActDeliver:         deliveryShape,
	consequence.ActTimer:           timerActionShape,
	consequence.ActApp:             appShape,
	consequence.ActReset:           resetShape,
	consequence.ActBreak:           breakShape,
	consequence.ActDeliverDatagram: datagramShape,
	consequence.ActDropDatagram:    datagramShape,
	consequence.ActRefuse:          refusalShape,
	consequence.ActCrash:           ownWordsShape,
	consequence.ActRestart:         ownWordsShape,
	consequence.ActHeal:            ownWordsShape,
	consequence.ActClockJump:       ownWordsShape,
	consequence.ActPartition:       partitionShape,
}

// deliveryShape renders a delivery by its message type, or a transport
// error, and the sender's role.
func deliveryShape(a consequence.ActorAction, roles *shapeRoles) string {
	if a.Msg == nil {
		return fmt.Sprintf(" transport-error from %s", roles.role(a.Peer))
	}
	return fmt.Sprintf(" deliver %s from %s", a.Msg.MessageType(), roles.role(a.Peer))
}

// timerActionShape renders a timer by its name without numbers.
func timerActionShape(a consequence.ActorAction, _ *shapeRoles) string {
	return " timer " + timerShape(a.Timer)
}

// appShape renders an application call by its message type.
func appShape(a consequence.ActorAction, _ *shapeRoles) string { return " app " + a.Msg.MessageType() }

// resetShape renders a reset as silent or with a reset (rst) sent.
func resetShape(a consequence.ActorAction, _ *shapeRoles) string {
	if a.Silent {
		return " reset silent"
	}
	return " reset rst"
}

// breakShape renders a broken connection by the peer's role.
func breakShape(a consequence.ActorAction, roles *shapeRoles) string {
	return fmt.Sprintf(" break %s", roles.role(a.Peer))
}

// datagramShape renders a datagram delivered or dropped by its type and
// the sender's role.
func datagramShape(a consequence.ActorAction, roles *shapeRoles) string {
	verb := "deliver-datagram"
	if a.Kind == consequence.ActDropDatagram {
		verb = "drop-datagram"
	}
	return fmt.Sprintf(" %s %s from %s", verb, messageTypeOrNil(a.Msg), roles.role(a.Peer))
}

// refusalShape renders a refused send by its type and the peer's role.
func refusalShape(a consequence.ActorAction, roles *shapeRoles) string {
	return fmt.Sprintf(" refuse-send %s to %s", messageTypeOrNil(a.Msg), roles.role(a.Peer))
}

// messageTypeOrNil is m's type, "<nil>" for no message.
func messageTypeOrNil(m node.Message) string {
	if m == nil {
		return "<nil>"
	}
	return m.MessageType()
}

// ownWordsShape renders a crash, restart, heal or clock jump in the
// action's own words after its node ("crash", "clock-jump back").
func ownWordsShape(a consequence.ActorAction, _ *shapeRoles) string {
	_, words, _ := strings.Cut(a.String(), " ")
	return " " + words
}

// partitionShape renders a partition by its cut, and the peer's role for
// a cut that names one.
func partitionShape(a consequence.ActorAction, roles *shapeRoles) string {
	s := fmt.Sprintf(" partition %v", a.Cut)
	if a.Cut == consequence.CutPartial || a.Cut == consequence.CutOneWay {
		s += " " + roles.role(a.Peer)
	}
	return s
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
		i := l.entryFor(at, by, rep, p)
		if slices.Contains(counted, i) {
			continue
		}
		counted = append(counted, i)
		l.entries[i].countRound(by)
	}
}

// entryFor returns the index of p's entry, by its property and shape,
// adding one first predicted by node by at time at in round rep if it is
// new.
func (l *PredictionLog) entryFor(at time.Time, by node.ID, rep *RoundReport, p Prediction) int {
	shape := Shape(p.Path)
	key := p.Property + "\x00" + shape
	i, ok := l.index[key]
	if !ok {
		i = len(l.entries)
		l.index[key] = i
		l.entries = append(l.entries, LoggedPrediction{Property: p.Property, Shape: shape, First: at, Node: by, Example: p, Snapshot: rep.Snapshot})
	}
	return i
}

// countRound counts one more round, by node by, that predicted e.
func (e *LoggedPrediction) countRound(by node.ID) {
	e.Rounds++
	if j, found := slices.BinarySearch(e.Nodes, by); !found {
		e.Nodes = slices.Insert(e.Nodes, j, by)
	}
}

// Entries returns the distinct predictions in the order they were first
// made. The slice is the log's: read it before the next Add.
func (l *PredictionLog) Entries() []LoggedPrediction { return l.entries }

// Len returns the number of distinct predictions.
func (l *PredictionLog) Len() int { return len(l.entries) }
