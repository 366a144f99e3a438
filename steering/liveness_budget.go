package steering

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// LivenessBudget configures the liveness budget of a node's Layer: the
// rule by which steering never costs liveness silently. Zero fields take
// the defaults documented on each (DefaultLivenessBudget). It is on by
// default: steering that starves a property for longer than its bound has
// stopped doing its job.
type LivenessBudget struct {
	// DefaultBound is the bound a plain liveness property (node.Eventually,
	// which declares none) is judged by: steering that keeps one failing
	// in the node's view for longer than this, having intervened while it
	// failed, is lifted. Bounded properties (node.Within) keep their own
	// bound. Zero means DefaultLivenessBound; negative is an error.
	DefaultBound time.Duration
	// MinLift is the shortest a lift lasts: steering resumes at the first
	// evaluation at least MinLift after the lift began at which every
	// obligation that lifted it has closed. It keeps a lift from ending on
	// the event that closes the obligation, before the event's replies and
	// retries have run. Zero means DefaultMinLift; negative is an error.
	MinLift time.Duration
}

// DefaultLivenessBound is LivenessBudget.DefaultBound's default: three
// of the emulator's default gather intervals (emulation.ModeSnapshotInterval,
// 10 s), so that an obligation the node judges on other nodes' states can
// close in its view before it counts as starved, and well within the
// healing a run ends with (emulate's --heal), so a lift has time to
// bring the property back before the run judges it.
const DefaultLivenessBound = 30 * time.Second

// DefaultMinLift is LivenessBudget.MinLift's default: ten postponements
// (DefaultPostponeDelay) of a vetoed timer or call, and several of a
// typical sender's resend timer, yet short against the bound, because
// every event steering would have stopped runs while the lift lasts.
const DefaultMinLift = 5 * time.Second

// DefaultLivenessBudget returns the defaults of a LivenessBudget's zero
// fields.
func DefaultLivenessBudget() LivenessBudget {
	return LivenessBudget{DefaultBound: DefaultLivenessBound, MinLift: DefaultMinLift}
}

func (b LivenessBudget) withDefaults() (LivenessBudget, error) {
	if min(b.DefaultBound, b.MinLift) < 0 {
		return b, fmt.Errorf("%w: negative LivenessBudget field (DefaultBound %v, MinLift %v)", ErrInvalidConfig, b.DefaultBound, b.MinLift)
	}
	d := DefaultLivenessBudget()
	b.DefaultBound, b.MinLift = cmp.Or(b.DefaultBound, d.DefaultBound), cmp.Or(b.MinLift, d.MinLift)
	return b, nil
}

// LiftRecord is a lift of a node's steering for liveness
// (LayerStatus.Lift).
type LiftRecord struct {
	// Property is the property whose obligation lifted steering: open in
	// the node's view past its bound after steering intervened.
	Property string `json:"property"`
	// Since is when steering was lifted; FailingSince when the node saw
	// the property's obligation open (at most its first intervention
	// since); FailingSeconds how long it had been open as of the layer's
	// last evaluation (the event or tick it last judged the property on).
	Since          time.Time `json:"since"`
	FailingSince   time.Time `json:"failing_since"`
	FailingSeconds float64   `json:"failing_seconds"`
}

// LiftCount is what one property's lifts came to (LayerStatus.LiftsByProperty).
type LiftCount struct {
	// Lifts counts the lifts the property caused; Expired those that
	// ended with its obligation still open (livenessBudget).
	Lifts   uint64 `json:"lifts"`
	Expired uint64 `json:"expired,omitempty"`
	// LongestFailingSeconds is the longest the property's obligation had
	// been open in the node's view at the end of one of its lifts (or as
	// of the last evaluation, for a lift in force).
	LongestFailingSeconds float64 `json:"longest_failing_seconds"`
}

// livenessBudget is the rule of LivenessBudget, on the core goroutine of
// one Layer.
//
// Every intervention (a filter hit, a veto, a postponement, a hold; a
// retry stopped again too) charges it: the layer judges every bounded
// property of the node and every plain liveness property (with
// DefaultBound) on the immediate check's view (Controller.CheckView,
// decoded from the newest snapshot when the check is off) with the node's
// own current state overlaid, by node.Obligation's rule, and charges each
// obligation open then — and each that opens within its bound after the
// intervention: a dropped request shows as a waiting client only when
// the next gather brings the client's state. It judges them at every
// event (before the gate only when a lift could begin or end, after the
// handler), at every snapshot and at every tick, for as long as an
// obligation is charged, a lift lasts or the last intervention is within
// the longest bound; then it stops judging until the next intervention,
// whose first judgement opens the obligations afresh (so an obligation
// that was open before is timed from then).
//
// A charged obligation that becomes late (open for longer than its bound,
// node.Obligation.Elapse) means steering has starved its property: the
// layer lifts its steering — the gate lets every event through, the
// filters in force and the immediate check are ignored, rounds still run
// and install — and it lasts until every obligation that lifted it has
// closed, and for at least MinLift. A lift whose obligation is still open
// once the lift has lasted the property's bound (and MinLift) expires:
// the property fails without steering too, or steering's cost cannot be
// undone (a dropped message its sender never sends again); steering
// resumes, and that obligation cannot lift it again until it closes (it
// is barred). Without that, a property that never holds in the node's
// partial view would lift steering for good.
//
// The layer asks for a tick (NextTick) where a judgement is due without
// an event: 1 ns past a charged obligation's Due (where Elapse first
// calls it late), at MinLift's end and at a lift's expiry. So a lift
// begins at the first instant past the bound, and the event it frees — a
// postponed event's retry, a dropped message's resend — runs at once.
type livenessBudget struct {
	cfg   LivenessBudget
	props []budgetProp
	// active is set while the layer judges the obligations.
	active bool
	// lifted is set while a lift lasts; lift is its record (first
	// property), liftMin when its MinLift ends.
	lifted  bool
	lift    LiftRecord
	liftMin time.Time
	// last is the time of the last judgement, seen the time up to which
	// LayerStatus.LiftedSeconds counts the lift in force, charge the time
	// of the last intervention.
	last, seen, charge time.Time
	// window is the longest bound: how long after an intervention an
	// obligation that opens is charged with it.
	window time.Duration
}

// budgetProp is one judged property and its obligation in the node's view.
type budgetProp struct {
	p   node.Property // a Bounded property (plain liveness: DefaultBound)
	obl node.Obligation
	// charged: steering intervened while the obligation was open, or
	// within its bound before it opened;
	// lifting: it lifted steering and the lift lasts; barred: its lift
	// expired and it may not lift again until the obligation closes.
	charged, lifting, barred bool
	expires                  time.Time // lifting: when the lift of it expires
}

// newLivenessBudget judges the bounded properties of safety (a
// controller's Properties keep them) and the liveness properties live.
func newLivenessBudget(cfg LivenessBudget, safety, live []node.Property) livenessBudget {
	b := livenessBudget{cfg: cfg}
	for _, p := range safety {
		if p.Kind == node.Bounded {
			b.props = append(b.props, budgetProp{p: p})
		}
	}
	for _, p := range live {
		b.props = append(b.props, budgetProp{p: node.Property{Name: p.Name, Kind: node.Bounded, Check: p.Check, Bound: cfg.DefaultBound}})
	}
	for _, bp := range b.props {
		b.window = max(b.window, bp.p.Bound)
	}
	return b
}

// due reports whether a judgement at now could lift or resume steering:
// a charged obligation is past its bound, or a lift may end. Between two
// events only time and the view move, and the judgement after the last
// event saw the state this one starts from, so the gate judges only then.
func (b *livenessBudget) due(now time.Time) bool {
	if b.liftMayEnd(now) {
		return true
	}
	for i := range b.props {
		if b.props[i].dueAt(now) {
			return true
		}
	}
	return false
}

// liftMayEnd reports whether a lift lasts and its MinLift is over at now.
func (b *livenessBudget) liftMayEnd(now time.Time) bool {
	return b.lifted && !now.Before(b.liftMin)
}

// dueAt reports whether judging bp at now could change the lift: its
// lift expires, or its charged obligation is past its bound.
func (bp *budgetProp) dueAt(now time.Time) bool {
	return bp.expiredAt(now) || bp.lateAt(now)
}

// expiredAt reports whether bp lifts steering and its lift has expired
// at now.
func (bp *budgetProp) expiredAt(now time.Time) bool {
	return bp.lifting && !now.Before(bp.expires)
}

// lateAt reports whether bp's obligation, charged and not lifting, is
// past its bound at now.
func (bp *budgetProp) lateAt(now time.Time) bool {
	return bp.charged && bp.obl.Open && !bp.lifting && now.After(bp.obl.Due(bp.p.Bound))
}

// nextJudgement is when the budget needs a tick (zero: none): the first
// instant a charged obligation is late (1 ns past Obligation.Due, where
// Elapse first calls it late), the end of MinLift, a lift's expiry.
func (b *livenessBudget) nextJudgement() time.Time {
	if !b.active {
		return time.Time{}
	}
	var at time.Time
	if b.lifted && b.last.Before(b.liftMin) {
		at = b.liftMin
	}
	for i := range b.props {
		if t, ok := b.props[i].tickAt(b.lifted); ok {
			at = earliestTick(at, t)
		}
	}
	return at
}

// tickAt is when bp needs a judgement without an event (ok false:
// never): its lift's expiry, or the first instant its charged, open
// obligation is late, unless it is barred or a lift lasts.
func (bp *budgetProp) tickAt(lifted bool) (time.Time, bool) {
	switch {
	case bp.lifting:
		return bp.expires, true
	case bp.awaitsLate(lifted):
		return bp.obl.Due(bp.p.Bound).Add(time.Nanosecond), true
	}
	return time.Time{}, false
}

// awaitsLate reports whether bp's charged obligation is open and not
// yet late, bp not barred and no lift lasting: it lifts steering once
// late.
func (bp *budgetProp) awaitsLate(lifted bool) bool {
	return bp.charged && bp.obl.Open && !bp.obl.Late && !bp.barred && !lifted
}

// chargeLiveness records an intervention at now (Layer.Gate): an active
// budget charges the obligations open as of its last judgement (the
// state the event found), an inactive one judges them first.
func (l *Layer) chargeLiveness(now time.Time) {
	b := &l.budget
	if len(b.props) == 0 || b.lifted || !l.host.Core().Started() {
		return
	}
	b.charge = now
	if !b.active {
		l.activateBudget(now)
	}
	b.chargeOpen()
	l.settleLiveness(now)
}

// activateBudget starts judging at now with every obligation afresh.
func (l *Layer) activateBudget(now time.Time) {
	b := &l.budget
	b.active = true
	for i := range b.props {
		bp := &b.props[i]
		bp.obl, bp.charged = node.Obligation{}, false
	}
	l.judgeLiveness(now)
}

// chargeOpen charges every open obligation that is not barred.
func (b *livenessBudget) chargeOpen() {
	for i := range b.props {
		if bp := &b.props[i]; bp.obl.Open && !bp.barred {
			bp.charged = true
		}
	}
}

// judgeLiveness judges the obligations at now, lifts steering for a late
// charged one and resumes it when the lift is over (core goroutine).
func (l *Layer) judgeLiveness(now time.Time) {
	b := &l.budget
	if !b.active {
		return
	}
	if now.Before(b.last) {
		now = b.last // a node's clock may jump back; obligations' time may not
	}
	var view node.View = overlay{base: l.budgetView(), self: l.self, st: l.host.Core().State()}
	var lifts []int
	for i := range b.props {
		if l.judgeObligation(&b.props[i], view, now) {
			lifts = append(lifts, i)
		}
	}
	b.last = now
	for _, i := range lifts {
		l.liftFor(&b.props[i], now)
	}
	l.noteLift(now)
	if b.liftMayEnd(now) && !b.anyLifting() {
		l.resumeSteering(now)
	}
}

// judgeObligation brings bp's obligation up to now on view: a closed
// one ends its part in a lift, an expired lift bars it, one opened
// within its bound after an intervention is charged. It reports whether
// bp is late and charged and must lift steering.
func (l *Layer) judgeObligation(bp *budgetProp, view node.View, now time.Time) bool {
	o, _ := bp.obl.Elapse(now, bp.p.Bound)
	pending, _ := bp.p.Pending(view)
	bp.obl = o.Observe(now, pending)
	switch {
	case !bp.obl.Open:
		if bp.lifting {
			l.endLiftOf(bp, o, now, false)
		}
		bp.charged, bp.barred = false, false
	case bp.expiredAt(now):
		l.endLiftOf(bp, bp.obl, now, true)
		bp.charged, bp.barred = false, true
	case bp.mayLift():
		return true
	case bp.openedAfter(l.budget.charge, now):
		bp.charged = true // opened within its bound after an intervention
	}
	return false
}

// mayLift reports whether bp's obligation is late and charged, and bp
// neither barred nor lifting already.
func (bp *budgetProp) mayLift() bool {
	return bp.obl.Late && bp.charged && !bp.barred && !bp.lifting
}

// openedAfter reports whether bp, not barred, is judged at now within
// its bound after the intervention at charge (zero: none).
func (bp *budgetProp) openedAfter(charge, now time.Time) bool {
	return !bp.barred && !charge.IsZero() && now.Sub(charge) <= bp.p.Bound
}

// resumeSteering ends the lift in force at now.
func (l *Layer) resumeSteering(now time.Time) {
	b := &l.budget
	b.lifted = false
	l.log.Info("steering: resumed", slog.String("property", b.lift.Property), slog.Time("lifted", b.lift.Since),
		slog.Duration("lifted_for", now.Sub(b.lift.Since)))
	l.mu.Lock()
	l.st.Lift = nil
	l.mu.Unlock()
}

// liftFor lifts steering for bp's late obligation at now (core goroutine).
func (l *Layer) liftFor(bp *budgetProp, now time.Time) {
	b := &l.budget
	bp.lifting = true
	bp.expires = now.Add(max(bp.p.Bound, b.cfg.MinLift))
	rec := LiftRecord{Property: bp.p.Name, Since: now, FailingSince: bp.obl.Since, FailingSeconds: now.Sub(bp.obl.Since).Seconds()}
	l.log.Warn("steering: lifted for liveness", slog.String("property", rec.Property), slog.Time("failing_since", rec.FailingSince),
		slog.Duration("failing", now.Sub(rec.FailingSince)), slog.Duration("bound", bp.p.Bound))
	l.countLift(rec.Property, !b.lifted)
	if !b.lifted {
		b.lifted, b.lift, b.liftMin, b.seen = true, rec, now.Add(b.cfg.MinLift), now
	}
	// The lift pays for the interventions before it: an obligation that
	// opens after it is charged only by a new one.
	b.charge = time.Time{}
}

// countLift counts a lift for property in the status: a new lift when
// first (none lasted), and one of the property's in every case.
func (l *Layer) countLift(property string, first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if first {
		l.st.Lifts++
	}
	if l.st.LiftsByProperty == nil {
		l.st.LiftsByProperty = map[string]LiftCount{}
	}
	c := l.st.LiftsByProperty[property]
	c.Lifts++
	l.st.LiftsByProperty[property] = c
}

// endLiftOf ends bp's part in the lift at now: its obligation o closed or
// the lift of it expired (core goroutine).
func (l *Layer) endLiftOf(bp *budgetProp, o node.Obligation, now time.Time, expired bool) {
	bp.lifting = false
	failing := now.Sub(o.Since).Seconds()
	if expired {
		l.log.Warn("steering: lift expired, the property fails without steering too", slog.String("property", bp.p.Name),
			slog.Duration("failing", now.Sub(o.Since)))
	}
	l.mu.Lock()
	c := l.st.LiftsByProperty[bp.p.Name]
	c.LongestFailingSeconds = max(c.LongestFailingSeconds, failing)
	if expired {
		c.Expired++
		l.st.LiftsExpired++
	}
	l.st.LiftsByProperty[bp.p.Name] = c
	l.mu.Unlock()
}

// noteLift brings the status of a lift in force up to now.
func (l *Layer) noteLift(now time.Time) {
	b := &l.budget
	if !b.lifted {
		return
	}
	from := b.seen
	b.lift.FailingSeconds = now.Sub(b.lift.FailingSince).Seconds()
	l.mu.Lock()
	l.st.LiftedSeconds += now.Sub(from).Seconds()
	rec := b.lift
	l.st.Lift = &rec
	for i := range b.props {
		if bp := &b.props[i]; bp.lifting {
			c := l.st.LiftsByProperty[bp.p.Name]
			c.LongestFailingSeconds = max(c.LongestFailingSeconds, now.Sub(bp.obl.Since).Seconds())
			l.st.LiftsByProperty[bp.p.Name] = c
		}
	}
	l.mu.Unlock()
	b.seen = now
}

// watchLiveness judges the obligations at now while the budget is
// active (after an event, at a tick).
func (l *Layer) watchLiveness(now time.Time) {
	if l.budget.active {
		l.judgeLiveness(now)
		l.settleLiveness(now)
	}
}

// budgetView is the view the budget judges on: the immediate check's
// (Controller.CheckView), which the gate decodes from the newest snapshot
// here, only when judged, if the check is off and did not.
func (l *Layer) budgetView() node.View {
	if !l.cfg.Immediate && l.last != nil && l.budgetDecoded != l.last {
		l.budgetDecoded = l.last
		if _, err := l.gate.Explore(context.Background(), l.last); err != nil {
			l.log.Error("steering: decoding the snapshot for the liveness budget", slog.Uint64("cut", l.last.CN), slog.Any("error", err))
		}
	}
	return l.gate.CheckView()
}

// resetLiveness forgets the obligations and the lift: the node restarted,
// and a new process has intervened in nothing yet.
func (l *Layer) resetLiveness() {
	b := &l.budget
	for i := range b.props {
		b.props[i] = budgetProp{p: b.props[i].p}
	}
	b.active, b.lifted, b.last, b.seen, b.charge = false, false, time.Time{}, time.Time{}, time.Time{}
	l.budgetDecoded = nil
	l.mu.Lock()
	l.st.Lift = nil
	l.mu.Unlock()
}

// settleLiveness stops the judging once nothing is charged, no lift lasts
// and the last intervention is more than the longest bound before now.
func (l *Layer) settleLiveness(now time.Time) {
	b := &l.budget
	if b.lifted || now.Sub(b.charge) <= b.window {
		return
	}
	if !b.anyCharged() {
		b.active = false
	}
}

// anyCharged reports whether an obligation is charged.
func (b *livenessBudget) anyCharged() bool {
	for i := range b.props {
		if b.props[i].charged {
			return true
		}
	}
	return false
}

// anyLifting reports whether an obligation still holds the lift.
func (b *livenessBudget) anyLifting() bool {
	for i := range b.props {
		if b.props[i].lifting {
			return true
		}
	}
	return false
}
