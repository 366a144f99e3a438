package steering

import (
	"log/slog"
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
