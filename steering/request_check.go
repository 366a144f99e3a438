package steering

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// RequestAnswer is what an owner's round decided on a request
// (RoundReport.Answers): the Answer sent back to From.
type RequestAnswer struct {
	From   node.ID
	Answer Answer
	// Filter is the filter asked for; Property the requester's prediction.
	Filter   Filter
	Property string
}

// answerRequests decides, in a round on snapshot model m at time at, on the
// requests the layer admitted (see request.go): each accepted filter joins
// installed, and every decision joins rep.Answers.
func (c *Controller) answerRequests(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed filterSet, reqs []pendingRequest, at time.Time, rep *RoundReport) (filterSet, error) {
	for i, pr := range reqs {
		if ctx.Err() != nil {
			// The round was cancelled: the next one decides.
			c.pending = append(c.pending, reqs[i:]...)
			return installed, nil
		}
		ok, why, err := c.judgeRequest(ctx, m, props, installed, pr, at, rep)
		if err != nil {
			return installed, err
		}
		ans := RequestAnswer{From: pr.from, Filter: pr.req.Filter, Property: pr.req.Property, Answer: Answer{ID: pr.req.ID, Accepted: ok, Reason: why}}
		rep.Answers = append(rep.Answers, ans)
		if !ok {
			c.stats.RequestsRefusedAfterCheck++
			continue
		}
		c.stats.RequestsAccepted++
		if !installed.has(pr.req.Filter) {
			installed = append(installed, pr.req.Filter)
		}
	}
	return installed, nil
}

// judgeRequest replays a request's path on m and checks its filter. It
// returns whether the filter is accepted, or why not. An accepted path is
// remembered with its filter, so later rounds keep the filter while the
// path still replays to a violation, as they keep their own.
func (c *Controller) judgeRequest(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed filterSet, pr pendingRequest, at time.Time, rep *RoundReport) (bool, string, error) {
	if at.After(pr.expires) {
		return false, RefusedExpired, nil
	}
	pred, why := c.replayRequest(m, props, pr)
	if why != "" {
		return false, why, nil
	}
	f := pr.req.Filter
	if why, err := c.checkRequestedFilter(ctx, m, props, installed, f, rep); why != "" {
		return false, why, err
	}
	pred.Requested, pred.Filter = pr.from, &f
	c.remember(pred)
	c.markChecked([]Prediction{{Property: pred.Property, Report: pred.Report, Filter: &f}}, filterSet{f})
	rep.Predictions = append(rep.Predictions, pred)
	return true, "", nil
}

// replayRequest replays a request's path on m against its property and
// returns the prediction, or why the request is refused: the path does
// not decode, the property is not checked here, the path reaches no
// violation, or the filter stops none of its events.
func (c *Controller) replayRequest(m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], pr pendingRequest) (Prediction, string) {
	path, err := decodePath(m, pr.req.Path)
	if err != nil {
		return Prediction{}, fmt.Sprintf("%s: %v", RefusedMalformed, err)
	}
	check := propertiesNamed(props, pr.req.Property)
	if len(check) == 0 {
		return Prediction{}, fmt.Sprintf("%s: %s is not a property I check, or it already fails", RefusedNoReplay, pr.req.Property)
	}
	pred, ok := c.replay(m, check, storedPath{property: pr.req.Property, path: path})
	if !ok {
		return Prediction{}, RefusedNoReplay
	}
	f := pr.req.Filter
	if !slices.ContainsFunc(pred.Path, func(a consequence.ActorAction) bool { return stops(f, a) }) {
		return Prediction{}, RefusedNoStop
	}
	return pred, ""
}

// propertiesNamed returns the properties of props named name.
func propertiesNamed(props []consequence.Property[*consequence.GlobalState], name string) []consequence.Property[*consequence.GlobalState] {
	var out []consequence.Property[*consequence.GlobalState]
	for _, p := range props {
		if p.Name == name {
			out = append(out, p)
		}
	}
	return out
}

// checkRequestedFilter checks a requested filter f as the node checks
// its own: the safety check of filters with installed in place, then the
// liveness guard (liveWith). It returns why f is refused ("" if it
// passed), with the error that stopped a check.
func (c *Controller) checkRequestedFilter(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], installed filterSet, f Filter, rep *RoundReport) (string, error) {
	good, _, states, err := c.checkFilters(ctx, m, props, installed, filterSet{f})
	rep.States += states
	if err != nil || !good.has(f) {
		return RefusedUnhelpful, err
	}
	if live, err := c.liveWith(ctx, m, append(slices.Clone(installed), f), rep); err != nil || !live {
		return RefusedLiveness, err
	}
	return "", nil
}

// stops reports whether filter f stops action a.
func stops(f Filter, a consequence.ActorAction) bool {
	ev, ok := actionEvent(a)
	return ok && !f.Verdict(a.Node, ev, time.Nanosecond).Handle
}

// liveWith is the liveness guard of a filter a node did not derive
// itself: with the filters fs (the last one the requested) in place, at
// least Config.LiveFraction of Config.Walks walks from m's start reach a
// state where every liveness property holds — unless they fail as often
// without the requested filter: then it is not what keeps the
// neighbourhood from progress (a partial neighbourhood often cannot
// reach a live state at all). Its walks take only what is under way, as
// the guard of holds does (guardWeight): another node's request must not
// cost the owner progress it could only hope a client or a crash brings.
// With no liveness property, or walks off, it holds.
func (c *Controller) liveWith(ctx context.Context, m *consequence.ActorModel, fs filterSet, rep *RoundReport) (bool, error) {
	if !c.walksLiveness() {
		return true, nil
	}
	ls := c.newLivenessSearch(ctx, m)
	defer ls.budget.cancel()
	ls.opts.Weight = c.guardWeight // what is under way, as the guard of holds judges
	ok, steps, err := ls.liveFraction(fs)
	if err == nil && !ok {
		var without bool
		without, steps, err = ls.liveFraction(fs[:len(fs)-1])
		ok = !without
	}
	rep.States += steps
	return ok, err
}
