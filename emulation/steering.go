package emulation

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// SteeringConfig runs a steering.Layer beside every emulated node, in
// the node's layer.Pipeline, with rounds run by a steering.SyncRunner (see
// the package documentation, "Steering"). Rounds start from the snapshots
// the node gathers, so modes Debug and Steer need Config.Snapshots. Zero
// fields take the defaults documented on each (DefaultSteeringConfig).
type SteeringConfig struct {
	// Controller configures every node's controller. Spec and Workload,
	// when unset, are the emulator's. Controller.PostponeDelay is how long
	// a filtered or vetoed timer, application call or transport error is
	// put off before it is tried again (default
	// steering.DefaultPostponeDelay). Controller.MaxTime bounds each
	// search in wall time as well as in states, at the price of the run's
	// determinism.
	Controller steering.Config
	// Immediate turns on the immediate safety check before every message,
	// timer and application call a node handles (in any mode).
	Immediate bool
	// Shipped are the filters an offline search shipped with the
	// deployment (steering.LayerConfig.Shipped): in mode Steer each node
	// installs its own before its first event and after every reset.
	Shipped []steering.ShippedFilter
	// CostPerState is the virtual time a round is charged per state it
	// explored: its new filters take effect that long after the snapshot
	// completed (default steering.DefaultCostPerState, about what one core
	// explores from a 25-node RandTree state; see docs/PERFORMANCE.md).
	CostPerState time.Duration
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

// DefaultSteeringConfig returns the defaults of a SteeringConfig's zero
// fields (the Controller's are steering.DefaultConfig's).
func DefaultSteeringConfig() SteeringConfig {
	return SteeringConfig{Controller: steering.DefaultConfig(), CostPerState: steering.DefaultCostPerState}
}

// Intervention is an event steering kept from a node's handler.
type Intervention struct {
	At   time.Duration
	Node node.ID
	// Event is the event that did not run (Msg is the message or call).
	Event node.Event
	// Verdict is what happened to it: dropped (with or without a broken
	// connection) or postponed.
	Verdict layer.Verdict
	// Veto is set when the immediate safety check stopped it (nil: a
	// filter).
	Veto *steering.Veto
	// Why is the prediction behind it (steering.Intervention.Why).
	Why *steering.Explanation
}

// SteeringResult sums the nodes' steering counters and adds what only
// the emulator sees: the wire cost of the steering requests and the
// global check's settlement of the predicted dead ends.
type SteeringResult struct {
	// Stats sums every node's steering.Stats (steering.Stats.Add):
	// Events is the base of ChangedShare, ExplorationSeconds the wall
	// time the rounds took, measured with Config.WallClock (like
	// Result.WallTime it is measured, so it is the one field that differs
	// between two runs of the same seed), DeadEndsConfirmed and
	// DeadEndsRetracted the nodes' own settlements from their later
	// snapshots, which see only neighbourhoods.
	steering.Stats
	// RequestMessages and AnswerMessages count the steering requests and
	// answers the nodes sent, RequestBytes and AnswerBytes their wire size
	// (frame and envelope, as the live transport carries them): what
	// steering costs the network beside the snapshots.
	RequestMessages int64 `json:"request_messages"`
	RequestBytes    int64 `json:"request_bytes"`
	AnswerMessages  int64 `json:"answer_messages"`
	AnswerBytes     int64 `json:"answer_bytes"`
	// Global settles the dead ends with the emulator's global check
	// (steering.LivenessWatch, grace steering.Config.ConfirmGrace).
	Global DeadEndSettlement `json:"global_dead_ends"`
	// LiftedAtEnd counts the nodes whose steering was lifted for
	// liveness when the run ended.
	LiftedAtEnd int `json:"lifted_at_end,omitempty"`
}

// DeadEndSettlement is how the predicted dead ends settled on the whole
// system: the property failed for the grace (Confirmed), it held again
// once the grace had passed (Retracted), or the run ended first
// (Pending).
type DeadEndSettlement struct {
	Confirmed uint64 `json:"confirmed"`
	Retracted uint64 `json:"retracted"`
	Pending   uint64 `json:"pending"`
}

// ChangedShare is the share of actions steering changed: (filter hits +
// vetoes) / (actions handled or stopped); 0 for a nil result.
func (r *SteeringResult) ChangedShare() float64 {
	if r == nil {
		return 0
	}
	return r.Stats.ChangedShare()
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
	if s.CostPerState < 0 {
		return nil, fmt.Errorf("emulation: negative steering cost per state %v", s.CostPerState)
	}
	if s.CostPerState == 0 {
		s.CostPerState = steering.DefaultCostPerState
	}
	return &s, nil
}

// emHost is the layer.RuntimeHost an emulated node's pipeline gives its
// layers: the node's core; Wake is not needed (rounds run within the
// loop, which asks the pipeline when it is next due after every event).
type emHost struct{ n *emNode }

func (h emHost) ID() node.ID                 { return h.n.id }
func (h emHost) Checkpoint() ([]byte, error) { return h.n.core.Checkpoint() }
func (h emHost) Service() node.Service       { return h.n.core.Service() }
func (h emHost) Core() *node.Core            { return h.n.core }
func (h emHost) Wake()                       {}

// CheckCheckpoint checks a peer's checkpoint as the node's service's
// (snapshot.CheckpointChecker), as the live host does.
func (h emHost) CheckCheckpoint(b []byte) error { return h.n.core.CheckCheckpoint(b) }

// newPipeline builds node n's layer pipeline, the live shell's stack:
// its snapshot layer (snapshot.Layer) with Config.Snapshots, the DropNext
// faults (faultLayer), its steering layer (wired to the snapshot layer's
// gathers) with Config.Steering, then Config.Layers'.
func (e *Emulator) newPipeline(n *emNode) error {
	var layers []layer.Layer
	n.snapAt, n.faultAt = -1, -1
	if e.cfg.Snapshots != nil {
		l, err := e.newSnapshots(n)
		if err != nil {
			return err
		}
		n.snap.layer, n.snapAt = l, len(layers)
		layers = append(layers, l)
	}
	n.faultAt = len(layers)
	layers = append(layers, faultLayer{e: e, n: n})
	if e.steer != nil {
		l, err := e.newSteering(n)
		if err != nil {
			return err
		}
		n.steer.layer = l
		layers = append(layers, l)
	}
	if e.cfg.Layers != nil {
		layers = append(layers, e.cfg.Layers(n.id)...)
	}
	p, err := layer.NewPipeline(layer.PipelineConfig{Core: n.core, Layers: layers, Host: emHost{n}})
	if err != nil {
		return err
	}
	n.pipe = p
	return nil
}

// newSteering builds node n's steering layer, which reports to the
// emulator's trace and callbacks.
func (e *Emulator) newSteering(n *emNode) (*steering.Layer, error) {
	c := e.steer.Controller
	if e.steer.Predictors != nil && !e.steer.Predictors(n.id) {
		c.Mode = steering.Off
	}
	return steering.NewLayer(steering.LayerConfig{
		Controller: c,
		Immediate:  e.steer.Immediate,
		Shipped:    e.steer.Shipped,
		Runner:     e.rounds.runner,
		OnRound:    func(_ *snapshot.Snapshot, rep *steering.RoundReport) { e.steerRound(n, rep) },
		OnRoundFailed: func(_ *snapshot.Snapshot, err error, canceled bool) {
			if !canceled {
				e.fail(fmt.Errorf("emulation: node %v steering round at %s: %w; rerun with seed=%d", n.id, clock(e.now), err, e.cfg.Seed))
			}
		},
		OnIntervention: func(iv steering.Intervention) { n.steer.iv = &iv },
		OnInstall: func(fs []steering.Filter, _ uint64, _ bool) {
			if e.cfg.Trace != nil {
				e.traceLabel(n.id, fmt.Sprintf("steering installed %d filters", len(fs)))
			}
		},
	}, n.snap.layer)
}

// Steering returns node id's steering layer (nil without
// Config.Steering). It is the emulator's own: read its Status and Stats,
// do not call its layer.Layer methods.
func (e *Emulator) Steering(id node.ID) *steering.Layer {
	if n := e.node(id); n != nil {
		return n.steer.layer
	}
	return nil
}

// steerRound reports node n's round, which the SyncRunner ran as the
// snapshot arrived: OnRound and the trace.
func (e *Emulator) steerRound(n *emNode, rep *steering.RoundReport) {
	e.watchDeadEnds(rep)
	if e.steer.OnRound != nil {
		e.steer.OnRound(n.id, e.now, rep)
	}
	if e.cfg.Trace == nil || (len(rep.Predictions) == 0 && len(rep.Installed) == 0) {
		return
	}
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

// intervene reports an event steering kept from n's handler (not a
// retry): the trace and OnIntervention. label names the event in the
// trace (see stepCore).
func (e *Emulator) intervene(n *emNode, ev node.Event, label string, v layer.Verdict) {
	iv := n.steer.iv
	n.steer.iv = nil
	var veto *steering.Veto
	var why *steering.Explanation
	if iv != nil {
		veto, why = iv.Veto, iv.Why
	}
	if e.cfg.Trace != nil {
		why := "filter"
		if veto != nil {
			why = "immediate check (" + veto.Property + ")"
		}
		e.traceLabel(n.id, fmt.Sprintf("steering %s %s by %s", v, describe(ev, label), why))
	}
	if e.steer != nil && e.steer.OnIntervention != nil {
		e.steer.OnIntervention(Intervention{At: e.now, Node: n.id, Event: ev, Verdict: v, Veto: veto, Why: why})
	}
}

// steeringResult sums the steering layers' counters.
func (e *Emulator) steeringResult() *SteeringResult {
	if e.steer == nil {
		return nil
	}
	r := &SteeringResult{RequestMessages: e.st.requestMsgs, RequestBytes: e.st.requestBytes, AnswerMessages: e.st.answerMsgs, AnswerBytes: e.st.answerBytes}
	r.Predicted = map[string]uint64{}
	for _, n := range e.nodes[1:] {
		st := n.steer.layer.Status()
		r.Add(st.Stats)
		if st.Lift != nil {
			r.LiftedAtEnd++
		}
	}
	e.observeDeadEnds() // time passed since the last event
	g := &r.Global
	g.Confirmed, g.Retracted, g.Pending = e.rounds.deadEnds.Counts()
	return r
}

// LiftsLine renders the nodes' lifts for liveness on one line, properties
// by name: "Served failing 30.5s (2 lifts, 1 expired); 10s lifted in all",
// or "none".
func (r *SteeringResult) LiftsLine() string {
	if r == nil || r.Lifts == 0 {
		return "none"
	}
	names := slices.Sorted(maps.Keys(r.LiftsByProperty))
	parts := make([]string, len(names))
	for i, name := range names {
		c := r.LiftsByProperty[name]
		n := fmt.Sprintf("%d lift%s", c.Lifts, plural(int64(c.Lifts)))
		if c.Expired > 0 {
			n += fmt.Sprintf(", %d expired", c.Expired)
		}
		parts[i] = fmt.Sprintf("%s failing %v (%s)", name, secondsDuration(c.LongestFailingSeconds), n)
	}
	line := strings.Join(parts, ", ") + fmt.Sprintf("; %v lifted in all", secondsDuration(r.LiftedSeconds))
	if r.LiftedAtEnd > 0 {
		line += fmt.Sprintf(", %d node%s lifted at the end", r.LiftedAtEnd, plural(int64(r.LiftedAtEnd)))
	}
	return line
}

// secondsDuration is s seconds as a duration rounded to the millisecond.
func secondsDuration(s float64) time.Duration {
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// roundHost is what the emulator keeps to run every node's steering
// rounds (a SyncRunner, charging virtual time per state explored) and to
// judge their dead ends under the global check (confirm.go). Both are
// nil without Config.Steering.
type roundHost struct {
	runner   *steering.SyncRunner
	deadEnds *steering.LivenessWatch
}

// bind makes the rounds run under ctx until the returned function
// restores the context before.
func (r *roundHost) bind(ctx context.Context) (restore func()) {
	if r.runner == nil {
		return func() {}
	}
	prev := r.runner.Ctx
	r.runner.Ctx = ctx
	return func() { r.runner.Ctx = prev }
}

// nodeSteering is one node's steering layer (nil without
// Config.Steering) and the intervention it reported for the event being
// run.
type nodeSteering struct {
	layer *steering.Layer
	iv    *steering.Intervention
}

// setUpRounds resolves Config.Steering and builds what runs and judges
// the rounds.
func (e *Emulator) setUpRounds(s settings) error {
	if s.Steering == nil {
		return nil
	}
	st, err := s.Steering.withDefaults(&s.Config)
	if err != nil {
		return err
	}
	e.steer = st
	e.rounds.runner = &steering.SyncRunner{CostPerState: st.CostPerState, Clock: s.WallClock}
	if e.rounds.deadEnds, err = steering.NewLivenessWatch(st.Controller.ConfirmGrace); err != nil {
		return fmt.Errorf("emulation: steering: %w", err)
	}
	return nil
}

// countSteering counts a steering request or answer env and its wire
// size (SteeringResult.Requests*, Answers*): what steering costs the
// network, with the link model on or off.
func (e *Emulator) countSteering(env *node.Envelope) {
	var msgs, bytes *int64
	switch env.Msg.(type) {
	case steering.Request:
		msgs, bytes = &e.st.requestMsgs, &e.st.requestBytes
	case steering.Answer:
		msgs, bytes = &e.st.answerMsgs, &e.st.answerBytes
	default:
		return
	}
	*msgs++
	if size, err := e.wireSize(env); err == nil {
		*bytes += int64(size) // an encoding error fails the run in send
	}
}
