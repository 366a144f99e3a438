package steering

import (
	"context"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// safetyWalks takes the round's safety walks (Config.SafetyWalks) from
// m's start and returns the predictions of the violations they reached
// that found (the consequence search's) does not already hold, each path
// minimized as the search's are, with the steps the walks took.
//
// Half the walks draw actions by the liveness walks' weights, half with
// every kind weighing 1 — the swarm idea at its smallest: one weighting
// buries a race whose events it makes rare (the default weights make
// timers rare, and a timer race needs a timer to fire twice before the
// replies arrive), two differently biased halves cover each other's blind
// spots. Both draw from seeds that are functions of the node and the
// snapshot, so a round stays a pure function of its snapshot. The walks
// have their own step budget of Config.MaxWalkSteps; when it runs out,
// what they found stands.
func (c *Controller) safetyWalks(ctx context.Context, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], found []Prediction) ([]Prediction, uint64, error) {
	if c.cfg.SafetyWalks <= 0 || len(props) == 0 || ctx.Err() != nil {
		return nil, 0, nil
	}
	budget := newWalkBudget(ctx, c.cfg.MaxWalkSteps, c.cfg.MaxTime)
	defer budget.cancel()
	bm := budget.model(m)
	seen := predictionKeys(found)
	seed := c.walkSeed(m.Start().Fingerprint()) ^ 0x5afe_7a1c_5afe_7a1c
	first := (c.cfg.SafetyWalks + 1) / 2
	var out []Prediction
	defer func() {
		c.stats.SafetyWalkSteps += budget.steps
		c.stats.SafetyWalkPredictions += uint64(len(out))
	}()
	for i, batch := range []struct {
		walks  int
		weight func(consequence.Action[consequence.ActorAction]) float64
	}{{first, c.walkWeight}, {c.cfg.SafetyWalks - first, nil}} {
		if batch.walks == 0 {
			continue
		}
		opts := consequence.WalkOptions[consequence.ActorAction]{Seed: seed + uint64(i)*0x9e3779b97f4a7c15, Walks: batch.walks, DMax: c.cfg.SafetyWalkDepth, Weight: batch.weight}
		preds, stop, err := c.safetyWalkBatch(budget, bm, m, props, opts, seen)
		out = append(out, preds...)
		if stop {
			return out, budget.steps, err
		}
	}
	return out, budget.steps, nil
}

// predictionKeys returns the set of the keys of preds (predictionKey).
func predictionKeys(preds []Prediction) map[string]bool {
	seen := make(map[string]bool, len(preds))
	for _, p := range preds {
		seen[predictionKey(p)] = true
	}
	return seen
}

// safetyWalkBatch takes one batch of safety walks with opts and returns
// the predictions of the violations they reached that seen does not
// hold. stop is set when the walks are over: the budget spent or the
// round cancelled (err nil), a prediction that cannot be reported, or a
// handler or property panic (a round error, as the search's own).
func (c *Controller) safetyWalkBatch(budget *walkBudget, bm *budgetModel, m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], opts consequence.WalkOptions[consequence.ActorAction], seen map[string]bool) (preds []Prediction, stop bool, err error) {
	res, err := consequence.SafetyWalks(budget.ctx, bm, props, opts, max(c.cfg.MaxViolations, 1))
	if res != nil {
		c.stats.SafetyWalks += uint64(res.Walks)
		var perr error
		if preds, perr = c.unsafePredictions(m, props, res.Unsafe, seen); perr != nil {
			return preds, true, perr
		}
	}
	switch {
	case err == nil:
		return preds, false, nil
	case budget.ctx.Err() != nil:
		return preds, true, nil // the round was cancelled, or the budget is spent
	}
	return preds, true, fmt.Errorf("steering: safety walks at %v: %w", c.self, err)
}

// unsafePredictions turns the walks that reached a violation into
// predictions, leaving out those whose key is in seen (which it extends).
func (c *Controller) unsafePredictions(m *consequence.ActorModel, props []consequence.Property[*consequence.GlobalState], unsafe []consequence.UnsafeWalk[*consequence.GlobalState, consequence.ActorAction], seen map[string]bool) ([]Prediction, error) {
	var out []Prediction
	for _, u := range unsafe {
		path := make([]consequence.ActorAction, len(u.Path))
		for i, a := range u.Path {
			path[i] = a.Act
		}
		p, err := c.predictionOf(m, props, m.Start(), path, u.Violation)
		if err != nil {
			return out, err
		}
		if key := predictionKey(p); !seen[key] {
			seen[key] = true
			out = append(out, p)
		}
	}
	return out, nil
}
