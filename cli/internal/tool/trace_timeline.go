package tool

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
)

// timeline is a replayed run that the Mdb commands of 'trace show' and
// 'trace debug' step through: a path of a check or prediction report
// replayed on its model (with every state), or the events of an emulation
// trace (without states: the trace holds fingerprints only).
type timeline struct {
	// head describes the run (the first lines 'trace show' prints).
	head []string
	// m is the model the path replays on; nil for an emulation trace.
	m *consequence.ActorModel
	// rep is the replayed report (zero for an emulation trace).
	rep consequence.ActorReport
	// steps are the path's steps; step i (1-based) is steps[i-1].
	steps []tstep
	// states[i] is the state after step i (states[0]: the start); nil
	// for an emulation trace.
	states []*consequence.GlobalState
	nodes  []node.ID
	// critical is the critical transition's step (1-based; 0: none) and
	// dead the dead end it belongs to, for a liveness report.
	critical int
	dead     *report.DeadEnd
	// live is the nearest live path replayed (nil: none).
	live *timeline
	// graph is the event graph, built on first use.
	graph *eventGraph
	// rerunCfg is the emulation an emulation trace's header names (nil:
	// no header), raw the trace's step lines, to check a re-run against,
	// and rerunCache the states of the last few re-runs, by step.
	rerunCfg   *emulation.Config
	raw        []string
	rerunCache map[int]*rerunView
}

// tstep is one step of a timeline.
type tstep struct {
	// text is how the step reads ("n13 deliver randtree.Join from n9").
	text string
	// node is the node the step happens to (the receiver of a delivery).
	node node.ID
	// kind is the action's kind (consequence.ActionRecord.Kind, or the
	// emulation trace's event word), peer a delivery's sender or a
	// break's other end, msg the message type or timer name.
	kind string
	peer node.ID
	msg  string
	// sends and set are the messages the step sent and the timers it
	// set, when the file says (an emulation trace written with
	// emulation.Config.TraceCauses); hash is the node's state hash after
	// an emulation step.
	sends []traceSend
	set   []string
	hash  string
}

// traceSend is one message an emulation step sent.
type traceSend struct {
	to       node.ID
	msg      string
	datagram bool
}

// replayTimeline replays recs from m's start, keeping every state; a step
// that does not decode or is not enabled is an error naming it.
func replayTimeline(m *consequence.ActorModel, recs []consequence.ActionRecord) (*timeline, error) {
	tl := &timeline{m: m, nodes: m.Nodes(), states: make([]*consequence.GlobalState, 1, len(recs)+1), steps: make([]tstep, 0, len(recs))}
	g := m.Start()
	tl.states[0] = g
	for i, rec := range recs {
		a, err := m.Action(rec)
		if err != nil {
			return nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		next, ok := m.Next(g, a)
		if !ok {
			return nil, fmt.Errorf("step %d (%v) is not enabled", i+1, a)
		}
		st := tstep{text: a.String(), node: a.Node, kind: rec.Kind, peer: a.Peer, msg: rec.Type}
		if rec.Kind == "timer" {
			st.msg = rec.Timer
		}
		tl.steps = append(tl.steps, st)
		tl.states = append(tl.states, next)
		g = next
	}
	return tl, nil
}

// withDeadEnd attaches a liveness report's critical step and nearest live
// path (replayed on the same model) to tl.
func (tl *timeline) withDeadEnd(d *report.DeadEnd) error {
	if d == nil {
		return nil
	}
	if d.CriticalStep < 0 || d.CriticalStep > len(tl.steps) {
		return fmt.Errorf("critical step %d outside the path's %d steps", d.CriticalStep, len(tl.steps))
	}
	tl.critical, tl.dead = d.CriticalStep, d
	if len(d.LivePath) > 0 {
		live, err := replayTimeline(tl.m, d.LivePath)
		if err != nil {
			return fmt.Errorf("nearest live path: %w", err)
		}
		tl.live = live
	}
	return nil
}

// hasNode reports whether id is one of the run's nodes.
func (tl *timeline) hasNode(id node.ID) bool {
	for _, n := range tl.nodes {
		if n == id {
			return true
		}
	}
	return false
}

// involves reports whether step i (1-based) is one of id's events: it
// happens to id (its own timers and calls, a delivery to it, its reset),
// or it is a break of one of id's connections.
func (tl *timeline) involves(i int, id node.ID) bool {
	s := tl.steps[i-1]
	return s.node == id || (s.kind == "break" && s.peer == id)
}

// stepLine renders step i (1-based) as the listing prints it, the
// critical step marked.
func (tl *timeline) stepLine(i int) string {
	mark := ""
	if i == tl.critical {
		mark = "   <- critical transition"
	}
	return fmt.Sprintf("%3d. %s%s", i, tl.steps[i-1].text, mark)
}
