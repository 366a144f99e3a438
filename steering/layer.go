package steering

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// LayerConfig configures a Layer. Zero fields take the defaults documented
// on each (DefaultLayerConfig); Controller.Spec and Runner are required.
type LayerConfig struct {
	// Controller configures the node's controller. In a live shell its
	// MaxTime should be set: it bounds each search of a round in wall time
	// (a round runs several searches: the prediction, then the checks of
	// the filters it suggests). PostponeDelay is how long a filtered or
	// vetoed timer, application call or transport error is put off.
	Controller Config
	// Immediate turns on the immediate safety check before every message,
	// timer, application call and transport error the node handles, in any
	// mode (mode Off with Immediate is the paper's "immediate safety check
	// only" configuration).
	Immediate bool
	// Shipped are filters an offline search predicted from the
	// deployment's initial configuration (ShipPath, DecodeShipped): in
	// mode Steer the node installs its own (those whose Filter.Node is its
	// ID) before its first event and again after a reset, until its first
	// round replaces them (shipped.go). Other modes ignore them.
	Shipped []ShippedFilter
	// ImmediateMemory keeps, in the immediate check's view, the nodes an
	// earlier snapshot of this node held that the newest one does not (a
	// former neighbour, a member the newest gather could not reach), at
	// the newest checkpoint seen of each, while that snapshot completed at
	// most this long before the newest (Controller.CheckView). A property
	// that spans nodes beyond the newest neighbourhood can then still be
	// checked. Zero (the default) takes Controller.LastKnownFor, the same
	// judgement of how long a member's last state still binds the others
	// (so RandTree, whose departed neighbours have usually moved on, keeps
	// only the newest snapshot); negative is an error.
	ImmediateMemory time.Duration
	// Runner runs the rounds (required in mode Debug and Steer): a
	// SyncRunner in a deterministic shell (the emulator), live's round
	// runner (a goroutine) in the live shell.
	Runner Runner
	// Logger (nil: no-op) gets a line per prediction and per filter set
	// installed (info), per round and per intervention (debug), and the
	// rounds' errors.
	Logger *slog.Logger
	// OnRound, when non-nil, sees every round that ran to its end (not
	// cancelled, no error) with the snapshot it started from, where the
	// Runner runs it (the live runner's goroutine; within Gathered for a
	// SyncRunner), before the round's filters are installed. It must not
	// block for long (the next round waits for it) and must not call the
	// Layer's layer.Layer methods (Status is fine). The snapshot and the
	// report are shared: read them, do not modify them.
	OnRound func(snap *snapshot.Snapshot, rep *RoundReport)
	// OnRoundFailed, when non-nil, sees every round that did not run to
	// its end: cancelled (a newer snapshot, Stop or the runner's context)
	// or failed (err). Same goroutine and rules as OnRound.
	OnRoundFailed func(snap *snapshot.Snapshot, err error, canceled bool)
	// OnIntervention, when non-nil, sees every event the filters or the
	// immediate check kept from the handler (retries not again), on the
	// core goroutine, from Gate. It must not call the Layer.
	OnIntervention func(Intervention)
	// OnInstall, when non-nil, sees every filter set a finished,
	// cancelled or failed round installs (mode Steer), on the core
	// goroutine, from Tick; completed says whether the round ran to its
	// end. The slice is the Layer's: read it during the call.
	OnInstall func(filters []Filter, cn uint64, completed bool)
	// OnRoundTime, when non-nil, is told how long every round took as the
	// Runner measured it (wall time live; the virtual time charged in
	// emulation), cancelled and failed rounds included, where the Runner
	// hands the round back (Round.Done). It must not block (the status
	// server's round-duration histogram).
	OnRoundTime func(took time.Duration)
	// OnImmediateCheck, when non-nil and Clock is set, is told how long
	// Gate took on every event the immediate safety check examined (the
	// filters in force included; retries not again), on the core
	// goroutine. It must not block (the immediate-check cost histogram).
	OnImmediateCheck func(took time.Duration)
	// Clock reads the time for OnImmediateCheck; nil disables that
	// measurement. The live shell passes time.Now; the layer itself never
	// reads a clock, so it stays deterministic in emulation.
	Clock func() time.Time
}

// DefaultLayerConfig returns the defaults of a LayerConfig's zero fields:
// Controller is DefaultConfig(); no Runner, no Spec (both required).
func DefaultLayerConfig() LayerConfig { return LayerConfig{Controller: DefaultConfig()} }

// Intervention is an event steering kept from the node's handler.
type Intervention struct {
	// Event is the event that did not run (At set).
	Event node.Event
	// Verdict is what happens to it: dropped (with or without a broken
	// connection) or postponed.
	Verdict layer.Verdict
	// Veto is set when the immediate safety check stopped it (nil: a
	// filter).
	Veto *Veto
	// Why is the prediction behind the intervention (explain.go): the
	// filter's or the veto's; nil for a filter installed by hand.
	Why *Explanation
}

// Runner runs the rounds of a Layer: where and when a round's exploration
// happens is the shell's choice, not the layer's. The Layer calls Run from
// its Gathered (on the core goroutine) and Stop from its own Stop.
type Runner interface {
	// Run takes round r. The runner calls r.Explore once, then r.Done
	// (or only r.Skip, for a round it drops unexplored), never two
	// rounds of one Layer at a time: at once, before Run returns (a
	// SyncRunner), or later on a goroutine of its own, where a newer Run
	// may cancel the context of the round in progress and supersede one
	// not yet taken. Run must not block for a round it runs elsewhere.
	Run(r *Round)
	// Stop cancels the round in progress and returns once no round of
	// the runner runs any more; later Runs only Skip. It must not call
	// the Layer's layer.Layer methods.
	Stop()
}

// Round is one steering round on one snapshot, handed to a Runner.
type Round struct {
	l       *Layer
	snap    *snapshot.Snapshot
	holds   heldKinds  // the gate's holds when the round was made
	rates   EventRates // the node's observed rates then (rates_layer.go)
	rep     *RoundReport
	err     error
	cancel  bool
	started bool
}

// Snapshot returns the snapshot the round explores (read-only).
func (r *Round) Snapshot() *snapshot.Snapshot { return r.snap }

// Started returns when the round's snapshot completed (Snapshot.At): the
// virtual time a SyncRunner charges the round's cost from.
func (r *Round) Started() time.Time { return r.snap.At }

// Explore runs the round (Controller.Explore on the layer's explorer
// controller) under ctx and returns the unique states it explored. Call
// it once, from the runner, never for two rounds of one Layer at a time.
func (r *Round) Explore(ctx context.Context) uint64 {
	l := r.l
	l.mu.Lock()
	l.st.Running = true
	reqs := l.desk.take()
	l.mu.Unlock()
	r.started = true
	l.explorer.setRequests(reqs)
	l.explorer.setHolds(r.holds)
	l.explorer.setRates(r.rates)
	r.rep, r.err = l.explorer.Explore(ctx, r.snap)
	r.cancel = ctx.Err() != nil
	stats := l.explorer.Stats()
	paths, changed := l.explorer.exportPaths()
	l.mu.Lock()
	if changed {
		l.paths = paths
		l.pathsVersion++
	}
	l.explored = stats
	l.mu.Unlock()
	if r.rep == nil {
		return 0
	}
	return r.rep.States
}

// Done hands the explored round back to the layer: took is its duration
// as the runner measures it (wall time live; the virtual time charged
// for it in emulation), ended when its result may take effect (the
// layer's NextTick then names it, and its Tick applies the round's
// filters: see Layer). It wakes the host (layer.RuntimeHost.Wake). Call it
// once, after Explore.
func (r *Round) Done(ended time.Time, took time.Duration) {
	l := r.l
	l.report(r, took)
	if l.cfg.OnRoundTime != nil {
		l.cfg.OnRoundTime(took)
	}
	l.mu.Lock()
	l.st.Running = false
	l.st.ExplorationSeconds += took.Seconds()
	l.st.LastRoundSeconds = took.Seconds()
	end := ended.Round(0)
	l.st.LastRound = &end
	l.st.LastRoundCN = r.snap.CN
	switch {
	case r.cancel:
		l.st.RoundsCanceled++
	case r.err != nil:
		l.st.RoundErrors++
	}
	// A newer round supersedes the older ones not applied fully: its
	// filters replace theirs anyway.
	l.results = []*pendingRound{{round: r, ended: ended}}
	l.mu.Unlock()
	if l.wake != nil {
		l.wake.Wake()
	}
}

// Skip tells the layer the runner dropped the round unexplored (a newer
// snapshot replaced it, or the runner stopped).
func (r *Round) Skip() {
	r.l.mu.Lock()
	r.l.st.SnapshotsSkipped++
	r.l.mu.Unlock()
}

// pendingRound is a round whose result the layer has not applied fully.
type pendingRound struct {
	round  *Round
	ended  time.Time
	merged bool            // its Reinstalled filters are in force
	out    []node.Envelope // steering messages its application sends
}

// SyncRunner runs every round at once, within Layer.Gathered, and charges
// it CostPerState of virtual time per state explored: the round's filters
// take effect that long after its snapshot completed. A run that uses it
// stays a pure function of its inputs (unless Config.MaxTime is set). One
// SyncRunner may serve the layers of many nodes (Run returns only when the
// round is done). Ctx, when non-nil, cancels the rounds (a cancelled round
// installs only its replayed paths' filters); the shell may change it
// between Runs. Clock, when non-nil, measures each round in wall time for
// LayerStatus.ExplorationSeconds (what the rounds cost the process); the
// round's end stays its start plus its charged cost, so the clock never
// feeds the run. Without Clock the charged cost is reported. Not safe for
// concurrent use.
type SyncRunner struct {
	Ctx          context.Context
	CostPerState time.Duration
	Clock        func() time.Time
}

// DefaultCostPerState is the virtual time a SyncRunner charges per state
// explored by default: about what one core explores from a 25-node
// RandTree state (docs/PERFORMANCE.md).
const DefaultCostPerState = 10 * time.Microsecond

// Run explores r now and hands it back, ended at its start plus its cost.
func (s *SyncRunner) Run(r *Round) {
	ctx := s.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	var began time.Time
	if s.Clock != nil {
		began = s.Clock()
	}
	states := r.Explore(ctx)
	cost := time.Duration(states) * s.CostPerState
	took := cost
	if s.Clock != nil {
		took = s.Clock().Sub(began)
	}
	r.Done(r.Started().Add(cost), took)
}

// Stop does nothing: no round runs once Run has returned.
func (s *SyncRunner) Stop() {}

// Layer is execution steering as a layer.Layer (and layer.Gate): the same
// type in both shells, between the snapshot layer and the core. Put it in
// the layer.Pipeline after the snapshot layer it is wired to.
//
// Rounds. In mode Debug or Steer every snapshot the node gathers
// (Gathered; snapshot.Layer.OnSnapshot calls it when the Layer was built
// with the snapshot layer) becomes a Round handed to the Runner, which
// runs Controller.Explore when and where the shell wants: synchronously,
// charged in virtual time (SyncRunner), or on a goroutine (the live
// shell's runner, which cancels the round in progress when a newer
// snapshot comes). The filter-install policy lives here, once: when a
// round is handed back (Round.Done), the filters of the replayed paths
// that still fail (RoundReport.Reinstalled: they need no check) join the
// filters in force at the layer's next Tick; when its end has come, the
// filters of a round that ran to its end replace those in force
// (RoundReport.Installed), and a cancelled or failed round installs only
// its Reinstalled filters. A newer round supersedes an older one whose end
// has not come. So no filter outlives the next round that could judge it
// (a filter on a peer outside the round's snapshot is kept for
// Config.UnseenHold: unseen.go), and none lapses while
// the next round explores. Nothing is installed in mode Debug. An
// EventReset (the emulator's restart) clears what a process keeps in
// memory — the filters, the holds, the rounds not yet applied, the
// requests waiting — as a new process would have none; what the node made
// durable comes back through RestoreDurable (durable.go), which the
// pipeline calls right after the reset (and a live node at its restart).
//
// Events. Gate hands every message, timer, application call and transport
// error to Controller.Gate: the filters in force first, then, with
// LayerConfig.Immediate, the immediate safety check on the host's core
// with the last snapshot's view, within the controller's intervention
// budget. A message it stops is dropped and, with Config.BreakConnection,
// the connection to its sender is broken (layer.Verdict.Break); a timer,
// application call or transport error is postponed by
// Config.PostponeDelay (layer.Verdict.RetryAt) and delivered again by the
// pipeline, checked again but not counted again.
//
// Concurrency and ownership. A Controller is not safe for concurrent use,
// and a live round runs for seconds while events keep coming, so a Layer
// has two controllers of the same configuration that never meet: the
// explorer, which belongs to the runner while a round runs (Round.Explore:
// the error paths, rounds, predictions and filters installed are counted
// there), and the gate, in mode Off, which belongs to the core goroutine
// (Gate, Install: filter hits, immediate checks, vetoes, overrides and the
// intervention budget). With the immediate check on, the gate decodes each
// snapshot as it arrives, for the check's view. The Layer starts no
// goroutine and reads no clock; its Runner may. The runner and the core
// goroutine meet only under mu. The layer.Layer and layer.Gate methods and
// Gathered run on the core goroutine; Status and Stats are safe from any
// goroutine; Stop may be called from any goroutine and returns once the
// runner has no round running.
type Layer struct {
	cfg   LayerConfig
	snaps *snapshot.Layer
	log   *slog.Logger

	// Set by Attach, then read or owned by the core goroutine.
	host layer.RuntimeHost
	wake interface{ Wake() }
	self node.ID
	mode Mode
	gate *Controller // mode Off: filters, immediate check, budget
	// included are the peers the gathers take in for the gate's filters
	// and holds, as of the gate's includedVersion (includeFiltered).
	included        []node.ID
	includedVersion uint64
	includedSet     bool
	// recall are the nodes of the check view a restart restored that no
	// gather since has reached or found unreachable (includeFiltered).
	recall []node.ID

	// rates accounts the node's events for AdaptiveWeights (core
	// goroutine).
	rates rateAccount
	// faultGather is set when a transport error asks for a gather after
	// the step (GatherOnFault), nextFaultGather when the next may start
	// (core goroutine).
	faultGather     bool
	nextFaultGather time.Time
	// holdsVersion is the gate's version LayerStatus.Holds was made from
	// (core goroutine; status_recent.go).
	holdsVersion uint64

	// explorer belongs to the runner while a round runs.
	explorer *Controller

	// mu guards everything below (the handoff between the runner and the
	// core goroutine, and the counters Status reads).
	mu       sync.Mutex
	started  bool
	quit     bool
	results  []*pendingRound // rounds handed back, not applied fully
	st       LayerStatus     // the layer's own counters
	explored Stats           // the explorer's, as of the last round
	gated    Stats           // the gate's, as of the last event
	shown    []string        // filters in force, as strings
	desk     requestDesk     // steering requests admitted (request_admit.go)

	// last is the newest snapshot the layer was given (core goroutine).
	last *snapshot.Snapshot
	// why explains the filters in force (core goroutine); shownReasons
	// is what Status shows of them (under mu).
	why          map[Filter]Explanation
	shownReasons []FilterReason

	// The durable state (durable.go): the explorer's error paths as of
	// its last round (under mu), and what DurableState returned last with
	// the versions it was made from (core goroutine).
	paths                            []durablePath
	pathsVersion                     uint64
	saved                            []byte
	savedGate, savedPaths, savedView uint64

	// The requester's side, on the core goroutine: requests sent within
	// their TTL (by filter and property), and the last request ID.
	asked       map[string]time.Time
	nextRequest uint64

	// unseen holds, per filter in force a completed round could not
	// judge (its peer outside the round's snapshot), when a round first
	// kept it so (core goroutine; unseen.go).
	unseen map[Filter]time.Time

	// budget is the liveness budget (liveness_budget.go), budgetDecoded
	// the snapshot it had the gate decode last (core goroutine).
	budget        livenessBudget
	budgetDecoded *snapshot.Snapshot
}

var (
	_ layer.Layer   = (*Layer)(nil)
	_ layer.Gate    = (*Layer)(nil)
	_ layer.Stopper = (*Layer)(nil)
)

// Layer errors.
var (
	// ErrAttached: the Layer is already attached to a node.
	ErrAttached = errors.New("steering: Layer is already attached to a node")
	// ErrHost: Attach was given a host that is not a layer.RuntimeHost (the
	// immediate safety check needs the node's core).
	ErrHost = errors.New("steering: Layer needs a layer.RuntimeHost (attach it through a layer.Pipeline with a RuntimeHost)")
)

// NewLayer validates cfg (Controller as New does) and returns the steering
// layer of one node. snaps is the snapshot layer of the same node, whose
// OnSnapshot Attach registers Gathered with (it must come before the Layer
// in the pipeline); nil when the shell hands the snapshots over itself by
// calling Gathered (a shell without a snapshot layer, or a test).
func NewLayer(cfg LayerConfig, snaps *snapshot.Layer) (*Layer, error) {
	if err := cfg.checkLayer(); err != nil {
		return nil, err
	}
	cfg.ImmediateMemory = cmp.Or(cfg.ImmediateMemory, cfg.Controller.LastKnownFor)
	l := &Layer{cfg: cfg, snaps: snaps, log: cfg.Logger}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	return l, nil
}

// checkLayer validates cfg: its Controller as New does (the node's ID is
// known only at Attach), the memory, and a Runner where rounds run.
func (cfg LayerConfig) checkLayer() error {
	if _, err := New(cfg.Controller, node.ID(1)); err != nil {
		return err
	}
	if cfg.ImmediateMemory < 0 {
		return fmt.Errorf("%w: negative LayerConfig.ImmediateMemory", ErrInvalidConfig)
	}
	if cfg.Runner == nil && cfg.Controller.Mode != Off {
		return fmt.Errorf("%w: LayerConfig.Runner is required in mode %v (a *SyncRunner in a deterministic shell; the live shell's round runner)", ErrInvalidConfig, cfg.Controller.Mode)
	}
	return nil
}

// Messages returns steering's own message types, the requests to
// another node's steering and their answers (layer.Layer).
func (l *Layer) Messages() []node.Message { return Messages() }

// Attach builds the node's controllers and registers with the snapshot
// layer, if any (layer.Layer). host must be a layer.RuntimeHost.
func (l *Layer) Attach(host layer.Host) error {
	if l.host != nil {
		return ErrAttached
	}
	lh, ok := host.(layer.RuntimeHost)
	if !ok {
		return fmt.Errorf("%w, got %T", ErrHost, host)
	}
	explorer, err := New(l.cfg.Controller, host.ID())
	if err != nil {
		return err
	}
	gcfg := l.cfg.Controller
	gcfg.Mode = Off
	gate, err := New(gcfg, host.ID())
	if err != nil {
		return err
	}
	l.host, l.wake, l.self, l.explorer, l.gate, l.mode = lh, lh, host.ID(), explorer, gate, explorer.Mode()
	l.desk.cfg = explorer.cfg.Requests
	l.budget = newLivenessBudget(gate.cfg.Liveness, gate.cfg.Properties, gate.live)
	gate.setGuarded(explorer.guards())
	l.log = l.log.With(slog.Any("node", l.self))
	l.mu.Lock()
	l.st.Mode, l.st.Immediate = l.mode.String(), l.cfg.Immediate
	l.mu.Unlock()
	if l.snaps != nil {
		l.snaps.OnSnapshot(l.Gathered)
	}
	l.installShipped()
	return nil
}

// Start lets rounds run (layer.Layer).
func (l *Layer) Start(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.host != nil && !l.quit {
		l.started = true
	}
	return nil
}

// Stop stops the runner (layer.Stopper): a stopped Layer starts no more
// rounds; its Status stays readable. Safe from any goroutine; idempotent.
func (l *Layer) Stop() {
	l.mu.Lock()
	l.quit = true
	l.mu.Unlock()
	if l.cfg.Runner != nil {
		l.cfg.Runner.Stop()
	}
}

// Gathered takes a snapshot the node gathered (core goroutine): with the
// immediate check on, the gate takes its view at once; in mode Debug or
// Steer it becomes a round for the Runner. It is snapshot.Layer's
// OnSnapshot function; a shell without a snapshot.Layer calls it itself.
func (l *Layer) Gathered(s *snapshot.Snapshot) {
	if l.gate == nil {
		return
	}
	l.last = s
	l.recalled(s)
	defer l.watchLiveness(s.At) // the new view, once the gate has decoded it
	if l.cfg.Immediate {
		l.decodeCheckView(s)
	}
	if l.mode == Off {
		return
	}
	l.mu.Lock()
	run := l.started && !l.quit
	l.mu.Unlock()
	if run {
		l.cfg.Runner.Run(l.newRound(s))
	}
}

// decodeCheckView decodes s into the gate's view and merges it into the
// immediate check's view (RememberView). The gate's mode is Off: its
// Explore only decodes the view.
func (l *Layer) decodeCheckView(s *snapshot.Snapshot) {
	if _, err := l.gate.Explore(context.Background(), s); err != nil {
		l.log.Error("steering: decoding the snapshot for the immediate check", slog.Uint64("cut", s.CN), slog.Any("error", err))
		return
	}
	l.gate.RememberView(s.At, l.cfg.ImmediateMemory)
}

// newRound is a round on s, with the gate's holds for its liveness guard
// (core goroutine).
func (l *Layer) newRound(s *snapshot.Snapshot) *Round {
	return &Round{l: l, snap: s, holds: l.gate.heldKinds(), rates: l.rates.rates()}
}
