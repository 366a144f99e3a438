package steering

import (
	"context"
	"errors"
	"slices"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// minimize drops the events of a dead path (ending with its critical
// transition) that the dead end does not need — the timers and
// deliveries a random walk took on the way — so the prediction names the
// events that matter and equal scenarios compare equal. An event goes when
// the path without it still replays and its last step is still the
// critical transition (the state before it recovers, the state after it
// does not). It stops early, keeping what it has, when the step budget runs
// out. live is the nearest live path of the path given; the result's is
// that of the path returned.
func (ls *livenessSearch) minimize(path, live consequence.Path[consequence.ActorAction]) (consequence.Path[consequence.ActorAction], []consequence.ActorAction, int, error) {
	bm := ls.budget.model(ls.m)
	for j := len(path) - 2; j >= 0; j-- {
		cand := slices.Delete(slices.Clone(path), j, j+1)
		crit, err := consequence.FindCriticalTransition(ls.budget.ctx, bm, ls.props, ls.m.Start(), cand, ls.opts)
		switch {
		case errors.Is(err, consequence.ErrReplay):
			continue // the event enables a later one
		case err != nil && ls.budget.ctx.Err() != nil:
			return path, actionsOf(live), len(path) - 1, nil
		case err != nil:
			return nil, nil, 0, err
		}
		if crit.Verdict == consequence.C1 && crit.Step == len(cand)-1 {
			path, live = cand, crit.LivePath
		}
	}
	return path, actionsOf(live), len(path) - 1, nil
}

// checkFilter is the check of a filter against a dead end: with the
// installed filters and f in place, at least Config.LiveFraction of
// Config.Walks walks from the snapshot must reach a live state, and the
// safety check of filters (checkFilters) must pass f. It reports whether
// f passed.
func (ls *livenessSearch) checkFilter(ctx context.Context, safety []consequence.Property[*consequence.GlobalState], installed filterSet, f Filter) (bool, error) {
	all := append(slices.Clone(installed), f)
	if ok, err := ls.walksLive(all); err != nil || !ok {
		return false, err
	}
	if len(safety) == 0 {
		return true, nil
	}
	ok, _, states, err := ls.c.checkFilters(ctx, ls.safety, safety, installed, filterSet{f})
	ls.safetyStates += states
	if err != nil {
		return false, err
	}
	return ok.has(f), nil
}

// walksLive reports whether, with the filters fs in place, at least
// Config.LiveFraction of Config.Walks walks from the snapshot reach a
// state where every liveness property holds.
func (ls *livenessSearch) walksLive(fs filterSet) (bool, error) {
	bm := ls.budget.model(ls.m.WithIntercept(fs.intercept))
	if len(ls.vetoes) > 0 {
		bm.veto = ls.vetoModel(fs)
	}
	opts := ls.opts
	opts.Walks = 1
	live, walks := 0, ls.c.cfg.Walks
	for w := 0; w < walks; w++ {
		// One walk per call: RandomWalks stops at a suspect, and the check
		// counts them all.
		opts.Seed = ls.opts.Seed ^ (uint64(w)+1)*0x9e3779b97f4a7c15
		res, err := consequence.RandomWalks(ls.budget.ctx, bm, ls.props, opts)
		if err != nil {
			return false, err
		}
		live += res.Live
		if float64(live+walks-w-1) < ls.c.cfg.LiveFraction*float64(walks) {
			return false, nil // cannot reach the fraction any more
		}
	}
	return true, nil
}

// liveFraction is walksLive for a filter set on its own, with the steps
// it took; a budget spent is not a verdict against fs (nothing judged).
func (ls *livenessSearch) liveFraction(fs filterSet) (bool, uint64, error) {
	ok, err := ls.walksLive(fs)
	if err != nil && ls.budget.ctx.Err() != nil && ls.budget.steps > ls.budget.limit {
		return true, ls.budget.steps, nil
	}
	return ok, ls.budget.steps, err
}

// guardHolds is the liveness guard of the escalation rule (gate.go): with
// the round's filters and the kinds the gate holds in place (heldKinds),
// the walks must reach live states as often as Config.LiveFraction asks,
// unless they fail as often without the holds (then the holds are not
// what keeps the neighbourhood from progress). "Without the holds" leaves
// out the round's own filters of a held kind too: a kind is held because
// round after round installs its filter, so comparing against a set that
// still stops it would find the holds harmless exactly when they starve
// the neighbourhood (a Paxos proposer's retry, reinstalled by every
// round, would keep two of three learners from learning for ever). It
// records the holds in rep.Starving when they starve it.
func (c *Controller) guardHolds(ctx context.Context, m *consequence.ActorModel, installed filterSet, holds heldKinds, rep *RoundReport) error {
	all := holds.all()
	if len(all) == 0 || !c.walksLiveness() || c.cfg.Mode == Off {
		return nil
	}
	ls := c.newLivenessSearch(ctx, m)
	defer ls.budget.cancel()
	defer func() { rep.States += ls.budget.steps }()
	ls.opts.Weight = c.guardWeight
	ls.vetoes = holds.vetoes
	with, err := ls.walksLive(append(slices.Clone(installed), holds.filters...))
	ls.vetoes = nil
	if err != nil || with {
		return ls.settle(ctx, err)
	}
	without, err := ls.walksLive(installed.without(all))
	if err != nil || !without {
		return ls.settle(ctx, err)
	}
	rep.Starving = all
	return nil
}

// guardWeight is walkWeight for the liveness guard's walks, which ask
// whether the neighbourhood progresses with the holds in place on what
// it has: the events already under way (timers, messages in flight,
// pending and restart calls). A call the service merely declares it could
// receive (node.AppCaller) and a fault (a reset, a break, a lost
// datagram) are what might happen, not what will: a walk that reaches a
// live state through one shows a way out the deployment does not owe the
// node. Counting them, the guard finds harmless a hold that starves Paxos's
// learners: its walks escape the held retry through a
// Propose no client ever sends, or through a reset of the proposer.
func (c *Controller) guardWeight(a consequence.Action[consequence.ActorAction]) float64 {
	if a.Fault || (a.Act.Kind == consequence.ActApp && !a.Act.Pending) {
		return 0
	}
	return c.walkWeight(a)
}

// without returns the filters of fs that stop no kind a filter of held
// stops at the same node.
func (fs filterSet) without(held filterSet) filterSet {
	var out filterSet
	for _, f := range fs {
		if !slices.ContainsFunc(held, func(h Filter) bool { return h.Node == f.Node && keyOfFilter(h) == keyOfFilter(f) }) {
			out = append(out, f)
		}
	}
	return out
}

// keepLive returns the filters of cands, filters of a round that passed
// their safety check with base in force, that the liveness guard lets in
// — judging only those among restored, the filters of paths read back
// from a durable record (the rest pass as they are). Those were checked
// against the world of the incarnation that stored them; on the world
// the node returns to, the walks with them in place must reach live
// states as often as Config.LiveFraction asks, unless they fail as often
// without them. When the set fails, each is judged alone, in order,
// beside the others let in. The walks take only what is under way
// (guardWeight), as the guards of holds and of requested filters do. A
// safety check alone lets restarted RandTree nodes drop, round after
// round, the keepalive whose answer repairs a stale child. The guard
// does not judge a round's fresh filters: on the zoo's lock servers it
// would refuse the filters that stop a second grant, the waiting
// client's progress being all the walks can see. Refusals count in
// Stats.StarvingFilters and RoundReport.Starved.
func (c *Controller) keepLive(ctx context.Context, m *consequence.ActorModel, base, cands, restored filterSet, rep *RoundReport) (filterSet, error) {
	judged, passed := splitRestored(cands, restored)
	if len(judged) == 0 || !c.walksLiveness() {
		return cands, nil
	}
	base = append(slices.Clone(base), passed...)
	ls := c.newLivenessSearch(ctx, m)
	defer ls.budget.cancel()
	defer func() { rep.States += ls.budget.steps }()
	ls.opts.Weight = c.guardWeight
	starving, err := ls.setStarves(base, judged)
	if err != nil || !starving {
		return cands, ls.settle(ctx, err)
	}
	return ls.keepLiveEach(ctx, base, passed, judged, rep)
}

// splitRestored splits cands, in order, into those among restored (to
// judge) and the others (passed as they are).
func splitRestored(cands, restored filterSet) (judged, passed filterSet) {
	for _, f := range cands {
		if restored.has(f) {
			judged = append(judged, f)
		} else {
			passed = append(passed, f)
		}
	}
	return judged, passed
}

// setStarves reports whether the filters judged, beside base, keep the
// walks from live states as often as Config.LiveFraction asks while the
// walks reach them often enough with base alone.
func (ls *livenessSearch) setStarves(base, judged filterSet) (bool, error) {
	with, _, err := ls.liveFraction(append(slices.Clone(base), judged...))
	if err != nil || with {
		return false, err
	}
	without, _, err := ls.liveFraction(base)
	if err != nil || !without {
		return false, err
	}
	return true, nil
}

// keepLiveEach judges each filter of judged alone, in order, beside base
// and those let in before it, and returns passed with those that keep
// the walks live enough; the others count as starving. On an error the
// filters not yet judged are let in.
func (ls *livenessSearch) keepLiveEach(ctx context.Context, base, passed, judged filterSet, rep *RoundReport) (filterSet, error) {
	var kept filterSet
	for i, f := range judged {
		fs := append(append(slices.Clone(base), kept...), f)
		ok, _, err := ls.liveFraction(fs)
		if err != nil {
			return append(append(passed, kept...), judged[i:]...), ls.settle(ctx, err)
		}
		if ok {
			kept = append(kept, f)
			continue
		}
		ls.c.stats.StarvingFilters++
		rep.Starved = append(rep.Starved, f)
	}
	return append(passed, kept...), nil
}
