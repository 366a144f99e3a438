package steering

import (
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// report logs a round handed back and gives it to OnRound or
// OnRoundFailed (where the runner runs it).
func (l *Layer) report(r *Round, took time.Duration) {
	snap, rep := r.snap, r.rep
	if r.cancel || r.err != nil {
		if r.cancel {
			l.log.Debug("steering: round cancelled", slog.Uint64("cut", snap.CN), slog.Duration("took", took))
		} else {
			l.log.Error("steering: round failed", slog.Uint64("cut", snap.CN), slog.Any("error", r.err))
		}
		if l.cfg.OnRoundFailed != nil {
			l.cfg.OnRoundFailed(snap, r.err, r.cancel)
		}
		return
	}
	l.log.Debug("steering: round", slog.Uint64("cut", snap.CN), slog.Any("members", rep.Members),
		slog.Uint64("states", rep.States), slog.Int("predicted", len(rep.Predictions)),
		slog.Int("filters", len(rep.Installed)), slog.Int("unhelpful", rep.Unhelpful),
		slog.Any("present", rep.Present), slog.Duration("took", took))
	for _, p := range rep.Predictions {
		path := make([]string, len(p.Report.Path))
		for i, s := range p.Report.Path {
			path[i] = s.Text
		}
		filter := ""
		if p.Filter != nil {
			filter = p.Filter.String()
		}
		attrs := []any{slog.String("mode", l.mode.String()), slog.String("kind", p.Report.Kind),
			slog.String("property", p.Property), slog.String("error", p.Report.Error),
			slog.Any("path", path), slog.Int("depth", len(path)), slog.Bool("replayed", p.Replayed),
			slog.String("filter", filter), slog.Uint64("cut", snap.CN), slog.Any("gatherer", snap.Gatherer)}
		msg := "steering: predicted violation"
		if c := p.Critical; c != nil {
			msg = "steering: predicted dead end"
			attrs = append(attrs, slog.String("verdict", c.Verdict.String()), slog.Int("critical_step", c.Step+1),
				slog.String("critical", path[c.Step]))
			if c.Step < len(c.LiveReport) {
				attrs = append(attrs, slog.String("live_step", c.LiveReport[c.Step].Text))
			}
		}
		l.log.Info(msg, attrs...)
	}
	for _, p := range rep.Predictions {
		if p.Critical != nil {
			l.mu.Lock()
			l.st.LastDeadEnd = p.String()
			l.mu.Unlock()
		}
	}
	l.noteRecent(snap, rep)
	if l.cfg.OnRound != nil {
		l.cfg.OnRound(snap, rep)
	}
}

// Before is Gate without retries (layer.Layer): a pipeline calls Gate.
func (l *Layer) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	v, out, err := l.Gate(now, ev, in, false)
	return v.Handle, out, err
}

// Gate decides whether ev may run on the core now (layer.Gate) with
// Controller.Gate: the filters in force, then, with LayerConfig.Immediate,
// the immediate safety check. A stopped message is dropped (and its
// connection broken for both ends: a filter's with
// Config.BreakConnection, a veto's unless its type is lossy); a stopped
// timer, application call or transport error is postponed by
// Config.PostponeDelay. A retry is checked again but not counted again.
// An EventReset clears the filters and the rounds not yet applied. Every
// other kind passes unchecked: EventInit, and EventSendRefused, which is
// the transport's verdict on a send the node already made, not a choice
// to steer — postponing it would break the rule that a refusal is the
// sender's next event (node's "Refused sends").
func (l *Layer) Gate(now time.Time, ev node.Event, in *node.Envelope, retry bool) (layer.Verdict, []node.Envelope, error) {
	pass := layer.Verdict{Handle: true}
	if !retry && (ev.Kind != node.EventMessage || !layer.IsMessage(ev.Msg)) {
		l.rates.see(now, ev)
		l.faultGather = l.faultGather || (ev.Kind == node.EventTransportError && l.cfg.Controller.GatherOnFault)
	}
	if l.gate == nil {
		return pass, nil, nil
	}
	switch ev.Kind {
	case node.EventMessage:
		if layer.IsMessage(ev.Msg) {
			// Steering's own (another layer's never reach this one).
			return layer.Verdict{}, l.onSteeringMessage(now, ev.From, ev.Msg), nil
		}
	case node.EventTimer, node.EventApp, node.EventTransportError:
	case node.EventReset:
		l.reset()
		return pass, nil, nil
	default:
		return pass, nil, nil
	}
	if ev.At.IsZero() {
		ev.At = now
	}
	switch {
	case ev.Kind == node.EventMessage && in != nil && !retry:
		l.gate.Heard(in.From, in.CN)
	case ev.Kind == node.EventTransportError && !retry:
		l.gate.Forget(ev.Peer)
	}
	if l.budget.active && l.budget.due(now) {
		l.judgeLiveness(now) // the state before the event
	}
	if l.budget.lifted {
		// Lifted for liveness (liveness_budget.go): no filter, no check.
		if !retry {
			l.mu.Lock()
			l.st.Events++
			l.mu.Unlock()
		}
		return pass, nil, nil
	}
	// With no filter in force and the check off, the gate passes
	// everything and its counters cannot move: skip copying them.
	idle := !l.cfg.Immediate && len(l.gate.Filters()) == 0
	timed := l.cfg.Immediate && l.cfg.OnImmediateCheck != nil && l.cfg.Clock != nil
	var began time.Time
	if timed {
		began = l.cfg.Clock()
	}
	v, veto := l.gate.Gate(l.host.Core(), ev, l.cfg.Immediate, retry)
	var took time.Duration
	if timed {
		took = l.cfg.Clock().Sub(began)
	}
	var gated Stats
	if !idle {
		gated = l.gate.Stats()
		l.publishHolds()
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
	if v.Handle {
		return v, nil, nil
	}
	if ev.Kind == node.EventMessage {
		v.RetryAt = time.Time{} // a message cannot wait: dropped
	}
	l.chargeLiveness(now)
	if !retry {
		if veto != nil {
			l.log.Debug("steering: immediate check vetoed", slog.Any("event", ev), slog.Any("verdict", v),
				slog.String("property", veto.Property), slog.Any("violation", veto.Err))
		} else {
			l.log.Debug("steering: filter", slog.Any("event", ev), slog.Any("verdict", v))
		}
		why := l.explainVerdict(ev, veto)
		if why != nil {
			l.mu.Lock()
			if l.st.Interventions == nil {
				l.st.Interventions = map[string]uint64{}
			}
			l.st.Interventions[why.Source+"/"+why.Property]++
			l.mu.Unlock()
		}
		if l.cfg.OnIntervention != nil {
			l.cfg.OnIntervention(Intervention{Event: ev, Verdict: v, Veto: veto, Why: why})
		}
	}
	return v, nil, nil
}

// reset forgets the filters in force and the rounds not yet applied: the
// node restarted (core goroutine).
func (l *Layer) reset() {
	l.gate.Install(nil)
	l.gate.ForgetEscalations()
	l.resetLiveness()
	l.last, l.asked, l.why, l.unseen, l.recall = nil, nil, nil, nil, nil
	l.included, l.includedSet = nil, false
	l.mu.Lock()
	l.results = nil
	l.shown, l.shownReasons = nil, nil
	l.desk.pending = nil
	l.mu.Unlock()
	l.installShipped()
}

// Sending counts the service's sends for the node's rates (layer.Layer).
func (l *Layer) Sending(now time.Time, env *node.Envelope) { l.rates.r.Sends++ }

// After asks the gathers to take in the peers the gate filters
// (includeFiltered) and gathers the neighbourhood after a transport error
// under Config.GatherOnFault (layer.Layer; rates_layer.go).
func (l *Layer) After(now time.Time) []node.Envelope {
	l.watchLiveness(now)
	l.includeFiltered()
	return l.gatherAfterFault(now)
}

// Tick applies the rounds handed back (layer.Layer): the install policy
// of the type documentation, in mode Steer; and judges the liveness
// budget's obligations (liveness_budget.go).
func (l *Layer) Tick(now time.Time) ([]node.Envelope, error) {
	l.watchLiveness(now)
	l.mu.Lock()
	results := l.results
	l.results = nil
	l.mu.Unlock()
	var keep []*pendingRound
	var out []node.Envelope
	for _, p := range results {
		if !l.apply(p, now) {
			keep = append(keep, p)
		}
		out, p.out = append(out, p.out...), nil
	}
	if len(keep) > 0 {
		l.mu.Lock()
		l.results = append(keep, l.results...)
		l.mu.Unlock()
	}
	return out, nil
}

// apply carries out the install policy for one round handed back, at now
// (core goroutine), and reports whether the round is done with: its
// replayed paths' filters join those in force at once; at its end, a
// completed round's filters replace them (a cancelled or failed round's
// Reinstalled filters do).
func (l *Layer) apply(p *pendingRound, now time.Time) bool {
	r := p.round
	steer := l.mode == Steer && r.rep != nil
	if !p.merged {
		p.merged = true
		if steer && len(r.rep.Reinstalled) > 0 {
			fs := slices.Clone(l.gate.Filters())
			for _, f := range r.rep.Reinstalled {
				if !slices.Contains(fs, f) {
					fs = append(fs, f)
				}
			}
			l.installFrom(fs, r.snap.At, r.rep)
		}
	}
	if p.ended.After(now) {
		return false
	}
	if r.rep != nil {
		p.out = l.sendRequests(now, r.rep)
		if len(r.rep.Starving) > 0 {
			l.gate.releaseHolds(now)
			l.log.Info("steering: holds released for liveness", slog.Any("holds", r.rep.Starving), slog.Uint64("cut", r.rep.CN))
			gated := l.gate.Stats()
			l.publishHolds()
			l.mu.Lock()
			l.gated = gated
			l.mu.Unlock()
		}
	}
	if !steer {
		return true
	}
	completed := !r.cancel && r.err == nil
	fs := r.rep.Installed
	if !completed {
		fs = r.rep.Reinstalled
	} else {
		fs = l.keepUnseen(fs, r.rep.Members, now)
	}
	if len(fs) > 0 || len(l.gate.Filters()) > 0 {
		l.log.Info("steering: filters installed", slog.Any("filters", fs), slog.Uint64("cut", r.rep.CN),
			slog.Bool("round_completed", completed))
	}
	l.installFrom(fs, r.snap.At, r.rep)
	if l.cfg.OnInstall != nil {
		l.cfg.OnInstall(l.gate.Filters(), r.rep.CN, completed)
	}
	return true
}

// install puts fs, the filters of a round on a snapshot completed at
// checked, in force at the gate (Controller.InstallChecked: an escalated
// filter not yet re-checked stays) and in Status.
func (l *Layer) install(fs []Filter, checked time.Time) { l.installFrom(fs, checked, nil) }

// installFrom is install for the filters of round report rep (nil: none),
// whose predictions explain them (explainRound).
func (l *Layer) installFrom(fs []Filter, checked time.Time, rep *RoundReport) {
	l.gate.InstallChecked(fs, checked)
	l.includeFiltered()
	fs = l.gate.Filters()
	l.explainRound(rep, fs)
	shown := make([]string, len(fs))
	for i, f := range fs {
		shown[i] = f.String()
	}
	reasons := l.reasons()
	gated := l.gate.Stats() // an install may release escalations
	l.publishHolds()
	l.mu.Lock()
	l.shown, l.shownReasons = shown, reasons
	l.gated = gated
	l.mu.Unlock()
}

// NextTick is due when a round handed back waits to be applied: at once
// for its replayed paths' filters, at its end for the rest; and while a
// lift for liveness lasts, when it may end (liveness_budget.go)
// (layer.Layer).
func (l *Layer) NextTick() time.Time {
	at := l.budget.nextJudgement()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, p := range l.results {
		t := p.ended
		if !p.merged {
			t = p.round.Started()
		}
		if at.IsZero() || t.Before(at) {
			at = t
		}
	}
	return at
}

// Filters returns a copy of the filters in force. Core goroutine only.
func (l *Layer) Filters() []Filter {
	if l.gate == nil {
		return nil
	}
	return slices.Clone(l.gate.Filters())
}

// Stats returns the node's steering counters: the explorer's (rounds,
// states, predictions, filters installed) as of the last round and the
// gate's (hits, checks, vetoes, overrides) as of the last event. Safe from
// any goroutine.
func (l *Layer) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.explored
	s.Predicted = make(map[string]uint64, len(l.explored.Predicted))
	for k, v := range l.explored.Predicted {
		s.Predicted[k] = v
	}
	g := l.gated
	s.FilterHits, s.Vetoes, s.ImmediateChecks, s.Overrides = g.FilterHits, g.Vetoes, g.ImmediateChecks, g.Overrides
	s.LookAheads, s.LookAheadStates, s.LookAheadVetoes = g.LookAheads, g.LookAheadStates, g.LookAheadVetoes
	s.Escalations, s.Held, s.Released, s.ReleasedForLiveness = g.Escalations, g.Held, g.Released, g.ReleasedForLiveness
	return s
}

// LayerStatus is a JSON-friendly picture of a Layer: its mode and counters
// (the "steering" object of crystalball node's /status, and its /metrics).
type LayerStatus struct {
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
	// Walks, WalkSteps and DeadEnds are the liveness search's (Stats):
	// walks taken from snapshots, steps of every walk and probe, and
	// dead ends predicted (Predicted counts them by property too).
	Walks     uint64 `json:"walks"`
	WalkSteps uint64 `json:"walk_steps"`
	DeadEnds  uint64 `json:"dead_ends"`
	// SafetyWalks, SafetyWalkSteps and SafetyWalkPredictions are the
	// rounds' safety walks (Stats).
	SafetyWalks           uint64 `json:"safety_walks,omitempty"`
	SafetyWalkSteps       uint64 `json:"safety_walk_steps,omitempty"`
	SafetyWalkPredictions uint64 `json:"safety_walk_predictions,omitempty"`
	// DeadEndsConfirmed and DeadEndsRetracted are the dead ends the
	// node's own later snapshots confirmed or retracted (Stats).
	DeadEndsConfirmed uint64 `json:"dead_ends_confirmed"`
	DeadEndsRetracted uint64 `json:"dead_ends_retracted"`
	// LastDeadEnd renders the last dead end predicted (Prediction.String:
	// property, verdict, critical step, path), empty before the first.
	LastDeadEnd string `json:"last_dead_end,omitempty"`
	// RoundsCanceled counts rounds cancelled (a newer snapshot, Stop, the
	// runner's context), RoundErrors rounds that failed; SnapshotsSkipped
	// snapshots the runner dropped before any round took them.
	RoundsCanceled   uint64 `json:"rounds_canceled"`
	RoundErrors      uint64 `json:"round_errors"`
	SnapshotsSkipped uint64 `json:"snapshots_skipped"`
	// ExplorationSeconds is the time of every round as the runner
	// measured it (wall time live; charged virtual time with a
	// SyncRunner), cancelled ones included; LastRoundSeconds that of the
	// last; LastRound when it ended and LastRoundCN the cut of its
	// snapshot.
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
	// had used up its intervention budget (Config.MaxInterventions) and
	// its escalation timed out. Escalations counts the kinds escalated
	// when their budget ran out, Held the events kept from the handler
	// while escalated, Released the escalations a re-check ended
	// (Stats).
	Events          uint64 `json:"events"`
	FilterHits      uint64 `json:"filter_hits"`
	ImmediateChecks uint64 `json:"immediate_checks"`
	Vetoes          uint64 `json:"vetoes"`
	// LookAheads counts the look-aheads the check ran before risky
	// events, LookAheadVetoes the vetoes they gave (in Vetoes too;
	// LookAheadConfig).
	LookAheads      uint64 `json:"look_aheads"`
	LookAheadVetoes uint64 `json:"look_ahead_vetoes"`
	Overrides       uint64 `json:"overrides"`
	Escalations     uint64 `json:"escalations"`
	Held            uint64 `json:"held"`
	Released        uint64 `json:"released"`
	// ReleasedForLiveness counts the holds the liveness guard released
	// (a round's walks found that they kept the neighbourhood from a live
	// state: Stats.ReleasedForLiveness).
	ReleasedForLiveness uint64 `json:"released_for_liveness"`
	// Filters are the filters in force, rendered by Filter.String, and
	// Reasons the same filters with the prediction each came from.
	// Interventions counts the events kept from the handler by the source
	// and property of their explanation ("round/OneHolder",
	// "check/RootHasNoSiblings", "request/…"; retries not again).
	Filters       []string          `json:"filters"`
	Reasons       []FilterReason    `json:"reasons,omitempty"`
	Interventions map[string]uint64 `json:"interventions,omitempty"`
	// Holds are the kinds of event the gate holds now, and Recent the
	// newest predictions of the node's rounds, newest first (at most
	// MaxRecentPredictions; status_recent.go).
	Holds  []HoldRecord       `json:"holds,omitempty"`
	Recent []PredictionRecord `json:"recent,omitempty"`
	// Steering requests (request.go). RequestsSent counts the requests
	// this node sent to the owners of predicted events, AnswersAccepted
	// and AnswersRefused their answers; RequestsAdmitted counts the
	// requests of others this node admitted for a round, RequestsRefused
	// those it refused (at once or after its round's check),
	// RequestsAccepted those whose filter it installed. Sent and Received
	// list the newest (at most 16 each), with their answers.
	RequestsSent     uint64          `json:"requests_sent"`
	AnswersAccepted  uint64          `json:"answers_accepted"`
	AnswersRefused   uint64          `json:"answers_refused"`
	RequestsAdmitted uint64          `json:"requests_admitted"`
	RequestsRefused  uint64          `json:"requests_refused"`
	RequestsAccepted uint64          `json:"requests_accepted"`
	Sent             []RequestRecord `json:"sent,omitempty"`
	Received         []RequestRecord `json:"received,omitempty"`
	// The liveness budget (liveness_budget.go). Lift is the lift in force
	// (nil: steering in force): the property whose obligation steering
	// kept open past its bound, since when it has failed and since when
	// steering is lifted. Lifts counts the lifts, LiftsExpired those that
	// ended with their obligation still open (the property failed without
	// steering too), LiftedSeconds the time steering was lifted (the lift
	// in force as of the layer's last evaluation), LiftsByProperty the
	// lifts by the property that caused them.
	Lift            *LiftRecord          `json:"lift,omitempty"`
	Lifts           uint64               `json:"lifts"`
	LiftsExpired    uint64               `json:"lifts_expired"`
	LiftedSeconds   float64              `json:"lifted_seconds"`
	LiftsByProperty map[string]LiftCount `json:"lifts_by_property,omitempty"`
}

// Status returns the layer's mode and counters. Safe from any goroutine.
func (l *Layer) Status() LayerStatus {
	s := l.Stats()
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.st
	if st.Mode == "" {
		st.Mode, st.Immediate = l.cfg.Controller.Mode.String(), l.cfg.Immediate
	}
	st.Rounds, st.RoundsReused, st.StatesExplored, st.ReplayHits = s.Rounds, s.RoundsReused, s.StatesExplored, s.ReplayHits
	st.FiltersInstalled, st.FiltersUnhelpful = s.FiltersInstalled, s.Unhelpful
	st.FilterHits, st.ImmediateChecks, st.Vetoes, st.Overrides = s.FilterHits, s.ImmediateChecks, s.Vetoes, s.Overrides
	st.LookAheads, st.LookAheadVetoes = s.LookAheads, s.LookAheadVetoes
	st.Escalations, st.Held, st.Released, st.ReleasedForLiveness = s.Escalations, s.Held, s.Released, s.ReleasedForLiveness
	st.Predicted = s.Predicted
	st.Walks, st.WalkSteps, st.DeadEnds = s.Walks, s.WalkSteps, s.DeadEnds
	st.SafetyWalks, st.SafetyWalkSteps, st.SafetyWalkPredictions = s.SafetyWalks, s.SafetyWalkSteps, s.SafetyWalkPredictions
	st.DeadEndsConfirmed, st.DeadEndsRetracted = s.DeadEndsConfirmed, s.DeadEndsRetracted
	st.Filters = append([]string{}, l.shown...)
	st.Reasons = slices.Clone(l.shownReasons)
	st.Interventions = maps.Clone(st.Interventions)
	st.RequestsAccepted = s.RequestsAccepted
	st.RequestsRefused += s.RequestsRefused
	st.Sent, st.Received = append([]RequestRecord(nil), st.Sent...), append([]RequestRecord(nil), st.Received...)
	if st.Lift != nil {
		r := *st.Lift
		st.Lift = &r
	}
	st.LiftsByProperty = maps.Clone(st.LiftsByProperty)
	if st.LastRound != nil {
		t := *st.LastRound
		st.LastRound = &t
	}
	return st
}
