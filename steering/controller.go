package steering

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// Prediction is a violation a round predicted (or a replayed path that
// still fails): the property, its error, the path from the snapshot's state
// and the filter that would stop it at this node, if it can. A safety
// prediction's path ends in a state that violates the property; a liveness
// prediction's (Kind node.Liveness) ends with its critical transition, in a
// dead end from which the property never holds again (Critical).
type Prediction struct {
	Property string
	Err      error
	// Kind is node.Safety or node.Liveness.
	Kind node.PropertyKind
	Path []consequence.ActorAction
	// Critical is the liveness search's finding (Kind node.Liveness only).
	Critical *Critical
	// Report is the path in the serializable form consequence reports use.
	Report consequence.ActorReport
	// Filter stops the path at this node (nil if no event of the path
	// happens at this node in a form a filter can stop).
	Filter *Filter
	// Replayed marks a path of an earlier round that still fails.
	Replayed bool
	// Likelihood is what the path asks of the network from the snapshot
	// on, and Rank its place among the safety predictions of its search
	// by likelihood (1: the likeliest; see Likelihood; the environment
	// search's predictions are ranked among themselves). Steering checks and
	// installs the filters of likelier paths first. Liveness predictions
	// are not ranked (Rank 0).
	Likelihood Likelihood
	Rank       int
	// Arrivals is the bound of arrivals the model of the path held
	// (SnapshotOptions.Arrivals): zero for the snapshot's members alone,
	// Config.Arrivals for a prediction of the environment search.
	Arrivals int
	// Remote is the filter at another member of the snapshot that stops
	// the path's earliest event a filter can stop, when that event is not
	// this node's (nil otherwise): what a steering request asks its owner
	// for (request.go).
	Remote *Filter
	// Requested is the node whose steering request this path came from
	// (node.None for the node's own predictions).
	Requested node.ID
	// Faults are the faults of the model the path was found in (the
	// round's: Config.Faults with the lasting faults its node observed,
	// RoundFaults), so that a report rebuilds that model.
	Faults consequence.Faults
}

// RoundReport is what one round did.
type RoundReport struct {
	// Snapshot identifies the snapshot the round started from.
	Gatherer node.ID
	CN       uint64
	Members  []node.ID
	// LastKnown are the members the gather marked dead that entered the
	// round at their last known checkpoint (Config.LastKnownFor); they are
	// in Members too.
	LastKnown []node.ID
	// Snapshot is the snapshot the round explored from — the gathered one,
	// or a copy with the LastKnown members added — whose model every
	// prediction's path replays on (cmd/crystalball writes it into its
	// prediction reports). Read-only.
	Snapshot *snapshot.Snapshot
	// States is the number of unique states explored by every search of
	// the round (replays, prediction, filter checks): the emulator charges
	// the round's virtual time from it.
	States uint64
	// Predictions are the violations found, replayed paths first.
	Predictions []Prediction
	// Installed are the filters of the round: the replayed paths' and the
	// new ones that passed their check. Reinstalled are the replayed
	// paths' alone, which need no check and go in at once.
	Installed   []Filter
	Reinstalled []Filter
	// Unhelpful counts filters whose check still found a violation and
	// were not installed; Starved are filters of restored paths that
	// passed that check but kept the liveness walks from live states they
	// reach without them (keepLive), not installed either.
	Unhelpful int
	Starved   []Filter
	// Present lists the properties the snapshot's own state already
	// violates (nothing to steer away from).
	Present []string
	// Liveness is what the round's liveness search did (nil when it ran
	// none: no liveness property, Config.Walks negative, or a reused
	// round). Its prediction, if any, is in Predictions.
	Liveness *LivenessOutcome
	// Requests are the steering requests the round sends (mode Steer):
	// for predictions whose earliest event a filter can stop is another
	// member's, the filter at that member (Prediction.Remote) that passed
	// this node's check. Answers are the round's decisions on the
	// requests other nodes sent this one (request.go).
	Requests []Request
	Answers  []RequestAnswer
	// Starving are the kinds the node's gate held (escalations, as
	// filters) when the round's liveness walks found that they keep the
	// neighbourhood from a live state the walks reach without them: the
	// layer releases every hold when it applies the round (the liveness
	// guard, gate.go).
	Starving []Filter
	// Reused is set when the snapshot's global state (node states,
	// timers, pending calls, messages in flight, connections) was that of
	// the last completed round: the round took that round's predictions
	// and filters without exploring (States is 0), and its filters, all
	// checked before, are in Reinstalled.
	Reused bool
}

// Controller is the execution-steering controller of one node: it
// explores from the node's gathered snapshots, keeps the error paths it
// found, installs event filters and runs the immediate safety check. It is
// a deterministic core: no goroutines of its own (a search may use
// Config.Workers), no clock unless Config.MaxTime is set; the caller owns
// when rounds run. Not safe for concurrent use.
type Controller struct {
	cfg Config
	// live are the liveness properties of cfg.Properties, which keeps the
	// safety ones.
	live    []node.Property
	self    node.ID
	filters filterSet
	paths   []storedPath
	view    *snapshot.View
	stats   Stats
	// recent holds, per kind of event, the times it was kept from the
	// handler within the intervention window (oldest first).
	recent map[eventKey][]time.Time
	// escalated holds the event kinds whose budget ran out while a filter
	// or the check still stopped them (gate.go).
	escalated map[eventKey]*escalation
	// lastKnown holds each member's checkpoint from the latest snapshot
	// that included it (Config.LastKnownFor).
	lastKnown map[node.ID]knownCheckpoint
	// memo is the last completed round's outcome.
	memo *roundMemo
	// known is the immediate check's merged view (immediate.go); sighted
	// when the last snapshot that held another node completed;
	// viewVersion counts the changes of either (durable.go).
	known       *knownView
	sighted     time.Time
	viewVersion uint64
	// viewCNs are the checkpoint numbers of view's nodes (Explore), heard
	// the highest checkpoint number of a service message received from
	// each peer (Heard): a node of the check's view whose checkpoint is
	// older than a message it has since sent this node is stale
	// (immediate_hop.go).
	viewCNs []nodeCN
	heard   map[node.ID]uint64
	// firstWord is the sender of the message Heard recorded last when
	// nothing had been heard from it before (None otherwise): the gate's
	// look-ahead judges that message (risky).
	firstWord node.ID
	// rateWeights are the walk weights of the node's observed rates
	// (AdaptiveWeights; rates_layer.go), nil before its layer handed them.
	rateWeights map[consequence.ActorActionKind]float64
	// lasting are the lasting faults the node's layer observed, which
	// decide the ones a round explores (lasting.go, roundFaults).
	lasting LastingRates
	// watch follows this node's dead ends until its snapshots settle them
	// (confirm.go).
	watch *LivenessWatch
	// pending are the steering requests for the next round (setRequests).
	pending []pendingRequest
	// holds are the kinds the layer's gate holds, for the next round's
	// liveness guard (setHolds).
	holds heldKinds
	// guarded is set on a gate controller whose layer's rounds guard its
	// holds (setGuarded).
	guarded bool
	// version counts changes of the filters in force and the escalations,
	// pathsVersion those of the stored paths, pathsExported the version
	// exportPaths saw last (a layer's durable state: durable.go).
	version, pathsVersion, pathsExported uint64
}

// knownCheckpoint is a member's checkpoint and when its snapshot completed.
type knownCheckpoint struct {
	cp snapshot.NodeCheckpoint
	at time.Time
}

type storedPath struct {
	property string
	path     []consequence.ActorAction
	// recs is the path as records when it was read back from a durable
	// record (path nil until a round's model decodes it: replay).
	recs []consequence.ActionRecord
	key  string
	// checked is the filter of the path that passed its check (the
	// paper's "checking safety of event filters") in some round; nil if
	// none did. Only that filter is reinstalled without a new check when
	// the path replays.
	checked *Filter
	// restored: read back from a durable record and not replayed since;
	// the round that next replays it judges its filter as new, with the
	// liveness guard (keepLive). That round clears it whatever the
	// verdict: a later round judges the filter as its own.
	restored bool
}

// New returns the controller of node self.
func New(cfg Config, self node.ID) (*Controller, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if self == node.None {
		return nil, fmt.Errorf("%w: no node ID", ErrInvalidConfig)
	}
	var live []node.Property
	c.Properties, live = splitRoundProperties(c.Properties)
	watch, err := NewLivenessWatch(c.ConfirmGrace)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Controller{cfg: c, live: live, self: self, stats: Stats{RoundStats: RoundStats{Predicted: map[string]uint64{}}}, watch: watch}, nil
}

// splitRoundProperties splits props into those the rounds search as
// safety properties and the liveness ones their walks check. A bounded
// property is a safety property of the timed system, a history property
// one of the path's history: the rounds search, predict and steer them
// alike (the immediate check judges only the safety kind, on a view).
func splitRoundProperties(props []node.Property) (safety, live []node.Property) {
	for _, p := range props {
		switch p.Kind {
		case node.Safety, node.Bounded, node.HistoryKind:
			safety = append(safety, p)
		case node.Liveness:
			live = append(live, p)
		}
	}
	return safety, live
}

// Mode returns the controller's mode.
func (c *Controller) Mode() Mode { return c.cfg.Mode }

// Filters returns the filters in force. The slice is the controller's:
// read it before the next call.
func (c *Controller) Filters() []Filter { return c.filters }

// Stats returns the counters of the controller's rounds and gate (its
// LayerStats are zero); the maps are copies.
func (c *Controller) Stats() Stats {
	s := c.stats.clone()
	s.DeadEndsConfirmed, s.DeadEndsRetracted, _ = c.watch.Counts()
	return s
}

// View returns the decoded neighbourhood of the last round's snapshot (nil
// before the first round): the view the immediate safety check evaluates
// properties on.
func (c *Controller) View() node.View {
	if c.view == nil {
		return nil
	}
	return c.view
}

// Properties returns the safety properties the controller protects. The
// slice is the controller's: do not modify it.
func (c *Controller) Properties() []node.Property { return c.cfg.Properties }

// LivenessProperties returns the liveness properties the rounds' walks
// check. The slice is the controller's: do not modify it.
func (c *Controller) LivenessProperties() []node.Property { return c.live }

// Intercept returns what the installed filters do to ev arriving at this
// node (a verdict that handles it if none matches) and counts a hit. It
// does not charge the intervention budget: Gate is what shells call.
func (c *Controller) Intercept(ev node.Event) layer.Verdict {
	v, i := c.filters.verdict(c.self, ev, c.cfg.PostponeDelay)
	if i >= 0 {
		c.stats.FilterHits++
	}
	return v
}

// immediateCheck is the package's check with the controller's
// properties, CheckView and Config.ImmediateHop.
func (c *Controller) immediateCheck(core *node.Core, ev node.Event) (*Veto, error) {
	var hop *hopRule
	if c.cfg.ImmediateHop {
		hop = &hopRule{stale: c.staleInView}
	}
	return immediateCheck(core, ev, c.CheckView(), c.cfg.Properties, hop, c.staleInView)
}

// ImmediateCheck runs the immediate safety check (the package function
// ImmediateCheck, ImmediateCheckHop with Config.ImmediateHop) for ev on core with the controller's properties and
// CheckView, and counts it. It works in every mode: the caller
// decides whether the check is on (the paper's "immediate safety check
// only" configuration is mode Off with the check on).
func (c *Controller) ImmediateCheck(core *node.Core, ev node.Event) (*Veto, error) {
	c.stats.ImmediateChecks++
	v, err := c.immediateCheck(core, ev)
	if v != nil {
		c.stats.Vetoes++
	}
	return v, err
}

// Round runs one round on a gathered snapshot and installs its filters at
// once: Explore followed by Install(rep.Installed), for a caller that owns
// the controller outright (a test, an offline check). A node's Layer
// calls the two halves at different times, with its install policy.
func (c *Controller) Round(ctx context.Context, snap *snapshot.Snapshot) (*RoundReport, error) {
	c.filters = nil
	rep, err := c.Explore(ctx, snap)
	if rep != nil {
		c.Install(rep.Installed)
	}
	return rep, err
}

// Install replaces the filters in force with fs (copied).
func (c *Controller) Install(fs []Filter) {
	if !slices.Equal(fs, c.filters) {
		c.version++
	}
	c.filters = slices.Clone(fs)
}

// Explore runs one round on a gathered snapshot without touching the
// filters in force: it replays the stored error paths (the filter of each
// that still fails goes into rep.Reinstalled, to be installed at once),
// explores with consequence prediction, and in mode Steer checks the
// filters the new violations suggest by exploring again with them in place,
// keeping them only if that finds no violation. rep.Installed is the whole
// filter set of the round, which replaces the last round's (filters never
// outlive the next round). The result is a pure function of the
// controller's state and the snapshot unless Config.MaxTime is set. ctx
// cancels the searches.
func (c *Controller) Explore(ctx context.Context, snap *snapshot.Snapshot) (*RoundReport, error) {
	rep := &RoundReport{Gatherer: snap.Gatherer, CN: snap.CN}
	if err := c.takeRoundView(snap, rep); err != nil {
		return rep, err
	}
	if c.cfg.Mode == Off {
		return rep, nil
	}
	c.stats.Rounds++
	snap = rep.Snapshot
	m, err := c.model(snap)
	if err != nil {
		return rep, err
	}
	props := c.steerableProperties(m.Start(), rep)
	c.observeDeadEnds(m.Start(), snap.At)
	reqs := c.pending
	c.pending = nil
	if err := c.exploreRound(ctx, snap, m, props, rep); err != nil {
		return rep, err
	}
	return rep, c.answerPending(ctx, m, props, reqs, snap.At, rep)
}

// takeRoundView starts rep from snap: the dead members with a recent
// checkpoint added (withLastKnown, rep.Snapshot), its members, and the
// snapshot decoded into the immediate safety check's view, in every
// mode.
func (c *Controller) takeRoundView(snap *snapshot.Snapshot, rep *RoundReport) error {
	snap, rep.LastKnown = c.withLastKnown(snap)
	rep.Snapshot = snap
	for _, n := range snap.Nodes {
		rep.Members = append(rep.Members, n.Node)
	}
	view, err := snap.Decode(c.cfg.Spec.New)
	if err != nil {
		return fmt.Errorf("steering: round at %v: %w", c.self, err)
	}
	c.view = view
	c.viewCNs = c.viewCNs[:0]
	for _, n := range snap.Nodes {
		c.viewCNs = append(c.viewCNs, nodeCN{id: n.Node, cn: n.CN})
	}
	return nil
}

// steerableProperties returns the round's safety properties that hold in
// start, adapted to the explorer; those already violated go to
// rep.Present (nothing to steer away from).
func (c *Controller) steerableProperties(start *consequence.GlobalState, rep *RoundReport) []consequence.Property[*consequence.GlobalState] {
	props := make([]consequence.Property[*consequence.GlobalState], 0, len(c.cfg.Properties))
	for _, p := range c.cfg.Properties {
		ap := consequence.AdaptProperty(p)
		if ap.Check(start) != nil {
			rep.Present = append(rep.Present, p.Name)
			continue
		}
		props = append(props, ap)
	}
	return props
}

// exploreRound is a round's searches on m, before the steering requests
// are answered: none when there is nothing to search, the last round's
// outcome when the global state is the same (reuse), else a fresh
// prediction; the gate's holds are guarded either way.
func (c *Controller) exploreRound(ctx context.Context, snap *snapshot.Snapshot, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], rep *RoundReport) error {
	walks := c.walksLiveness()
	if len(props) == 0 && !walks {
		return nil
	}
	fp := m.Start().Fingerprint()
	holds := c.holds
	c.holds = heldKinds{}
	if c.reuse(fp, rep) {
		return c.guardHolds(ctx, m, rep.Installed, holds, rep)
	}
	return c.exploreFresh(ctx, snap, m, props, walks, fp, holds, rep)
}

// exploreFresh predicts from m (predict), guards the gate's holds with
// the round's filters, and remembers the outcome for a later round on the
// same global state (fingerprint fp) unless ctx was cancelled.
func (c *Controller) exploreFresh(ctx context.Context, snap *snapshot.Snapshot, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], walks bool, fp node.Hash, holds heldKinds, rep *RoundReport) error {
	installed, err := c.predict(ctx, snap, m, props, c.cfg.Mode == Steer, walks, rep)
	if err != nil {
		return err
	}
	if err := c.guardHolds(ctx, m, installed, holds, rep); err != nil {
		return err
	}
	c.stats.StatesExplored += rep.States
	rep.Installed = slices.Clone(installed)
	if ctx.Err() == nil {
		c.memo = &roundMemo{fp: fp, present: rep.Present, predictions: rep.Predictions, installed: rep.Installed}
	}
	return nil
}

// predict is a round's exploration proper: safety (with the steering
// requests of mode Steer and the environment search), then liveness. It
// returns the round's own filters.
func (c *Controller) predict(ctx context.Context, snap *snapshot.Snapshot, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], steer, walks bool, rep *RoundReport) (filterSet, error) {
	var installed filterSet
	if len(props) > 0 {
		var err error
		if installed, err = c.predictSafetyRound(ctx, snap, m, props, steer, rep); err != nil {
			return installed, err
		}
	}
	if walks {
		return c.predictLiveness(ctx, m, props, steer, installed, rep)
	}
	return installed, nil
}

// predictSafetyRound is a round's safety part: the members' search
// (predictSafety), the steering requests of mode Steer (steer) and the
// environment search. It returns the round's filters so far.
func (c *Controller) predictSafetyRound(ctx context.Context, snap *snapshot.Snapshot, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], steer bool, rep *RoundReport) (filterSet, error) {
	installed, err := c.predictSafety(ctx, m, props, steer, rep)
	if err != nil {
		return installed, err
	}
	if steer && !c.cfg.Requests.Off {
		if err := c.requestRemote(ctx, m, props, installed, snap.CN, rep); err != nil {
			return installed, err
		}
	}
	return installed, c.searchArrivals(ctx, snap, props, rep)
}

// answerPending decides on the steering requests handed to the round
// (setRequests): accepted filters join rep.Installed (and rep.Reinstalled,
// which a cancelled round still installs: they are checked), every
// decision rep.Answers. The memo of the round does not include them: a
// later round reinstalls them by replaying their paths.
func (c *Controller) answerPending(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], reqs []pendingRequest, at time.Time, rep *RoundReport) error {
	if len(reqs) == 0 {
		return nil
	}
	before := len(rep.Installed)
	installed, err := c.answerRequests(ctx, m, props, slices.Clone(filterSet(rep.Installed)), reqs, at, rep)
	for _, f := range installed[before:] {
		rep.Installed = append(rep.Installed, f)
		rep.Reinstalled = append(rep.Reinstalled, f)
	}
	return err
}

// setHolds hands the controller the kinds its layer's gate holds, for the
// next Explore's liveness guard (the runner's side, before Explore).
func (c *Controller) setHolds(h heldKinds) { c.holds = h }

// setRequests hands the controller the steering requests its layer
// admitted, for its next Explore. The Layer calls it on the runner's side,
// before Explore.
func (c *Controller) setRequests(reqs []pendingRequest) { c.pending = append(c.pending, reqs...) }

// predictSafety replays the stored error paths, explores with consequence
// prediction and, in mode Steer (steer), checks the filters the new
// violations suggest; it adds what it found to rep and returns the
// round's filters so far.
func (c *Controller) predictSafety(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], steer bool, rep *RoundReport) (filterSet, error) {
	installed, restored := c.replayPaths(m, props, steer, rep)
	found, err := c.searchAndWalkSafety(ctx, m, props, rep)
	if err != nil {
		return installed, err
	}
	for _, p := range found {
		c.stats.Predicted[p.Property]++
		rep.Predictions = append(rep.Predictions, p)
		c.remember(p)
	}
	rank(m.Start(), rep.Predictions)
	candidates := byRank(rep.Predictions, installed)
	rep.Reinstalled = slices.Clone(installed)
	if !steer || len(candidates) == 0 {
		return installed, nil
	}
	return c.installPassingCandidates(ctx, m, props, installed, restored, candidates, rep)
}

// searchAndWalkSafety is a round's search for safety violations from m —
// consequence prediction, then the safety walks — with the states both
// explored added to rep.
func (c *Controller) searchAndWalkSafety(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], rep *RoundReport) ([]Prediction, error) {
	found, states, err := c.search(ctx, m, props)
	rep.States += states
	if err != nil {
		return nil, err
	}
	walked, steps, err := c.safetyWalks(ctx, m, props, found)
	rep.States += steps
	if err != nil {
		return nil, err
	}
	return append(found, walked...), nil
}

// installPassingCandidates checks the candidate filters of mode Steer
// (checkFilters, and keepLive for the restored paths' filters) and
// returns installed with those that passed; rep and the stats count them
// and the unhelpful ones, and their stored paths remember them as checked.
func (c *Controller) installPassingCandidates(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed, restored, candidates filterSet, rep *RoundReport) (filterSet, error) {
	ok, unhelpful, states, err := c.checkFilters(ctx, m, props, installed, candidates)
	rep.States += states
	if err != nil {
		return installed, err
	}
	if ok, err = c.keepLive(ctx, m, installed, ok, restored, rep); err != nil {
		return installed, err
	}
	installed = append(installed, ok...)
	c.stats.FiltersInstalled += uint64(len(ok))
	rep.Unhelpful = unhelpful
	c.stats.FiltersUnhelpful += uint64(unhelpful)
	c.markChecked(rep.Predictions, ok)
	return installed, nil
}

// requestRemote adds to rep.Requests, for the predictions whose earliest
// stoppable event is another member's, the filters at those members that
// pass this node's check (checkRemote), likeliest first, each once. cn is
// the snapshot's cut.
func (c *Controller) requestRemote(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed filterSet, cn uint64, rep *RoundReport) error {
	order := slices.Clone(rep.Predictions)
	slices.SortStableFunc(order, func(a, b Prediction) int { return cmp.Compare(a.Rank, b.Rank) })
	var asked filterSet
	for _, p := range order {
		f := p.Remote
		if !p.asksRemote() || asked.has(*f) {
			continue
		}
		asked = append(asked, *f)
		ok, states, err := c.checkRemote(ctx, m, props, installed, *f)
		rep.States += states
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		rep.Requests = append(rep.Requests, Request{Filter: *f, Property: p.Property, Error: p.Report.Error, Kind: p.Report.Kind,
			Path: slices.Clone(p.Report.Path), CN: cn, Rank: p.Rank})
		c.stats.RequestsProposed++
	}
	return nil
}

// asksRemote reports whether p is a prediction of this node's own members'
// search whose earliest stoppable event is another member's: one a
// steering request could stop.
func (p Prediction) asksRemote() bool {
	return p.Remote != nil && p.Arrivals == 0 && p.Requested == node.None
}

// checkRemote is the check of a filter at another node: explored with
// this node's filters and f in place, no violation remains that this
// node or another member could stop.
func (c *Controller) checkRemote(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed filterSet, f Filter) (bool, uint64, error) {
	all := append(slices.Clone(installed), f)
	found, states, err := c.search(ctx, m.WithIntercept(all.intercept), props)
	if err != nil {
		return false, states, err
	}
	stoppable := slices.ContainsFunc(found, func(p Prediction) bool { return p.Filter != nil || p.Remote != nil })
	return !stoppable, states, nil
}

// reuse answers a round from the last completed round's outcome when the
// global state (fingerprint fp) and the properties already violated are
// the same: its searches would find the same violations and pass the same
// filters. It reports whether it did.
func (c *Controller) reuse(fp node.Hash, rep *RoundReport) bool {
	memo := c.memo
	if memo == nil || memo.fp != fp || !slices.Equal(memo.present, rep.Present) {
		return false
	}
	c.stats.RoundsReused++
	rep.Reused = true
	rep.Predictions = slices.Clone(memo.predictions)
	for _, p := range memo.predictions {
		if !p.Replayed {
			c.stats.Predicted[p.Property]++
		}
	}
	rep.Installed = slices.Clone(memo.installed)
	rep.Reinstalled = slices.Clone(memo.installed)
	c.stats.FiltersInstalled += uint64(len(memo.installed))
	return true
}

// replayPaths replays the paths of earlier rounds on m and adds what they
// predict to rep. In mode Steer (steer), a path whose filter passed its
// check before gets it back at once (installed); any other filter it
// suggests is checked with the new round's (byRank).
func (c *Controller) replayPaths(m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], steer bool, rep *RoundReport) (installed, restored filterSet) {
	for i := range c.paths {
		checked := c.paths[i].checked
		f, wasRestored := c.replayStoredPath(i, m, props, rep)
		if f == nil {
			continue
		}
		if wasRestored {
			// read back after a restart: checked as new, with the
			// liveness guard (keepLive), on the world the node returns to
			restored = append(restored, *f)
		}
		if steer && checked != nil && *checked == *f && !installed.has(*f) {
			installed = append(installed, *f)
			c.stats.FiltersInstalled++
		}
	}
	return installed, restored
}

// replayStoredPath replays stored path i on m; if it still fails, its
// prediction goes to rep and it returns the filter the prediction
// suggests (nil: none, or the path no longer fails), and whether the path
// was read back from a durable record and not replayed since — which it
// no longer is once replayed with a filter.
func (c *Controller) replayStoredPath(i int, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], rep *RoundReport) (f *Filter, wasRestored bool) {
	pred, ok := c.replay(m, props, c.paths[i])
	if !ok {
		return nil, false
	}
	c.stats.ReplayHits++
	rep.Predictions = append(rep.Predictions, pred)
	if pred.Filter == nil {
		return nil, false
	}
	wasRestored = c.paths[i].restored
	c.paths[i].restored = false
	return pred.Filter, wasRestored
}

// roundMemo is the outcome of the last completed round, for a round that
// starts from the same global state (Stats.RoundsReused).
type roundMemo struct {
	fp          node.Hash
	present     []string
	predictions []Prediction
	installed   filterSet
}

// withLastKnown remembers the checkpoints of snap and, with
// Config.LastKnownFor, returns a copy of snap in which the dead members
// with a recent enough last known checkpoint are included, with their IDs
// (ascending). Without any, it returns snap itself.
func (c *Controller) withLastKnown(snap *snapshot.Snapshot) (*snapshot.Snapshot, []node.ID) {
	if c.cfg.LastKnownFor <= 0 {
		return snap, nil
	}
	c.recordLastKnown(snap)
	added, cps := c.recentlyKnownDead(snap)
	if len(added) == 0 {
		return snap, nil
	}
	out := *snap
	out.Nodes = append(slices.Clone(snap.Nodes), cps...)
	slices.SortFunc(out.Nodes, func(a, b snapshot.NodeCheckpoint) int { return cmp.Compare(a.Node, b.Node) })
	out.Dead = slices.DeleteFunc(slices.Clone(snap.Dead), func(id node.ID) bool { return slices.Contains(added, id) })
	return &out, added
}

// recordLastKnown remembers each member's checkpoint in snap, with the
// time snap completed (Config.LastKnownFor).
func (c *Controller) recordLastKnown(snap *snapshot.Snapshot) {
	if c.lastKnown == nil {
		c.lastKnown = map[node.ID]knownCheckpoint{}
	}
	for _, n := range snap.Nodes {
		c.lastKnown[n.Node] = knownCheckpoint{cp: n, at: snap.At}
	}
}

// recentlyKnownDead returns the members snap marks dead, this node left
// out, whose last known checkpoint is at most Config.LastKnownFor older
// than snap, in snap's order, with those checkpoints.
func (c *Controller) recentlyKnownDead(snap *snapshot.Snapshot) (ids []node.ID, cps []snapshot.NodeCheckpoint) {
	for _, id := range snap.Dead {
		k, ok := c.lastKnown[id]
		if ok && id != c.self && snap.At.Sub(k.at) <= c.cfg.LastKnownFor {
			ids = append(ids, id)
			cps = append(cps, k.cp)
		}
	}
	return ids, cps
}

// model builds the actor model of a snapshot.
func (c *Controller) model(snap *snapshot.Snapshot) (*consequence.ActorModel, error) {
	m, err := SnapshotModelWith(c.cfg.Spec, snap, SnapshotOptions{Workload: c.cfg.Workload, Faults: c.roundFaults(), TimerSkew: c.cfg.TimerSkew})
	if err != nil {
		return nil, fmt.Errorf("steering: round at %v: %w", c.self, err)
	}
	return m, nil
}

// search explores m with the round strategy — consequence prediction,
// then the near future (Config.FullDepth) — and returns the violations
// below the start state, each path once, with the filter each suggests,
// and the states both searches explored.
func (c *Controller) search(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState]) ([]Prediction, uint64, error) {
	found, states, err := c.searchOnce(ctx, m, props, 0, c.cfg.MaxStates)
	if err != nil || c.cfg.FullDepth < 0 || ctx.Err() != nil {
		return found, states, err
	}
	near, n, err := c.searchOnce(ctx, m, props, c.cfg.FullDepth, c.cfg.NearStates)
	return appendUnfound(found, near), states + n, err
}

// appendUnfound appends to found the predictions of more whose property
// and path found does not hold.
func appendUnfound(found, more []Prediction) []Prediction {
	seen := make(map[string]bool, len(found))
	for _, p := range found {
		seen[predictionKey(p)] = true
	}
	for _, p := range more {
		if !seen[predictionKey(p)] {
			found = append(found, p)
		}
	}
	return found
}

// searchOnce is one search of the round strategy: consequence prediction
// with full (Options.FullDepth) levels expanded completely, within
// maxStates unique states.
func (c *Controller) searchOnce(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], full, maxStates int) ([]Prediction, uint64, error) {
	res, err := consequence.NewChecker(m).
		Properties(props...).
		Strategy(consequence.Consequence).
		Workers(c.cfg.Workers).
		MaxStates(maxStates).
		MaxDepth(c.cfg.MaxDepth).
		FullDepth(full).
		MaxTime(c.cfg.MaxTime).
		MaxViolations(c.cfg.MaxViolations).
		Run(ctx)
	if res == nil {
		return nil, 0, fmt.Errorf("steering: exploring at %v: %w", c.self, err)
	}
	if err != nil && ctx.Err() == nil {
		return nil, res.Unique, fmt.Errorf("steering: exploring at %v: %w", c.self, err)
	}
	out, err := c.violationPredictions(m, props, res.Violations)
	return out, res.Unique, err
}

// violationPredictions turns the violations a search found below the
// start state into predictions (predictionOf), each property and path
// once, in the search's order.
func (c *Controller) violationPredictions(m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], vs []consequence.Violation[*consequence.GlobalState, consequence.ActorAction]) ([]Prediction, error) {
	var out []Prediction
	seen := map[string]bool{}
	for _, v := range vs {
		if v.Depth == 0 {
			continue
		}
		p, err := c.predictionOf(m, props, v.Start, violationActions(v), consequence.PropertyError{Property: v.Property, Err: v.Err})
		if err != nil {
			return nil, err
		}
		key := predictionKey(p)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out, nil
}

// violationActions is the path of v as the model's actions.
func violationActions(v consequence.Violation[*consequence.GlobalState, consequence.ActorAction]) []consequence.ActorAction {
	path := make([]consequence.ActorAction, len(v.Path))
	for i, a := range v.Path {
		path[i] = a.Act
	}
	return path
}

// predictionOf is the prediction of a violating path from start (viol is
// the violation at its end): cut at its first violating state, minimized,
// packaged with its report and filter.
func (c *Controller) predictionOf(m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], start *consequence.GlobalState, path []consequence.ActorAction, viol consequence.PropertyError) (Prediction, error) {
	// The search goes on from violating states, so a recorded path may
	// extend an earlier violation: cut it at the first violating state,
	// or a filter could be derived from an event after the damage.
	path, viol = firstViolation(m, props, start, path, viol)
	// A path may also carry events the violation does not need (a timer
	// that fired on the way): without them the filter comes from an event
	// that matters and equal scenarios compare equal.
	path, viol.Err = minimizePath(m, props, start, path, viol.Property, viol.Err)
	path, viol = firstViolation(m, props, start, path, viol)
	return c.prediction(m, viol.Property, viol.Err, path)
}

// firstViolation replays path from start and returns the shortest prefix
// that reaches a state violating one of props, with that property and its
// error (the whole path and viol, path's own violation, if no shorter
// prefix violates).
func firstViolation(m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], start *consequence.GlobalState, path []consequence.ActorAction, viol consequence.PropertyError) ([]consequence.ActorAction, consequence.PropertyError) {
	g := start
	for i, a := range path[:len(path)-1] {
		next, ok := m.Next(g, a)
		if !ok {
			break
		}
		g = next
		for _, p := range props {
			if err := p.Check(g); err != nil {
				return path[:i+1], consequence.PropertyError{Property: p.Name, Err: err}
			}
		}
	}
	return path, viol
}

// predictionKey identifies a prediction by property and path.
func predictionKey(p Prediction) string { return pathKey(p.Property, p.Report.Path) }

// pathKey identifies a path of records that violates property: the
// stored paths' key (storedPath.key) and predictions' (predictionKey).
func pathKey(property string, recs []consequence.ActionRecord) string {
	key := property
	for _, r := range recs {
		key += "|" + r.Text
	}
	return key
}

// prediction packages a violating path with its report and filter.
func (c *Controller) prediction(m *consequence.ActorModel, prop string, verr error, path []consequence.ActorAction) (Prediction, error) {
	p := Prediction{Property: prop, Err: verr, Path: path, Faults: m.Faults()}
	p.Report = consequence.ActorReport{Property: prop, Kind: node.Safety.String(), Depth: len(path)}
	if verr != nil {
		p.Report.Error = verr.Error()
	}
	var err error
	if p.Report.Path, err = recordActions(m, path); err != nil {
		return p, fmt.Errorf("steering: recording a path at %v: %w", c.self, err)
	}
	p.Filter = firstFilter(c.self, path, c.filterBreaks)
	p.Remote = remoteFilter(c.self, path, c.filterBreaks)
	return p, nil
}

// recordActions records path with m's registry: the records up to the
// first action that does not record, and that action's error.
func recordActions(m *consequence.ActorModel, path []consequence.ActorAction) ([]consequence.ActionRecord, error) {
	var recs []consequence.ActionRecord
	for _, a := range path {
		rec, err := m.Record(a)
		if err != nil {
			return recs, err
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// checkFilters explores with the candidate filters in place; if a violation
// this node could stop remains it extends the set with the filters that
// violation suggests, up to Config.Refinements times. If the set never
// comes out clean, each candidate is checked alone and only the clean ones
// are installed. It returns the filters to install and how many candidates
// were unhelpful. base are the filters already decided for the round.
//
// A violation whose path has no event this node can stop (no delivery of a
// message to it, none of its timers or calls) does not count against the
// filters: every event of such a path is unaffected by them, so the same
// path leads to the same violation without them. Holding filters to those
// would judge every filter unhelpful in a neighbourhood where another
// node can break a property alone (a Paxos acceptor that resets and forgets
// its promise).
func (c *Controller) checkFilters(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], base, candidates filterSet) (filterSet, int, uint64, error) {
	fc := &filterCheck{c: c, ctx: ctx, m: m, props: props, base: base}
	set, ok, err := fc.refine(candidates, c.cfg.Refinements)
	if err != nil {
		return nil, 0, fc.states, err
	}
	if ok {
		return set, 0, fc.states, nil
	}
	installed, unhelpful, err := fc.cleanAlone(candidates)
	return installed, unhelpful, fc.states, err
}

// filterCheck is one round's check of filters on top of the filters base
// already decided: its searches, and the states they explored.
type filterCheck struct {
	c      *Controller
	ctx    context.Context
	m      *consequence.ActorModel
	props  []consequence.Property[*consequence.GlobalState]
	base   filterSet
	states uint64
}

// clean explores with base and fs in place, and reports whether no
// violation this node could stop remains, with the violations found.
func (fc *filterCheck) clean(fs filterSet) (bool, []Prediction, error) {
	all := append(slices.Clone(fc.base), fs...)
	found, n, err := fc.c.search(fc.ctx, fc.m.WithIntercept(all.intercept), fc.props)
	fc.states += n
	if err != nil {
		return false, nil, err
	}
	stoppable := slices.ContainsFunc(found, func(p Prediction) bool { return p.Filter != nil })
	return !stoppable, found, nil
}

// refine checks the candidates as a set, extending the set with the
// filters its remaining violations suggest up to refinements times, and
// returns the set and whether it came out clean.
func (fc *filterCheck) refine(candidates filterSet, refinements int) (filterSet, bool, error) {
	set := slices.Clone(candidates)
	for round := 0; ; round++ {
		ok, found, err := fc.clean(set)
		if err != nil || ok {
			return set, ok, err
		}
		if round >= refinements {
			return set, false, nil
		}
		var grown bool
		if set, grown = withSuggested(set, fc.base, found); !grown {
			return set, false, nil
		}
	}
}

// withSuggested adds to set the filters the violations found suggest that
// neither set nor base holds, and reports whether it added any.
func withSuggested(set, base filterSet, found []Prediction) (filterSet, bool) {
	n := len(set)
	for _, p := range found {
		if p.Filter != nil && !set.has(*p.Filter) && !base.has(*p.Filter) {
			set = append(set, *p.Filter)
		}
	}
	return set, len(set) > n
}

// cleanAlone checks each candidate alone and returns the clean ones and
// how many were not (unhelpful).
func (fc *filterCheck) cleanAlone(candidates filterSet) (filterSet, int, error) {
	var installed filterSet
	unhelpful := 0
	for _, f := range candidates {
		ok, _, err := fc.clean(filterSet{f})
		if err != nil {
			return nil, 0, err
		}
		if ok {
			installed = append(installed, f)
		} else {
			unhelpful++
		}
	}
	return installed, unhelpful, nil
}

// markChecked records, on the stored paths of preds, the filters among ok
// (those that passed their check this round).
func (c *Controller) markChecked(preds []Prediction, ok filterSet) {
	for _, p := range preds {
		if p.Filter != nil && ok.has(*p.Filter) {
			c.markPathChecked(predictionKey(p), *p.Filter)
		}
	}
}

// markPathChecked records f as the checked filter of the stored paths
// with key.
func (c *Controller) markPathChecked(key string, f Filter) {
	for i := range c.paths {
		if c.paths[i].key == key {
			g := f
			c.paths[i].checked = &g
			c.pathsVersion++
		}
	}
}

// remember stores a new error path for replay in later rounds.
func (c *Controller) remember(p Prediction) {
	key := predictionKey(p)
	for _, sp := range c.paths {
		if sp.key == key {
			return
		}
	}
	if len(c.paths) >= c.cfg.MaxPaths {
		c.paths = c.paths[1:]
	}
	c.paths = append(c.paths, storedPath{property: p.Property, path: p.Path, key: key})
	c.pathsVersion++
}
