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
	var safety, live []node.Property
	for _, p := range c.Properties {
		switch p.Kind {
		case node.Safety, node.Bounded, node.HistoryKind:
			// A bounded property is a safety property of the timed
			// system, a history property one of the path's history: the
			// rounds search, predict and steer them alike (the immediate
			// check judges only the safety kind, on a view).
			safety = append(safety, p)
		case node.Liveness:
			live = append(live, p)
		}
	}
	c.Properties = safety
	watch, err := NewLivenessWatch(c.ConfirmGrace)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return &Controller{cfg: c, live: live, self: self, stats: Stats{RoundStats: RoundStats{Predicted: map[string]uint64{}}}, watch: watch}, nil
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
	snap, rep.LastKnown = c.withLastKnown(snap)
	rep.Snapshot = snap
	for _, n := range snap.Nodes {
		rep.Members = append(rep.Members, n.Node)
	}
	view, err := snap.Decode(c.cfg.Spec.New)
	if err != nil {
		return rep, fmt.Errorf("steering: round at %v: %w", c.self, err)
	}
	c.view = view // the immediate safety check's view, in every mode
	c.viewCNs = c.viewCNs[:0]
	for _, n := range snap.Nodes {
		c.viewCNs = append(c.viewCNs, nodeCN{id: n.Node, cn: n.CN})
	}
	if c.cfg.Mode == Off {
		return rep, nil
	}
	c.stats.Rounds++
	m, err := c.model(snap)
	if err != nil {
		return rep, err
	}
	props := make([]consequence.Property[*consequence.GlobalState], 0, len(c.cfg.Properties))
	for _, p := range c.cfg.Properties {
		ap := consequence.AdaptProperty(p)
		if ap.Check(m.Start()) != nil {
			rep.Present = append(rep.Present, p.Name)
			continue // already violated: nothing to steer away from
		}
		props = append(props, ap)
	}
	c.observeDeadEnds(m.Start(), snap.At)
	reqs := c.pending
	c.pending = nil
	walks := len(c.live) > 0 && c.cfg.Walks > 0
	if len(props) == 0 && !walks {
		return rep, c.answerPending(ctx, m, props, reqs, snap.At, rep)
	}
	steer := c.cfg.Mode == Steer
	fp := m.Start().Fingerprint()
	holds := c.holds
	c.holds = heldKinds{}
	if c.reuse(fp, rep) {
		if err := c.guardHolds(ctx, m, rep.Installed, holds, rep); err != nil {
			return rep, err
		}
		return rep, c.answerPending(ctx, m, props, reqs, snap.At, rep)
	}
	installed, err := c.predict(ctx, snap, m, props, steer, walks, rep)
	if err != nil {
		return rep, err
	}
	if err := c.guardHolds(ctx, m, installed, holds, rep); err != nil {
		return rep, err
	}
	c.stats.StatesExplored += rep.States
	rep.Installed = slices.Clone(installed)
	if ctx.Err() == nil {
		c.memo = &roundMemo{fp: fp, present: rep.Present, predictions: rep.Predictions, installed: rep.Installed}
	}
	return rep, c.answerPending(ctx, m, props, reqs, snap.At, rep)
}

// predict is a round's exploration proper: safety (with the steering
// requests of mode Steer and the environment search), then liveness. It
// returns the round's own filters.
func (c *Controller) predict(ctx context.Context, snap *snapshot.Snapshot, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], steer, walks bool, rep *RoundReport) (filterSet, error) {
	var installed filterSet
	var err error
	if len(props) > 0 {
		if installed, err = c.predictSafety(ctx, m, props, steer, rep); err != nil {
			return installed, err
		}
		if steer && !c.cfg.Requests.Off {
			if err := c.requestRemote(ctx, m, props, installed, snap.CN, rep); err != nil {
				return installed, err
			}
		}
		if err := c.searchArrivals(ctx, snap, props, rep); err != nil {
			return installed, err
		}
	}
	if walks {
		if installed, err = c.predictLiveness(ctx, m, props, steer, installed, rep); err != nil {
			return installed, err
		}
	}
	return installed, nil
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
	found, states, err := c.search(ctx, m, props)
	rep.States += states
	if err != nil {
		return installed, err
	}
	walked, steps, err := c.safetyWalks(ctx, m, props, found)
	rep.States += steps
	if err != nil {
		return installed, err
	}
	found = append(found, walked...)
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
		if f == nil || p.Arrivals > 0 || p.Requested != node.None || asked.has(*f) {
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

// checkRemote is the check of a filter at another node: explored with
// this node's filters and f in place, no violation remains that this
// node or another member could stop.
func (c *Controller) checkRemote(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed filterSet, f Filter) (bool, uint64, error) {
	all := append(slices.Clone(installed), f)
	found, states, err := c.search(ctx, m.WithIntercept(all.intercept), props)
	if err != nil {
		return false, states, err
	}
	for _, p := range found {
		if p.Filter != nil || p.Remote != nil {
			return false, states, nil
		}
	}
	return true, states, nil
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
		sp := c.paths[i]
		pred, ok := c.replay(m, props, sp)
		if !ok {
			continue
		}
		c.stats.ReplayHits++
		rep.Predictions = append(rep.Predictions, pred)
		if sp.restored && pred.Filter != nil {
			// read back after a restart: checked as new, with the
			// liveness guard (keepLive), on the world the node returns to
			c.paths[i].restored = false
			restored = append(restored, *pred.Filter)
		}
		if f := pred.Filter; steer && f != nil && !installed.has(*f) && sp.checked != nil && *sp.checked == *f {
			installed = append(installed, *f)
			c.stats.FiltersInstalled++
		}
	}
	return installed, restored
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
	if c.lastKnown == nil {
		c.lastKnown = map[node.ID]knownCheckpoint{}
	}
	for _, n := range snap.Nodes {
		c.lastKnown[n.Node] = knownCheckpoint{cp: n, at: snap.At}
	}
	var added []node.ID
	var out *snapshot.Snapshot
	for _, id := range snap.Dead {
		k, ok := c.lastKnown[id]
		if !ok || id == c.self || snap.At.Sub(k.at) > c.cfg.LastKnownFor {
			continue
		}
		if out == nil {
			cp := *snap
			cp.Nodes = slices.Clone(snap.Nodes)
			out = &cp
		}
		out.Nodes = append(out.Nodes, k.cp)
		added = append(added, id)
	}
	if out == nil {
		return snap, nil
	}
	slices.SortFunc(out.Nodes, func(a, b snapshot.NodeCheckpoint) int { return cmp.Compare(a.Node, b.Node) })
	out.Dead = slices.DeleteFunc(slices.Clone(snap.Dead), func(id node.ID) bool { return slices.Contains(added, id) })
	return out, added
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
	states += n
	seen := make(map[string]bool, len(found))
	for _, p := range found {
		seen[predictionKey(p)] = true
	}
	for _, p := range near {
		if !seen[predictionKey(p)] {
			found = append(found, p)
		}
	}
	return found, states, err
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
	var out []Prediction
	seen := map[string]bool{}
	for _, v := range res.Violations {
		if v.Depth == 0 {
			continue
		}
		path := make([]consequence.ActorAction, len(v.Path))
		for i, a := range v.Path {
			path[i] = a.Act
		}
		p, err := c.predictionOf(m, props, v.Start, path, consequence.PropertyError{Property: v.Property, Err: v.Err})
		if err != nil {
			return nil, res.Unique, err
		}
		key := predictionKey(p)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, p)
	}
	return out, res.Unique, nil
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
func predictionKey(p Prediction) string {
	key := p.Property
	for _, r := range p.Report.Path {
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
	for _, a := range path {
		rec, err := m.Record(a)
		if err != nil {
			return p, fmt.Errorf("steering: recording a path at %v: %w", c.self, err)
		}
		p.Report.Path = append(p.Report.Path, rec)
	}
	for _, a := range path {
		if f, ok := filterFor(c.self, a, c.filterBreaks); ok {
			p.Filter = &f
			break
		}
	}
	p.Remote = remoteFilter(c.self, path, c.filterBreaks)
	return p, nil
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
	var states uint64
	clean := func(fs filterSet) (bool, []Prediction, error) {
		all := append(slices.Clone(base), fs...)
		found, n, err := c.search(ctx, m.WithIntercept(all.intercept), props)
		states += n
		if err != nil {
			return false, nil, err
		}
		for _, p := range found {
			if p.Filter != nil {
				return false, found, nil
			}
		}
		return true, found, nil
	}
	set := slices.Clone(candidates)
	for round := 0; ; round++ {
		ok, found, err := clean(set)
		if err != nil {
			return nil, 0, states, err
		}
		if ok {
			return set, 0, states, nil
		}
		if round >= c.cfg.Refinements {
			break
		}
		grown := false
		for _, p := range found {
			if p.Filter != nil && !set.has(*p.Filter) && !base.has(*p.Filter) {
				set = append(set, *p.Filter)
				grown = true
			}
		}
		if !grown {
			break
		}
	}
	var installed filterSet
	unhelpful := 0
	for _, f := range candidates {
		ok, _, err := clean(filterSet{f})
		if err != nil {
			return nil, 0, states, err
		}
		if ok {
			installed = append(installed, f)
		} else {
			unhelpful++
		}
	}
	return installed, unhelpful, states, nil
}

// markChecked records, on the stored paths of preds, the filters among ok
// (those that passed their check this round).
func (c *Controller) markChecked(preds []Prediction, ok filterSet) {
	for _, p := range preds {
		if p.Filter == nil || !ok.has(*p.Filter) {
			continue
		}
		key := predictionKey(p)
		for i := range c.paths {
			if c.paths[i].key == key {
				f := *p.Filter
				c.paths[i].checked = &f
				c.pathsVersion++
			}
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
