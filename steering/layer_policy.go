package steering

import (
	"log/slog"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// report logs a round handed back and gives it to OnRound or
// OnRoundFailed (where the runner runs it).
func (l *Layer) report(r *Round, took time.Duration) {
	snap, rep := r.snap, r.rep
	if r.cancel || r.err != nil {
		l.reportUnfinished(r, took)
		return
	}
	l.log.Debug("steering: round", slog.Uint64("cut", snap.CN), slog.Any("members", rep.Members),
		slog.Uint64("states", rep.States), slog.Int("predicted", len(rep.Predictions)),
		slog.Int("filters", len(rep.Installed)), slog.Int("unhelpful", rep.Unhelpful),
		slog.Any("present", rep.Present), slog.Duration("took", took))
	for _, p := range rep.Predictions {
		l.logPrediction(p, snap)
	}
	l.noteLastDeadEnds(rep.Predictions)
	l.noteRecent(snap, rep)
	if l.cfg.OnRound != nil {
		l.cfg.OnRound(snap, rep)
	}
}

// reportUnfinished logs a round that was cancelled or failed and gives
// it to OnRoundFailed.
func (l *Layer) reportUnfinished(r *Round, took time.Duration) {
	snap := r.snap
	if r.cancel {
		l.log.Debug("steering: round cancelled", slog.Uint64("cut", snap.CN), slog.Duration("took", took))
	} else {
		l.log.Error("steering: round failed", slog.Uint64("cut", snap.CN), slog.Any("error", r.err))
	}
	if l.cfg.OnRoundFailed != nil {
		l.cfg.OnRoundFailed(snap, r.err, r.cancel)
	}
}

// logPrediction logs one prediction of a round on snap: a predicted
// violation, or a dead end with its critical step.
func (l *Layer) logPrediction(p Prediction, snap *snapshot.Snapshot) {
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
		attrs = append(attrs, deadEndAttrs(c, path)...)
	}
	l.log.Info(msg, attrs...)
}

// deadEndAttrs are the log attributes of a dead end's verdict and
// critical step (path is the prediction's steps as text), with the live
// path's step there when it has one.
func deadEndAttrs(c *Critical, path []string) []any {
	attrs := []any{slog.String("verdict", c.Verdict.String()), slog.Int("critical_step", c.Step+1),
		slog.String("critical", path[c.Step])}
	if c.Step < len(c.LiveReport) {
		attrs = append(attrs, slog.String("live_step", c.LiveReport[c.Step].Text))
	}
	return attrs
}

// noteLastDeadEnds records each dead end of preds, in order, as the
// status's LastDeadEnd.
func (l *Layer) noteLastDeadEnds(preds []Prediction) {
	for _, p := range preds {
		if p.Critical != nil {
			l.mu.Lock()
			l.st.LastDeadEnd = p.String()
			l.mu.Unlock()
		}
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
	if !retry {
		l.countOffered(now, ev)
	}
	if l.gate == nil {
		return layer.Verdict{Handle: true}, nil, nil
	}
	if v, out, done := l.gateUnsteered(now, ev); done {
		return v, out, nil
	}
	return l.gateSteered(now, ev, in, retry), nil, nil
}

// countOffered accounts an event offered to the gate for the first time
// (steering's own messages not) in the node's rates, and notes a
// transport error that asks for a gather (Config.GatherOnFault).
func (l *Layer) countOffered(now time.Time, ev node.Event) {
	if ev.Kind == node.EventMessage && layer.IsMessage(ev.Msg) {
		return
	}
	l.rates.see(now, ev)
	l.faultGather = l.faultGather || (ev.Kind == node.EventTransportError && l.cfg.Controller.GatherOnFault)
}

// gateUnsteered settles the events the filters and the check never
// judge: steering's own messages (consumed), a reset (the filters and
// pending rounds forgotten), and every kind other than messages, timers,
// application calls and transport errors (passed). done is false for
// the events left to gateSteered.
func (l *Layer) gateUnsteered(now time.Time, ev node.Event) (v layer.Verdict, out []node.Envelope, done bool) {
	pass := layer.Verdict{Handle: true}
	switch ev.Kind {
	case node.EventMessage:
		if layer.IsMessage(ev.Msg) {
			// Steering's own (another layer's never reach this one).
			return layer.Verdict{}, l.onSteeringMessage(now, ev.From, ev.Msg), true
		}
	case node.EventTimer, node.EventApp, node.EventTransportError:
	case node.EventReset:
		l.reset()
		return pass, nil, true
	default:
		return pass, nil, true
	}
	return layer.Verdict{}, nil, false
}

// gateSteered is Gate for a message, timer, application call or
// transport error: the liveness budget judged when due, then, unless
// steering is lifted, the gate's filters and immediate check.
func (l *Layer) gateSteered(now time.Time, ev node.Event, in *node.Envelope, retry bool) layer.Verdict {
	if ev.At.IsZero() {
		ev.At = now
	}
	if !retry {
		l.noteArrival(ev, in)
	}
	if l.budget.active && l.budget.due(now) {
		l.judgeLiveness(now) // the state before the event
	}
	if l.budget.lifted {
		// Lifted for liveness (liveness_budget.go): no filter, no check.
		l.countLiftedEvent(retry)
		return layer.Verdict{Handle: true}
	}
	v, veto := l.gateChecked(ev, retry)
	if v.Handle {
		return v
	}
	return l.intervene(now, ev, v, veto, retry)
}

// noteArrival tells the gate of a first offer of a message (its sender
// heard from, for the look-ahead's first word) or a transport error (its
// peer forgotten).
func (l *Layer) noteArrival(ev node.Event, in *node.Envelope) {
	switch {
	case ev.Kind == node.EventMessage && in != nil:
		l.gate.Heard(in.From, in.CN)
	case ev.Kind == node.EventTransportError:
		l.gate.Forget(ev.Peer)
	}
}

// countLiftedEvent counts an event a lift for liveness let through
// (retries not again).
func (l *Layer) countLiftedEvent(retry bool) {
	if retry {
		return
	}
	l.mu.Lock()
	l.st.Events++
	l.mu.Unlock()
}

// gateChecked runs the gate's filters and immediate check on ev, timing
// the check for OnImmediateCheck when it examined the event, and brings
// the layer's copy of the gate's counters up to date.
func (l *Layer) gateChecked(ev node.Event, retry bool) (layer.Verdict, *Veto) {
	// With no filter in force and the check off, the gate passes
	// everything and its counters cannot move: skip copying them.
	idle := !l.cfg.Immediate && len(l.gate.Filters()) == 0
	timed := l.immediateTimed()
	var began time.Time
	if timed {
		began = l.cfg.Clock()
	}
	v, veto := l.gate.Gate(l.host.Core(), ev, l.cfg.Immediate, retry)
	var took time.Duration
	if timed {
		took = l.cfg.Clock().Sub(began)
	}
	checked := l.noteGated(idle, retry)
	if timed && checked {
		l.cfg.OnImmediateCheck(took)
	}
	return v, veto
}

// immediateTimed reports whether Gate measures the immediate check for
// OnImmediateCheck: the check on, the hook and the clock set.
func (l *Layer) immediateTimed() bool {
	return l.cfg.Immediate && l.cfg.OnImmediateCheck != nil && l.cfg.Clock != nil
}

// noteGated counts the event (retries not again) and, unless the gate
// was idle, copies its counters and holds; it reports whether the
// immediate check examined the event.
func (l *Layer) noteGated(idle, retry bool) bool {
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
	return checked
}

// intervene carries out verdict v of the gate on an event it kept from
// the handler: a message cannot wait (dropped), the liveness budget is
// charged, and a first offer is logged, counted and reported to
// OnIntervention.
func (l *Layer) intervene(now time.Time, ev node.Event, v layer.Verdict, veto *Veto, retry bool) layer.Verdict {
	if ev.Kind == node.EventMessage {
		v.RetryAt = time.Time{} // a message cannot wait: dropped
	}
	l.chargeLiveness(now)
	if !retry {
		l.recordIntervention(ev, v, veto)
	}
	return v
}

// recordIntervention logs an intervention, counts it by the source and
// property of its explanation and hands it to OnIntervention.
func (l *Layer) recordIntervention(ev node.Event, v layer.Verdict, veto *Veto) {
	if veto != nil {
		l.log.Debug("steering: immediate check vetoed", slog.Any("event", ev), slog.Any("verdict", v),
			slog.String("property", veto.Property), slog.Any("violation", veto.Err))
	} else {
		l.log.Debug("steering: filter", slog.Any("event", ev), slog.Any("verdict", v))
	}
	why := l.explainVerdict(ev, veto)
	if why != nil {
		l.countIntervention(why)
	}
	if l.cfg.OnIntervention != nil {
		l.cfg.OnIntervention(Intervention{Event: ev, Verdict: v, Veto: veto, Why: why})
	}
}

// countIntervention adds one to Stats.Interventions under why's source
// and property.
func (l *Layer) countIntervention(why *Explanation) {
	l.mu.Lock()
	if l.st.Interventions == nil {
		l.st.Interventions = map[string]uint64{}
	}
	l.st.Interventions[why.Source+"/"+why.Property]++
	l.mu.Unlock()
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
	l.mergeReinstalled(p, steer)
	if p.ended.After(now) {
		return false
	}
	if r.rep != nil {
		p.out = l.sendRequests(now, r.rep)
		l.releaseStarving(now, r.rep)
	}
	if steer {
		l.installRound(r, now)
	}
	return true
}

// mergeReinstalled puts a round's Reinstalled filters (its replayed
// paths') in force beside those already there, once per round, in mode
// Steer.
func (l *Layer) mergeReinstalled(p *pendingRound, steer bool) {
	if p.merged {
		return
	}
	p.merged = true
	r := p.round
	if !steer || len(r.rep.Reinstalled) == 0 {
		return
	}
	fs := appendMissingFilters(slices.Clone(l.gate.Filters()), r.rep.Reinstalled)
	l.installFrom(fs, r.snap.At, r.rep)
}

// appendMissingFilters appends to fs each filter of add it lacks, in
// order.
func appendMissingFilters(fs, add []Filter) []Filter {
	for _, f := range add {
		if !slices.Contains(fs, f) {
			fs = append(fs, f)
		}
	}
	return fs
}

// releaseStarving releases the gate's holds at now when the round's
// liveness guard found them starving the neighbourhood (rep.Starving).
func (l *Layer) releaseStarving(now time.Time, rep *RoundReport) {
	if len(rep.Starving) == 0 {
		return
	}
	l.gate.releaseHolds(now)
	l.log.Info("steering: holds released for liveness", slog.Any("holds", rep.Starving), slog.Uint64("cut", rep.CN))
	gated := l.gate.Stats()
	l.publishHolds()
	l.mu.Lock()
	l.gated = gated
	l.mu.Unlock()
}

// installRound installs, at a round's end, its filters: a completed
// round's (with the unseen peers' kept: keepUnseen), a cancelled or
// failed round's Reinstalled ones.
func (l *Layer) installRound(r *Round, now time.Time) {
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
		at = earliestTick(at, p.tickAt())
	}
	return at
}

// tickAt is when a round handed back next needs a tick: its start for
// its replayed paths' filters until they are merged, then its end.
func (p *pendingRound) tickAt() time.Time {
	if !p.merged {
		return p.round.Started()
	}
	return p.ended
}

// earliestTick is the earlier of a tick due at (zero: none yet) and one
// due at t.
func earliestTick(at, t time.Time) time.Time {
	if at.IsZero() || t.Before(at) {
		return t
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

// Stats returns the layer's counters: its explorer's rounds as of the
// last round, its gate's as of the last event, and its own. The maps are
// copies. Safe from any goroutine.
func (l *Layer) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{RoundStats: l.explored.RoundStats, GateStats: l.gated.GateStats, LayerStats: l.st.LayerStats}.clone()
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
	// Stats are the layer's counters (Layer.Stats; mode Off counts no
	// rounds: they only refresh the view).
	Stats
	// LastDeadEnd renders the last dead end predicted (Prediction.String:
	// property, verdict, critical step, path), empty before the first.
	LastDeadEnd string `json:"last_dead_end,omitempty"`
	// LastRoundSeconds is the time of the last round as the runner
	// measured it (Stats.ExplorationSeconds has the rule); LastRound when
	// it ended and LastRoundCN the cut of its snapshot.
	LastRoundSeconds float64    `json:"last_round_seconds"`
	LastRound        *time.Time `json:"last_round,omitempty"`
	LastRoundCN      uint64     `json:"last_round_cn"`
	// Filters are the filters in force, rendered by Filter.String, and
	// Reasons the same filters with the prediction each came from.
	Filters []string       `json:"filters"`
	Reasons []FilterReason `json:"reasons,omitempty"`
	// Holds are the kinds of event the gate holds now, and Recent the
	// newest predictions of the node's rounds, newest first (at most
	// MaxRecentPredictions; status_recent.go).
	Holds  []HoldRecord       `json:"holds,omitempty"`
	Recent []PredictionRecord `json:"recent,omitempty"`
	// Sent and Received list the newest steering requests this node sent
	// and received (at most 16 each), with their answers (request.go).
	Sent     []RequestRecord `json:"sent,omitempty"`
	Received []RequestRecord `json:"received,omitempty"`
	// Lift is the liveness budget's lift in force (nil: steering in
	// force): the property whose obligation steering kept open past its
	// bound, since when it has failed and since when steering is lifted
	// (liveness_budget.go).
	Lift *LiftRecord `json:"lift,omitempty"`
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
	st.Stats = s
	st.Filters = append([]string{}, l.shown...)
	st.Reasons = slices.Clone(l.shownReasons)
	st.Sent, st.Received = append([]RequestRecord(nil), st.Sent...), append([]RequestRecord(nil), st.Received...)
	if st.Lift != nil {
		r := *st.Lift
		st.Lift = &r
	}
	if st.LastRound != nil {
		t := *st.LastRound
		st.LastRound = &t
	}
	return st
}
