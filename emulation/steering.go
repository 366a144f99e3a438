package emulation

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// SteeringConfig runs a steering.Controller beside every emulated node (see
// the package documentation, "Steering"). Rounds start from the snapshots
// the node gathers, so it needs Config.Snapshots.
type SteeringConfig struct {
	// Controller configures every node's controller. Spec and Workload,
	// when unset, are the emulator's.
	Controller steering.Config
	// Immediate turns on the immediate safety check before every message,
	// timer and application call a node handles (in any mode).
	Immediate bool
	// CostPerState is the virtual time a round is charged per state it
	// explored: its new filters take effect that long after the snapshot
	// completed (default 10µs, about what one core explores from a
	// 25-node RandTree state; see docs/PERFORMANCE.md).
	CostPerState time.Duration
	// PostponeDelay is how long a filtered or vetoed timer or application
	// call is put off before it is tried again (default 500ms).
	PostponeDelay time.Duration
	// Predictors selects the nodes that run rounds; nil means every node.
	// The others still apply the immediate check when it is on.
	Predictors func(id node.ID) bool
	// OnRound, when non-nil, sees every round's report at the virtual time
	// the round started. It runs inside the loop: it must not call the
	// Emulator.
	OnRound func(id node.ID, at time.Duration, rep *steering.RoundReport)
	// OnIntervention, when non-nil, sees every event a filter or the
	// immediate check kept from a handler.
	OnIntervention func(Intervention)
}

// Intervention is an event steering kept from a node's handler.
type Intervention struct {
	At   time.Duration
	Node node.ID
	// Event is the event that did not run (Msg is the message or call).
	Event node.Event
	// Verdict is what happened to it: dropped (with or without a broken
	// connection) or postponed.
	Verdict consequence.Interception
	// Veto is set when the immediate safety check stopped it (nil: a
	// filter).
	Veto *steering.Veto
}

// SteeringResult sums the controllers' work and the interventions.
type SteeringResult struct {
	// Totals sums every node's steering.Stats.
	Rounds           uint64            `json:"rounds"`
	RoundsReused     uint64            `json:"rounds_reused"`
	StatesExplored   uint64            `json:"states_explored"`
	Predicted        map[string]uint64 `json:"predicted"`
	ReplayHits       uint64            `json:"replay_hits"`
	FiltersInstalled uint64            `json:"filters_installed"`
	Unhelpful        uint64            `json:"unhelpful"`
	ImmediateChecks  uint64            `json:"immediate_checks"`
	// FilterHits and Vetoes count events kept from handlers by a filter
	// and by the immediate check.
	FilterHits uint64 `json:"filter_hits"`
	Vetoes     uint64 `json:"vetoes"`
	// Overrides counts events let through because their kind had used up
	// its intervention budget (steering.Config.MaxInterventions).
	Overrides uint64 `json:"overrides"`
	// Handled counts the messages, timers and application calls that
	// reached a handler or were stopped: the base of "actions changed".
	Handled uint64 `json:"handled"`
	// ExplorationSeconds is the wall time the rounds took, summed over
	// the nodes: what the explorers cost this process. Like
	// Result.WallTime it is measured, so it is the one field that differs
	// between two runs of the same seed.
	ExplorationSeconds float64 `json:"exploration_seconds"`
}

// ChangedShare is the share of actions steering changed: (filter hits +
// vetoes) / (actions handled or stopped).
func (r *SteeringResult) ChangedShare() float64 {
	if r == nil || r.Handled == 0 {
		return 0
	}
	return float64(r.FilterHits+r.Vetoes) / float64(r.Handled)
}

func (c *SteeringConfig) withDefaults(cfg *Config) (*SteeringConfig, error) {
	s := *c
	if cfg.Snapshots == nil && s.Controller.Mode != steering.Off {
		return nil, fmt.Errorf("emulation: steering in mode %v needs Config.Snapshots (rounds start from gathered snapshots)", s.Controller.Mode)
	}
	if s.Controller.Spec.New == nil {
		s.Controller.Spec = cfg.Spec
	}
	if s.Controller.Workload == nil {
		s.Controller.Workload = cfg.Workload
	}
	if s.CostPerState < 0 || s.PostponeDelay < 0 {
		return nil, fmt.Errorf("emulation: negative steering cost or postpone delay")
	}
	if s.CostPerState == 0 {
		s.CostPerState = 10 * time.Microsecond
	}
	if s.PostponeDelay == 0 {
		s.PostponeDelay = 500 * time.Millisecond
	}
	return &s, nil
}

// newController builds node id's controller.
func (e *Emulator) newController(id node.ID) (*steering.Controller, error) {
	c := e.steer.Controller
	if e.steer.Predictors != nil && !e.steer.Predictors(id) {
		c.Mode = steering.Off
	}
	return steering.New(c, id)
}

// Controller returns node id's steering controller (nil without
// Config.Steering). It is the emulator's own: read it, do not call it.
func (e *Emulator) Controller(id node.ID) *steering.Controller {
	if n := e.node(id); n != nil {
		return n.ctl
	}
	return nil
}

// steerRound runs node n's round on a snapshot it just gathered. The
// filters in force stay while the round explores, joined at once by the
// filters of the replayed paths that still fail (they need no check); the
// round's whole filter set replaces them when its virtual cost has passed,
// as in the live runtime, where a round's result is applied when the round
// finishes. So no filter outlives the next round, and none lapses while
// the next round explores.
func (e *Emulator) steerRound(n *emNode, s *snapshot.Snapshot) {
	started := time.Now()
	rep, err := n.ctl.Explore(context.Background(), s)
	e.steerWall += time.Since(started)
	if err != nil {
		e.fail(fmt.Errorf("emulation: node %v steering round at %s: %w; rerun with seed=%d", n.id, clock(e.now), err, e.cfg.Seed))
		return
	}
	if e.steer.OnRound != nil {
		e.steer.OnRound(n.id, e.now, rep)
	}
	if e.cfg.Trace != nil && (len(rep.Predictions) > 0 || len(rep.Installed) > 0) {
		e.traceLabel(n.id, fmt.Sprintf("steering round cn=%d states=%d predicted=%d filters=%d unhelpful=%d", rep.CN, rep.States, len(rep.Predictions), len(rep.Installed), rep.Unhelpful))
		for _, p := range rep.Predictions {
			steps := make([]string, len(p.Path))
			for i, a := range p.Path {
				steps[i] = a.String()
			}
			e.traceLabel(n.id, fmt.Sprintf("steering predicted %s (replayed=%v, filter %v): %s", p.Property, p.Replayed, p.Filter, strings.Join(steps, "; ")))
		}
		for _, f := range rep.Installed {
			e.traceLabel(n.id, "steering filter "+f.String())
		}
	}
	if n.ctl.Mode() != steering.Steer {
		return
	}
	if len(rep.Reinstalled) > 0 {
		fs := slices.Clone(n.ctl.Filters())
		for _, f := range rep.Reinstalled {
			if !slices.Contains(fs, f) {
				fs = append(fs, f)
			}
		}
		n.ctl.Install(fs)
	}
	it := e.q.alloc()
	it.kind, it.node, it.inc = itemSteerInstall, n.id, n.inc
	it.at = e.now + time.Duration(rep.States)*e.steer.CostPerState
	e.q.push(it)
	n.steerSeq, n.steerFilters = it.seq, rep.Installed
}

// steerInstall installs a round's filters when its cost has passed, unless
// a later round or a reset superseded it.
func (e *Emulator) steerInstall(it *item) bool {
	n := e.nodes[it.node]
	if n.ctl == nil || n.inc != it.inc || n.steerSeq != it.seq {
		return false
	}
	n.ctl.Install(n.steerFilters)
	n.steerSeq, n.steerFilters = 0, nil
	if e.cfg.Trace != nil {
		e.traceLabel(n.id, fmt.Sprintf("steering installed %d filters", len(n.ctl.Filters())))
	}
	return true
}

// steerGate decides whether ev may run on n's handler now: installed
// filters first, then the immediate safety check. It returns Pass, or what
// to do instead (the caller drops or postpones). A retry of an event
// postponed before is checked the same way but not counted again. The
// check also covers transport errors: a node cannot refuse to learn of a
// failure, but it can handle it later, when its neighbourhood has moved on.
// label names the event in the trace (see stepCore).
func (e *Emulator) steerGate(n *emNode, ev node.Event, retry bool, label string) consequence.Interception {
	if n.ctl == nil {
		return consequence.Pass
	}
	if !retry {
		e.steerHandled++
	}
	ev.At = Epoch.Add(e.now)
	v, veto := n.ctl.Gate(n.core, ev, e.steer.Immediate, retry)
	if v != consequence.Pass && !retry {
		e.intervene(n, ev, label, v, veto)
	}
	return v
}

func (e *Emulator) intervene(n *emNode, ev node.Event, label string, v consequence.Interception, veto *steering.Veto) {
	if e.cfg.Trace != nil {
		why := "filter"
		if veto != nil {
			why = "immediate check (" + veto.Property + ")"
		}
		e.traceLabel(n.id, fmt.Sprintf("steering %s %s by %s", v, describe(ev, label), why))
	}
	if e.steer.OnIntervention != nil {
		e.steer.OnIntervention(Intervention{At: e.now, Node: n.id, Event: ev, Verdict: v, Veto: veto})
	}
}

// steeringResult sums the controllers' counters.
func (e *Emulator) steeringResult() *SteeringResult {
	if e.steer == nil {
		return nil
	}
	r := &SteeringResult{Predicted: map[string]uint64{}, Handled: e.steerHandled, ExplorationSeconds: e.steerWall.Seconds()}
	for _, n := range e.nodes[1:] {
		s := n.ctl.Stats()
		r.Rounds += s.Rounds
		r.RoundsReused += s.RoundsReused
		r.StatesExplored += s.StatesExplored
		for k, v := range s.Predicted {
			r.Predicted[k] += v
		}
		r.ReplayHits += s.ReplayHits
		r.FiltersInstalled += s.FiltersInstalled
		r.Unhelpful += s.Unhelpful
		r.ImmediateChecks += s.ImmediateChecks
		r.FilterHits += s.FilterHits
		r.Vetoes += s.Vetoes
		r.Overrides += s.Overrides
	}
	return r
}
