package steering

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// DefaultPostponeDelay is how long Live puts off a filtered or vetoed
// timer, application call or transport error by default.
const DefaultPostponeDelay = 500 * time.Millisecond

// LiveConfig configures a Live.
type LiveConfig struct {
	// Controller configures the node's controller. Its MaxTime should be
	// set: it bounds each search of a round in wall time (a live round is
	// not charged in virtual time, and a round runs several searches: the
	// prediction, then the checks of the filters it suggests).
	Controller Config
	// Immediate turns on the immediate safety check before every message,
	// timer, application call and transport error the node handles, in any
	// mode (mode Off with Immediate is the paper's "immediate safety check
	// only" configuration).
	Immediate bool
	// PostponeDelay is how long a filtered or vetoed timer, application
	// call or transport error is put off before the runtime delivers it
	// again (default DefaultPostponeDelay).
	PostponeDelay time.Duration
	// Logger (nil: no-op) gets a line per prediction and per filter set
	// installed (info), per round and per intervention (debug), and the
	// rounds' errors.
	Logger *slog.Logger
	// OnRound, when non-nil, sees every round that ran to its end (not
	// cancelled, no error) with the snapshot it started from, on the
	// layer's round goroutine, before the round's filters are installed:
	// the CLI writes a report per prediction from it. It must not block
	// for long (the next round waits for it) and must not call the Live's
	// node.Layer methods (Status is fine). The snapshot and the report are
	// shared: read them, do not modify them.
	OnRound func(snap *snapshot.Snapshot, rep *RoundReport)
	// OnRoundTime, when non-nil, is told the wall time of every round as
	// it ends, cancelled and failed ones included, on the round goroutine
	// (the status server's round-duration histogram). It must not block.
	OnRoundTime func(took time.Duration)
	// OnImmediateCheck, when non-nil, is told the wall time of Gate on
	// every event the immediate safety check examined (the filters in
	// force included), on the core goroutine. It must not block.
	OnImmediateCheck func(took time.Duration)
}

// Live runs a Controller inside a live node.Runtime: the node.Layer that
// puts execution steering between the runtime and the core. Put it in
// node.RuntimeConfig.Layers after the snapshot.Live it is wired to; the
// runtime then calls its Gate before the core handles every event the
// snapshot layer lets through.
//
// Rounds. In mode Debug or Steer, every snapshot the node gathers
// (snapshot.Live.OnSnapshot) starts a round — Controller.Explore — on a goroutine of the layer's own, so
// exploration never blocks event handling; Config.MaxTime bounds each of
// its searches and Config.Workers may give each search several goroutines.
// A newer snapshot cancels the round in progress (its context) and the
// next round starts from the newest snapshot; snapshots that arrive while a
// round runs are not explored, only the newest. A round's result is applied
// on the core goroutine, in Tick (the round goroutine posts it and wakes
// the runtime with node.LayerHost.Wake): the filters of a completed round
// replace those in force (rep.Installed; nothing in mode Debug); a
// cancelled or failed round installs only the filters of the replayed
// paths that still fail (rep.Reinstalled, which need no check), so no
// filter outlives the next round, cancelled or not. The gather interval
// should exceed a round's wall time (MaxTime times the searches of a
// round), or rounds keep being cancelled: LiveStatus.RoundsCanceled shows
// it.
//
// Events. Gate hands every message, timer, application call and transport
// error to Controller.Gate, exactly as the emulator does: the filters in
// force first, then, with LiveConfig.Immediate, the immediate safety check
// on the runtime's core with the last round's view, within the
// controller's intervention budget. A message it stops is dropped and,
// with Config.BreakConnection, the connection to its sender is broken
// (node.Verdict.Break: only the sender is told, this node's service gets
// no transport error); a timer, application call or transport error is
// postponed by LiveConfig.PostponeDelay and delivered again by the runtime
// (node.Verdict.RetryAt), checked again but not counted again.
//
// Concurrency and ownership. A Controller is not safe for concurrent use,
// and a round runs for seconds while events keep coming, so a Live has
// two controllers of the same configuration that never meet: the
// explorer, which belongs to the round goroutine (Explore, Stats, one
// round at a time: the error paths, rounds, predictions and filters
// installed are counted there), and the gate, in mode Off, which belongs to
// the core goroutine (Gate, Install, Stats: filter hits, immediate checks,
// vetoes, overrides and the intervention budget). A finished round's
// filters are installed into the gate on the core goroutine. With the
// immediate check on, the gate decodes each snapshot there as it arrives,
// for the check's view (its Explore in mode Off only decodes: 4µs for
// Figure 2's three RandTree checkpoints, not an exploration), as the
// emulator's controller takes the view when its round starts; the
// controller has no way to adopt the view the explorer decodes. In mode
// Off there is no round goroutine at all. The goroutines meet only
// under mu: the newest snapshot and the running round's cancel function
// one way, the finished rounds' results the other. The node.Layer and
// node.Gate methods run on the runtime's core goroutine; Status is safe
// from any goroutine; Stop may be called from any goroutine (the runtime
// calls it, node.Stopper) and returns once the round goroutine has ended.
type Live struct {
	cfg   LiveConfig
	snaps *snapshot.Live
	log   *slog.Logger
	delay time.Duration

	// Set by Attach, then read or owned by the core goroutine.
	host node.LayerHost
	self node.ID
	mode Mode
	gate *Controller // mode Off: filters, immediate check, budget

	// explorer belongs to the round goroutine once Start has started it.
	explorer *Controller
	wg       sync.WaitGroup

	// mu guards everything below (the handoff between the goroutines and
	// the counters Status reads); cond signals the round goroutine.
	mu       sync.Mutex
	cond     *sync.Cond
	started  bool
	quit     bool
	pending  *snapshot.Snapshot // newest snapshot no round has taken
	cancel   context.CancelFunc // of the running round; nil if none
	results  []roundResult      // finished rounds, not yet applied
	postedAt time.Time          // when results became non-empty
	st       LiveStatus         // the layer's own counters
	explored Stats              // the explorer's, as of the last round
	gated    Stats              // the gate's, as of the last event
	shown    []string           // filters in force, as strings
}

// roundResult is what the round goroutine hands the core goroutine.
type roundResult struct {
	rep      *RoundReport
	err      error
	canceled bool
}

var (
	_ node.Layer   = (*Live)(nil)
	_ node.Gate    = (*Live)(nil)
	_ node.Stopper = (*Live)(nil)
)

// Live errors.
var (
	// ErrLiveAttached: the Live is already attached to a runtime.
	ErrLiveAttached = errors.New("steering: Live is already attached to a runtime")
	// ErrLiveHost: Attach was given a host that is not a
	// node.LayerHost (only a node.Runtime's layers can steer).
	ErrLiveHost = errors.New("steering: Live needs a node.LayerHost (attach it through a node.Runtime)")
)

// NewLive validates cfg (Controller as New does, with Spec required) and
// returns the steering layer of one runtime, wired to snaps, the snapshot
// layer of the same runtime (required; it must come before the Live in
// node.RuntimeConfig.Layers). Attach registers the Live with
// snaps.OnSnapshot.
func NewLive(cfg LiveConfig, snaps *snapshot.Live) (*Live, error) {
	if snaps == nil {
		return nil, fmt.Errorf("%w: Live needs the node's snapshot layer (rounds start from its snapshots)", ErrInvalidConfig)
	}
	if cfg.PostponeDelay < 0 {
		return nil, fmt.Errorf("%w: negative postpone delay %v", ErrInvalidConfig, cfg.PostponeDelay)
	}
	// The node's ID is known only at Attach: check the rest now.
	if _, err := New(cfg.Controller, node.ID(1)); err != nil {
		return nil, err
	}
	l := &Live{cfg: cfg, snaps: snaps, log: cfg.Logger, delay: cfg.PostponeDelay}
	if l.log == nil {
		l.log = slog.New(slog.DiscardHandler)
	}
	if l.delay == 0 {
		l.delay = DefaultPostponeDelay
	}
	l.cond = sync.NewCond(&l.mu)
	return l, nil
}

// Messages returns nil: steering sends no messages of its own
// (node.Layer).
func (l *Live) Messages() []node.Message { return nil }

// Attach builds the node's controller and registers with the snapshot
// layer (node.Layer). host must be a node.LayerHost.
func (l *Live) Attach(host node.Host) error {
	if l.host != nil {
		return ErrLiveAttached
	}
	lh, ok := host.(node.LayerHost)
	if !ok {
		return fmt.Errorf("%w, got %T", ErrLiveHost, host)
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
	l.host, l.self, l.explorer, l.gate, l.mode = lh, host.ID(), explorer, gate, explorer.Mode()
	l.log = l.log.With(slog.Any("node", l.self))
	l.mu.Lock()
	l.st.Mode, l.st.Immediate = l.mode.String(), l.cfg.Immediate
	l.mu.Unlock()
	l.snaps.OnSnapshot(l.gathered)
	return nil
}

// Start starts the round goroutine (node.Layer).
func (l *Live) Start(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.host == nil || l.started || l.quit || l.mode == Off {
		return nil
	}
	l.started = true
	l.wg.Add(1)
	go l.rounds()
	return nil
}

// Stop cancels the round in progress and returns once the round goroutine
// has ended (node.Stopper). A stopped Live starts no more rounds; its
// Status stays readable. Safe from any goroutine; idempotent.
func (l *Live) Stop() {
	l.mu.Lock()
	l.quit = true
	if l.cancel != nil {
		l.cancel()
	}
	l.cond.Broadcast()
	l.mu.Unlock()
	l.wg.Wait()
}

// gathered is the snapshot layer's OnSnapshot function (core goroutine):
// with the immediate check on, the gate takes the snapshot's view at once;
// in mode Debug or Steer the newest snapshot cancels the round in progress
// and is the next to explore.
func (l *Live) gathered(s *snapshot.Snapshot) {
	if l.cfg.Immediate {
		// Mode Off: this only decodes the view.
		if _, err := l.gate.Explore(context.Background(), s); err != nil {
			l.log.Error("steering: decoding the snapshot for the immediate check", slog.Uint64("cut", s.CN), slog.Any("error", err))
		}
	}
	if l.mode == Off {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.quit || !l.started {
		return
	}
	if l.pending != nil {
		l.st.SnapshotsSkipped++
	}
	l.pending = s
	if l.cancel != nil {
		l.cancel()
	}
	l.cond.Signal()
}

// rounds is the round goroutine: it explores the newest snapshot, posts
// the result and wakes the runtime, until Stop.
func (l *Live) rounds() {
	defer l.wg.Done()
	for {
		l.mu.Lock()
		for l.pending == nil && !l.quit {
			l.cond.Wait()
		}
		if l.quit {
			l.mu.Unlock()
			return
		}
		snap := l.pending
		l.pending = nil
		ctx, cancel := context.WithCancel(context.Background())
		l.cancel = cancel
		l.st.Running = true
		l.mu.Unlock()

		began := time.Now()
		rep, err := l.explorer.Explore(ctx, snap)
		took := time.Since(began)
		if l.cfg.OnRoundTime != nil {
			l.cfg.OnRoundTime(took)
		}

		l.mu.Lock()
		l.cancel = nil
		canceled := ctx.Err() != nil // only gathered and Stop cancel, under mu
		l.mu.Unlock()
		cancel()
		res := roundResult{rep: rep, err: err, canceled: canceled}
		stats := l.explorer.Stats()
		l.report(snap, res, took)

		l.mu.Lock()
		l.st.Running = false
		l.explored = stats
		l.st.ExplorationSeconds += took.Seconds()
		l.st.LastRoundSeconds = took.Seconds()
		end := began.Add(took).Round(0)
		l.st.LastRound = &end
		l.st.LastRoundCN = snap.CN
		switch {
		case canceled:
			l.st.RoundsCanceled++
		case err != nil:
			l.st.RoundErrors++
		}
		if len(l.results) == 0 {
			l.postedAt = end
		}
		l.results = append(l.results, res)
		l.mu.Unlock()
		l.host.Wake()
	}
}

// report logs a finished round and hands it to OnRound (round goroutine).
func (l *Live) report(snap *snapshot.Snapshot, res roundResult, took time.Duration) {
	rep := res.rep
	if res.canceled {
		l.log.Debug("steering: round cancelled by a newer snapshot", slog.Uint64("cut", snap.CN), slog.Duration("took", took))
		return
	}
	if res.err != nil {
		l.log.Error("steering: round failed", slog.Uint64("cut", snap.CN), slog.Any("error", res.err))
		return
	}
	l.log.Debug("steering: round", slog.Uint64("cut", snap.CN), slog.Any("members", rep.Members),
		slog.Uint64("states", rep.States), slog.Int("predicted", len(rep.Predictions)),
		slog.Int("filters", len(rep.Installed)), slog.Int("unhelpful", rep.Unhelpful),
		slog.Any("present", rep.Present), slog.Duration("took", took))
	for _, p := range rep.Predictions {
		path := make([]string, len(p.Report.Path))
		for i, r := range p.Report.Path {
			path[i] = r.Text
		}
		filter := ""
		if p.Filter != nil {
			filter = p.Filter.String()
		}
		l.log.Info("steering: predicted violation", slog.String("mode", l.mode.String()),
			slog.String("property", p.Property), slog.String("error", p.Report.Error),
			slog.Any("path", path), slog.Int("depth", len(path)), slog.Bool("replayed", p.Replayed),
			slog.String("filter", filter), slog.Uint64("cut", snap.CN), slog.Any("gatherer", snap.Gatherer))
	}
	if l.cfg.OnRound != nil {
		l.cfg.OnRound(snap, rep)
	}
}

// Before is Gate without retries (node.Layer): a runtime calls Gate.
func (l *Live) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	v, out, err := l.Gate(now, ev, in, false)
	return v.Handle, out, err
}

// Gate decides whether ev may run on the core now (node.Gate) with
// Controller.Gate: the filters in force, then, with LiveConfig.Immediate,
// the immediate safety check. A stopped message is dropped (and its
// sender's connection broken with Config.BreakConnection); a stopped timer,
// application call or transport error is postponed by the PostponeDelay.
// A retry is checked again but not counted again.
func (l *Live) Gate(now time.Time, ev node.Event, in *node.Envelope, retry bool) (node.Verdict, []node.Envelope, error) {
	switch ev.Kind {
	case node.EventMessage, node.EventTimer, node.EventApp, node.EventTransportError:
	default:
		return node.Verdict{Handle: true}, nil, nil
	}
	if l.gate == nil {
		return node.Verdict{Handle: true}, nil, nil
	}
	if ev.At.IsZero() {
		ev.At = now
	}
	// With no filter in force and the check off, the gate passes
	// everything and its counters cannot move: skip copying them.
	idle := !l.cfg.Immediate && len(l.gate.Filters()) == 0
	timed := l.cfg.Immediate && l.cfg.OnImmediateCheck != nil
	var began time.Time
	if timed {
		began = time.Now()
	}
	v, veto := l.gate.Gate(l.host.Core(), ev, l.cfg.Immediate, retry)
	var took time.Duration
	if timed {
		took = time.Since(began)
	}
	var gated Stats
	if !idle {
		gated = l.gate.Stats()
	}
	l.mu.Lock()
	if !retry {
		l.st.Events++
	}
	checked := !idle && gated.ImmediateChecks > l.gated.ImmediateChecks
	if !idle {
		l.gated = gated
	}
	l.mu.Unlock()
	if timed && checked {
		l.cfg.OnImmediateCheck(took)
	}
	if v == consequence.Pass {
		return node.Verdict{Handle: true}, nil, nil
	}
	if !retry {
		if veto != nil {
			l.log.Debug("steering: immediate check vetoed", slog.Any("event", ev), slog.Any("verdict", v),
				slog.String("property", veto.Property), slog.Any("violation", veto.Err))
		} else {
			l.log.Debug("steering: filter", slog.Any("event", ev), slog.Any("verdict", v))
		}
	}
	return l.verdict(now, ev, v), nil, nil
}

// verdict turns an interception into the runtime's verdict.
func (l *Live) verdict(now time.Time, ev node.Event, v consequence.Interception) node.Verdict {
	switch v {
	case consequence.Drop:
		return node.Verdict{}
	case consequence.DropAndBreak:
		return node.Verdict{Break: true}
	case consequence.Postpone:
		if ev.Kind == node.EventMessage {
			return node.Verdict{} // a message cannot wait: dropped
		}
		return node.Verdict{RetryAt: now.Add(l.delay)}
	}
	return node.Verdict{Handle: true}
}

// Sending does nothing (node.Layer).
func (l *Live) Sending(now time.Time, env *node.Envelope) {}

// After does nothing (node.Layer).
func (l *Live) After(now time.Time) []node.Envelope { return nil }

// Tick applies the rounds the round goroutine finished (node.Layer): the
// view for the immediate check and, in mode Steer, the filters.
func (l *Live) Tick(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	results := l.results
	l.results = nil
	l.mu.Unlock()
	for _, res := range results {
		l.apply(res)
	}
	return nil, nil
}

// apply installs, in mode Steer, one round's filters (core goroutine).
func (l *Live) apply(res roundResult) {
	if l.mode != Steer || res.rep == nil {
		return
	}
	fs := res.rep.Installed
	if res.canceled || res.err != nil {
		fs = res.rep.Reinstalled
	}
	shown := make([]string, len(fs))
	for i, f := range fs {
		shown[i] = f.String()
	}
	if len(fs) > 0 || len(l.gate.Filters()) > 0 {
		l.log.Info("steering: filters installed", slog.Any("filters", shown), slog.Uint64("cut", res.rep.CN),
			slog.Bool("round_completed", !res.canceled && res.err == nil))
	}
	l.gate.Install(fs)
	l.mu.Lock()
	l.shown = shown
	l.mu.Unlock()
}

// NextTick is due when a finished round waits to be applied (node.Layer).
func (l *Live) NextTick() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.results) == 0 {
		return time.Time{}
	}
	return l.postedAt
}

// LiveStatus is a JSON-friendly picture of a Live: its mode and counters
// (the "steering" object of crystalball node's /status, and its /metrics).
type LiveStatus struct {
	// Mode is off, debug or steer; Immediate whether the immediate safety
	// check is on.
	Mode      string `json:"mode"`
	Immediate bool   `json:"immediate"`
	// Running is set while a round is in progress.
	Running bool `json:"running"`
	// Rounds, RoundsReused, StatesExplored, Predicted (per property),
	// ReplayHits, FiltersInstalled and FiltersUnhelpful are the explorer
	// controller's Stats (mode Off counts no rounds: they only refresh the
	// view).
	Rounds           uint64            `json:"rounds"`
	RoundsReused     uint64            `json:"rounds_reused"`
	StatesExplored   uint64            `json:"states_explored"`
	Predicted        map[string]uint64 `json:"predicted"`
	ReplayHits       uint64            `json:"replay_hits"`
	FiltersInstalled uint64            `json:"filters_installed"`
	FiltersUnhelpful uint64            `json:"filters_unhelpful"`
	// RoundsCanceled counts rounds a newer snapshot (or Stop) cancelled,
	// RoundErrors rounds that failed; SnapshotsSkipped snapshots replaced
	// by a newer one before any round took them.
	RoundsCanceled   uint64 `json:"rounds_canceled"`
	RoundErrors      uint64 `json:"round_errors"`
	SnapshotsSkipped uint64 `json:"snapshots_skipped"`
	// ExplorationSeconds is the wall time of every round (cancelled ones
	// included); LastRoundSeconds that of the last; LastRound when it
	// ended and LastRoundCN the cut of its snapshot.
	ExplorationSeconds float64    `json:"exploration_seconds"`
	LastRoundSeconds   float64    `json:"last_round_seconds"`
	LastRound          *time.Time `json:"last_round,omitempty"`
	LastRoundCN        uint64     `json:"last_round_cn"`
	// Events counts the events offered to the gate (messages, timers,
	// application calls, transport errors; retries not counted again):
	// the base of the share of actions steering changed. FilterHits
	// counts those a filter stopped, ImmediateChecks those checked by the
	// immediate safety check and Vetoes those it stopped (the gate
	// controller's Stats); Overrides those let through because their kind
	// had used up its intervention budget (Config.MaxInterventions).
	Events          uint64 `json:"events"`
	FilterHits      uint64 `json:"filter_hits"`
	ImmediateChecks uint64 `json:"immediate_checks"`
	Vetoes          uint64 `json:"vetoes"`
	Overrides       uint64 `json:"overrides"`
	// Filters are the filters in force, rendered by Filter.String.
	Filters []string `json:"filters"`
}

// Status returns the layer's mode and counters. Safe from any goroutine.
func (l *Live) Status() LiveStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.st
	if st.Mode == "" {
		st.Mode, st.Immediate = l.cfg.Controller.Mode.String(), l.cfg.Immediate
	}
	c, g := l.explored, l.gated
	st.Rounds, st.RoundsReused, st.StatesExplored, st.ReplayHits = c.Rounds, c.RoundsReused, c.StatesExplored, c.ReplayHits
	st.FiltersInstalled, st.FiltersUnhelpful = c.FiltersInstalled, c.Unhelpful
	st.FilterHits, st.ImmediateChecks, st.Vetoes, st.Overrides = g.FilterHits, g.ImmediateChecks, g.Vetoes, g.Overrides
	st.Predicted = make(map[string]uint64, len(c.Predicted))
	for k, v := range c.Predicted {
		st.Predicted[k] = v
	}
	st.Filters = append([]string{}, l.shown...)
	if st.LastRound != nil {
		t := *st.LastRound
		st.LastRound = &t
	}
	return st
}
