package steering

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Critical is what a round's liveness search (MaceMC's random walks and
// critical transition, from the snapshot's global state) found about a
// suspected liveness violation: the verdict, where the path became dead
// and the nearest live path.
type Critical struct {
	// Verdict is consequence.C1 when the critical transition was found:
	// some walk from the state before Path[Step] reaches a live state (one
	// where every liveness property holds), none of K walks from
	// the state after it does — the path has entered a dead end. It is
	// consequence.C2 when walks from the end of the suspect walk still
	// reach a live state: the walk was too short to tell (raise
	// LivenessWalks.DMax).
	Verdict consequence.Verdict
	// Step is the index in the prediction's Path of the critical
	// transition (C1; the Path ends with it); -1 for C2.
	Step int
	// LivePath is the nearest live path (C1): the prediction's first Step
	// actions, then the walk that reached a live state from there. The
	// difference between Path[Step] and LivePath[Step], and the states
	// they lead to, is where to look for the bug (MaceMC's Mdb diff).
	LivePath []consequence.ActorAction
	// LiveReport is LivePath in serializable form.
	LiveReport []consequence.ActionRecord
	// Failing are the liveness properties that failed at the end of the
	// suspect walk, with their errors, in property order.
	Failing []consequence.PropertyError
	// Walks counts the walks the round took from the snapshot, Live those
	// that reached a live state; Probes the states the critical-transition
	// search probed.
	Walks, Live, Probes int
}

// LivenessOutcome is what a round's liveness search did (RoundReport).
type LivenessOutcome struct {
	// Walks and Live count the round's walks from the snapshot and those
	// that reached a live state; Steps counts every step of the search
	// (walks, probes, path minimization and filter checks).
	Walks, Live int
	Steps       uint64
	// Suspects counts the walks that never reached a live state, whose
	// critical transition the round searched; Undecided those judged C2
	// (walks from the walk's end still reach a live state: slow
	// convergence, or a walk too short to tell), which are not
	// predictions.
	Suspects, Undecided int
	// FaultDeadEnds counts suspects judged C1 whose critical transition
	// is a fault the explorer injected (a reset, a break, a lost
	// datagram): not predictions. In a neighbourhood snapshot such a dead
	// end mostly means that recovering needs nodes outside it (a reset
	// node rejoins through a bootstrap the snapshot does not hold), and a
	// fault is the environment's doing, not an event steering could keep
	// from a handler; a protocol's own dead end hinges on a handler (MaceMC's
	// RandTree bug on a JoinReply's delivery).
	FaultDeadEnds int
	// Open counts suspects judged C1 whose dead end may wait on nodes
	// outside the snapshot (a node involved in it has a peer outside, or
	// sends to one: closed.go): not predictions, since the model cannot
	// know what those nodes will do.
	Open int
	// DeadAtStart lists the liveness properties no walk from the
	// snapshot's own state satisfies: the neighbourhood is already in a
	// dead end, or cannot leave it without nodes outside the snapshot.
	// Nothing to predict or steer away from.
	DeadAtStart []string
	// BudgetSpent is set when Config.MaxWalkSteps ran out before the
	// search ended (what it found until then stands).
	BudgetSpent bool
	// Err is why the search stopped early other than the budget or the
	// round's context: a model or property panic (consequence.ErrModelPanic)
	// on a walk. The round's other results stand.
	Err error
}

// livenessSearch is one round's liveness search.
type livenessSearch struct {
	c *Controller
	// m is the walks' model: the round's, with silent resets detectable
	// (consequence.Faults.StaleConnections); safety is the round's model,
	// for the safety check of a filter.
	m      *consequence.ActorModel
	safety *consequence.ActorModel
	budget *walkBudget
	props  []consequence.Property[*consequence.GlobalState]
	opts   consequence.WalkOptions[consequence.ActorAction]
	out    *LivenessOutcome
	// safetyStates counts the states of the filters' safety checks.
	safetyStates uint64
	// peers are the peers the snapshot's checkpoints recorded, per member
	// (closed.go).
	peers map[node.ID][]node.ID
	// vetoes, when set, are kinds the walks hold as the immediate check
	// does (vetoModel): the liveness guard's veto holds.
	vetoes filterSet
}

// predictLiveness runs the round's random walks from m's start against the
// liveness properties and, on a suspect, the search for its critical
// transition; it adds the prediction to rep. In mode Steer it checks the
// filter that keeps this node from taking the path into the dead end and
// returns installed with it added if the check passes. safety are the
// round's safety properties, for the filter's safety check.
func (c *Controller) predictLiveness(ctx context.Context, m *consequence.ActorModel, safety []consequence.Property[*consequence.GlobalState], steer bool, installed filterSet, rep *RoundReport) (filterSet, error) {
	ls := c.newLivenessSearch(ctx, m)
	defer ls.budget.cancel()
	ls.peers = recordedPeers(rep.Snapshot)
	rep.Liveness = ls.out
	defer ls.chargeRound(rep)
	p, err := ls.guardedPredict()
	if err != nil || p == nil {
		return installed, ls.settle(ctx, err)
	}
	c.recordDeadEnd(m, p, rep)
	if !steer || !deadEndFilterWanted(p, installed) {
		return installed, nil
	}
	return ls.installIfChecked(ctx, safety, installed, *p.Filter, rep)
}

// chargeRound adds the search's steps to its outcome, the round's states
// and the controller's counters (when the search is over).
func (ls *livenessSearch) chargeRound(rep *RoundReport) {
	c := ls.c
	ls.out.Steps = ls.budget.steps
	rep.States += ls.budget.steps + ls.safetyStates
	c.stats.Walks += uint64(ls.out.Walks)
	c.stats.WalkSteps += ls.budget.steps
}

// recordDeadEnd counts the dead end p predicted on m, watches it for
// confirmation and adds it to rep.
func (c *Controller) recordDeadEnd(m *consequence.ActorModel, p *Prediction, rep *RoundReport) {
	c.stats.Predicted[p.Property]++
	c.stats.DeadEnds++
	c.watchDeadEnd(p.Property, m.Start(), rep.Snapshot.At)
	rep.Predictions = append(rep.Predictions, *p)
}

// deadEndFilterWanted reports whether dead end p's filter is one to
// check: it has one, not already installed, and its verdict is C1.
func deadEndFilterWanted(p *Prediction, installed filterSet) bool {
	return p.Filter != nil && !installed.has(*p.Filter) && p.Critical.Verdict == consequence.C1
}

// installIfChecked checks the filter f of a dead end (checkFilter) and
// returns installed with f added if it passed; a filter that did not
// counts as unhelpful.
func (ls *livenessSearch) installIfChecked(ctx context.Context, safety []consequence.Property[*consequence.GlobalState], installed filterSet, f Filter, rep *RoundReport) (filterSet, error) {
	c := ls.c
	ok, err := ls.checkFilter(ctx, safety, installed, f)
	if err != nil {
		return installed, ls.settle(ctx, err)
	}
	if !ok {
		rep.Unhelpful++
		c.stats.FiltersUnhelpful++
		return installed, nil
	}
	c.stats.FiltersInstalled++
	return append(installed, f), nil
}

// newLivenessSearch prepares a liveness search on the round's model m:
// walks on m with silent resets made detectable, within the round's
// budget of walk steps. The caller cancels its budget when done.
func (c *Controller) newLivenessSearch(ctx context.Context, m *consequence.ActorModel) *livenessSearch {
	walkFaults := c.roundFaults()
	walkFaults.StaleConnections = true
	ls := &livenessSearch{c: c, m: m.WithFaults(walkFaults), safety: m, budget: newWalkBudget(ctx, c.cfg.MaxWalkSteps, c.cfg.MaxTime), out: &LivenessOutcome{}}
	for _, p := range c.live {
		ls.props = append(ls.props, consequence.AdaptProperty(p))
	}
	ls.opts = consequence.WalkOptions[consequence.ActorAction]{
		Seed: c.walkSeed(m.Start().Fingerprint()), Walks: c.cfg.Walks, DMax: c.cfg.DMax, K: c.cfg.K,
		Weight: c.walkWeight,
	}
	return ls
}

// settle sorts out why the search stopped: the budget or a panic end it
// with the round carrying on (recorded in the outcome); the round's own
// context or anything else is the round's error.
func (ls *livenessSearch) settle(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return nil // the round was cancelled: its caller knows
	case ls.budget.ctx.Err() != nil:
		ls.out.BudgetSpent = true // steps or wall time
		return nil
	case errors.Is(err, consequence.ErrModelPanic), errors.Is(err, consequence.ErrInvalidModel):
		ls.out.Err = err
		return nil
	}
	return fmt.Errorf("steering: liveness search at %v: %w", ls.c.self, err)
}

// guardedPredict is predict with a panic of a liveness property or a
// handler outside the walks (which recover their own) turned into an
// error wrapping consequence.ErrModelPanic: the round carries on.
func (ls *livenessSearch) guardedPredict() (p *Prediction, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("steering: liveness search at %v: %w: %v", ls.c.self, consequence.ErrModelPanic, r)
		}
	}()
	return ls.predict()
}

// predict walks from the start and judges each suspect by its critical
// transition, as consequence.FindLivenessViolation does but with the
// walks' warm-up (LivenessWalks.DInit) and the round's budgets. It returns
// the prediction of the first suspect judged C1, nil when none was. A
// property no walk from the start satisfies is recorded in
// out.DeadAtStart and the search goes on without it, so that a property a
// partial neighbourhood can never satisfy does not mask the others.
func (ls *livenessSearch) predict() (*Prediction, error) {
	bm := ls.budget.model(ls.m)
	// Properties no walk from the snapshot satisfies go first, each for
	// the price of K walks: judging them through suspects would
	// take a full search for a critical transition per round.
	props, err := ls.satisfiable(ls.props)
	if err != nil {
		return nil, err
	}
	for attempt := 0; len(props) > 0 && ls.walksLeft(); attempt++ {
		if p, done, err := ls.judgeAttempt(bm, props, attempt); done {
			return p, err
		}
	}
	return nil, nil
}

// walksLeft reports whether the search may take more walks: suspects
// and walks both below their bounds.
func (ls *livenessSearch) walksLeft() bool {
	return ls.out.Suspects < ls.c.cfg.MaxSuspects && ls.out.Walks < ls.c.cfg.Walks
}

// judgeAttempt walks from the start until a suspect and judges it. done
// is set when the search is over: a prediction, an error, no suspect, or
// a start dead for the properties together; otherwise the next attempt
// walks on.
func (ls *livenessSearch) judgeAttempt(bm *budgetModel, props []consequence.Property[*consequence.GlobalState], attempt int) (p *Prediction, done bool, err error) {
	res, err := ls.suspectWalks(bm, props, attempt)
	if err != nil || res.Suspect == nil {
		return nil, true, err
	}
	ls.out.Suspects++
	fault, err := ls.deadAtFault(props, res.Suspect.Path)
	if err != nil {
		return nil, true, err
	}
	if fault {
		ls.out.FaultDeadEnds++
		return nil, false, nil
	}
	return ls.judgeSuspect(bm, props, res.Suspect)
}

// suspectWalks takes the remaining walks of attempt from the start,
// with the warm-up, until the first suspect, and counts them.
func (ls *livenessSearch) suspectWalks(bm *budgetModel, props []consequence.Property[*consequence.GlobalState], attempt int) (*consequence.WalkResult[*consequence.GlobalState, consequence.ActorAction], error) {
	walk := ls.opts
	walk.Walks = ls.c.cfg.Walks - ls.out.Walks
	walk.DInit = ls.c.cfg.DInit
	// A suspect stops RandomWalks: the walks after it draw from
	// other streams.
	walk.Seed = ls.opts.Seed + uint64(attempt)*0x9e3779b97f4a7c15
	res, err := consequence.RandomWalks(ls.budget.ctx, bm, props, walk)
	if res != nil {
		ls.out.Walks += res.Walks
		ls.out.Live += res.Live
	}
	return res, err
}

// judgeSuspect searches the suspect's critical transition and judges
// it: undecided (C2, the search goes on), a dead end (its prediction,
// unless it is left out), or a start dead for the properties together.
func (ls *livenessSearch) judgeSuspect(bm *budgetModel, props []consequence.Property[*consequence.GlobalState], suspect *consequence.Walk[*consequence.GlobalState, consequence.ActorAction]) (p *Prediction, done bool, err error) {
	// Probes count any live state, as MaceMC's Recovers does: the
	// warm-up is for the walks that look for a dead end.
	crit, err := consequence.FindCriticalTransition(ls.budget.ctx, bm, props, ls.m.Start(), suspect.Path, ls.opts)
	switch {
	case err != nil:
		return nil, true, err
	case crit.Verdict == consequence.C2:
		ls.out.Undecided++
		return nil, false, nil
	case crit.Step >= 0:
		p, err := ls.dead(props, suspect, crit)
		return p, err != nil || p != nil, err
	}
	// Each property is satisfiable from the start (satisfiable kept only
	// those) but no walk satisfies them together: the start is dead for
	// their conjunction, nothing ahead of it.
	return nil, true, nil
}

// deadAtFault reports whether the first fault the suspect path injects is
// its critical transition: the state before it recovers, the state after
// it does not. Two probes answer that where a full search for the critical
// transition would take a dozen, and such a dead end is not a prediction
// (LivenessOutcome.FaultDeadEnds).
func (ls *livenessSearch) deadAtFault(props []consequence.Property[*consequence.GlobalState], path consequence.Path[consequence.ActorAction]) (bool, error) {
	f := slices.IndexFunc(path, func(a consequence.Action[consequence.ActorAction]) bool { return isFault(a.Act) })
	if f < 0 {
		return false, nil
	}
	bm := ls.budget.model(ls.m)
	before, after, ok := ls.aroundStep(path, f)
	if !ok {
		return false, nil
	}
	// after must be dead (C1), before live (C2).
	v, err := ls.verdictFrom(bm, props, after)
	if err != nil || v != consequence.C1 {
		return false, err
	}
	v, err = ls.verdictFrom(bm, props, before)
	return err == nil && v != consequence.C1, err
}

// aroundStep replays path up to its step f and returns the states before
// and after it; ok is false when a step is not enabled.
func (ls *livenessSearch) aroundStep(path consequence.Path[consequence.ActorAction], f int) (before, after *consequence.GlobalState, ok bool) {
	g := ls.m.Start()
	for _, a := range path[:f] {
		if g, _ = ls.m.Next(g, a.Act); g == nil {
			return nil, nil, false
		}
	}
	after, ok = ls.m.Next(g, path[f].Act)
	return g, after, ok
}

// verdictFrom is the verdict of a probe from s for props: C1 when no
// walk from s reaches a live state.
func (ls *livenessSearch) verdictFrom(bm *budgetModel, props []consequence.Property[*consequence.GlobalState], s *consequence.GlobalState) (consequence.Verdict, error) {
	crit, err := consequence.FindCriticalTransition(ls.budget.ctx, bm, props, s, nil, ls.opts)
	if err != nil {
		return 0, err
	}
	return crit.Verdict, nil
}

// satisfiable returns the properties of props that some walk from the
// start satisfies (a probe: K walks, any live state counting),
// and records the others in out.DeadAtStart.
func (ls *livenessSearch) satisfiable(props []consequence.Property[*consequence.GlobalState]) ([]consequence.Property[*consequence.GlobalState], error) {
	bm := ls.budget.model(ls.m)
	var keep []consequence.Property[*consequence.GlobalState]
	for _, p := range props {
		if p.Check(ls.m.Start()) == nil {
			keep = append(keep, p) // holds already
			continue
		}
		crit, err := consequence.FindCriticalTransition(ls.budget.ctx, bm, []consequence.Property[*consequence.GlobalState]{p}, ls.m.Start(), nil, ls.opts)
		if err != nil {
			return nil, err
		}
		if crit.Verdict == consequence.C2 {
			keep = append(keep, p)
			continue
		}
		ls.out.DeadAtStart = append(ls.out.DeadAtStart, p.Name)
	}
	return keep, nil
}

// dead turns a suspect judged C1 into a prediction: the path cut at its
// critical transition and minimized, with the nearest live path.
func (ls *livenessSearch) dead(props []consequence.Property[*consequence.GlobalState], suspect *consequence.Walk[*consequence.GlobalState, consequence.ActorAction], crit *consequence.Critical[*consequence.GlobalState, consequence.ActorAction]) (*Prediction, error) {
	ls.props = props
	cr := &Critical{Verdict: crit.Verdict, Failing: suspect.Failing, Walks: ls.out.Walks, Live: ls.out.Live, Probes: crit.Probes}
	path, live, step, err := ls.minimize(suspect.Path[:crit.Step+1], crit.LivePath)
	if err != nil {
		return nil, err
	}
	cr.Step, cr.LivePath = step, live
	acts := actionsOf(path)
	if isFault(acts[step]) {
		ls.out.FaultDeadEnds++
		return nil, nil
	}
	g, fail := ls.failingAt(acts, suspect.Failing)
	closed, err := ls.closed(g, fail.Err)
	if err != nil || !closed {
		ls.out.Open += btoi(err == nil)
		return nil, err
	}
	return ls.c.livenessPrediction(ls.m, fail.Property, fail.Err, acts, cr)
}

// isFault reports whether a is a fault the explorer injects (a reset, a
// broken connection, a lost datagram, a refused send, a lasting fault)
// rather than a handler's event.
func isFault(a consequence.ActorAction) bool { return a.Kind.IsFault() }

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// failingAt replays path and returns the dead end it reaches and the first
// property of failing (those the suspect walk ended with) that fails
// there, else the first liveness property that does, with its error
// there.
func (ls *livenessSearch) failingAt(path []consequence.ActorAction, failing []consequence.PropertyError) (*consequence.GlobalState, consequence.PropertyError) {
	g := ls.replayWhileEnabled(path)
	for _, f := range failing {
		if fail, ok := namedFailing(ls.props, f.Property, g); ok {
			return g, fail
		}
	}
	// The walk's last failures may have come later; the dead end itself
	// fails another property (the conjunction never holds again).
	if fail, ok := firstFailingProperty(ls.props, g); ok {
		return g, fail
	}
	if len(failing) == 0 {
		return g, consequence.PropertyError{}
	}
	return g, failing[0]
}

// replayWhileEnabled replays path from the start up to its first step
// that is not enabled and returns the state reached.
func (ls *livenessSearch) replayWhileEnabled(path []consequence.ActorAction) *consequence.GlobalState {
	g := ls.m.Start()
	for _, a := range path {
		next, ok := ls.m.Next(g, a)
		if !ok {
			break
		}
		g = next
	}
	return g
}

// namedFailing returns the first property of props named name that
// fails in g, with its error; ok is false when none does.
func namedFailing(props []consequence.Property[*consequence.GlobalState], name string, g *consequence.GlobalState) (consequence.PropertyError, bool) {
	for _, p := range props {
		if p.Name != name {
			continue
		}
		if err := p.Check(g); err != nil {
			return consequence.PropertyError{Property: p.Name, Err: err}, true
		}
	}
	return consequence.PropertyError{}, false
}

// actionsOf strips a path of its labels.
func actionsOf(p consequence.Path[consequence.ActorAction]) []consequence.ActorAction {
	out := make([]consequence.ActorAction, len(p))
	for i, a := range p {
		out[i] = a.Act
	}
	return out
}

// livenessPrediction packages a dead path (ending with its critical
// transition for C1) with its reports and the filter that would keep this
// node out of the dead end.
func (c *Controller) livenessPrediction(m *consequence.ActorModel, prop string, verr error, path []consequence.ActorAction, cr *Critical) (*Prediction, error) {
	p, err := c.prediction(m, prop, verr, path)
	if err != nil {
		return nil, err
	}
	p.Kind = node.Liveness
	p.Report.Kind = node.Liveness.String()
	p.Critical = cr
	p.Filter = nil
	if err := c.recordLivePath(m, cr); err != nil {
		return nil, err
	}
	if cr.Verdict == consequence.C1 {
		p.Filter = filterBefore(c.self, path, cr.Step, c.filterBreaks)
	}
	return &p, nil
}

// recordLivePath appends cr's live path, in serializable form, to its
// LiveReport.
func (c *Controller) recordLivePath(m *consequence.ActorModel, cr *Critical) error {
	for _, a := range cr.LivePath {
		rec, err := m.Record(a)
		if err != nil {
			return fmt.Errorf("steering: recording a live path at %v: %w", c.self, err)
		}
		cr.LiveReport = append(cr.LiveReport, rec)
	}
	return nil
}

// walkSeed is the seed of a round's walks: the configured seed mixed with
// the node and the start state's fingerprint, so a round is a pure
// function of the controller's configuration and its snapshot.
func (c *Controller) walkSeed(fp node.Hash) uint64 {
	// Mixed, so that nearby seeds give unrelated streams.
	return node.Mix64(c.cfg.Seed ^ fp.Hi ^ (fp.Lo * node.Golden64) ^ uint64(c.self)<<32)
}

// walkWeight biases the round's walks as MaceMC §4.3 does
// (LivenessWalks.Weight, else WalkWeights or the node's rates): by default faults are rare and timers fire less
// often than messages arrive, so a walk explores interleavings of messages
// rather than crash after crash or a timer storm.
func (c *Controller) walkWeight(a consequence.Action[consequence.ActorAction]) float64 {
	if c.cfg.Weight != nil {
		return c.cfg.Weight(a)
	}
	ws := c.cfg.WalkWeights
	if c.rateWeights != nil {
		ws = c.rateWeights
	}
	if w, ok := ws[a.Act.Kind]; ok {
		return w
	}
	return 1
}
