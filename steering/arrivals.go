package steering

import (
	"context"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// searchArrivals is a round's environment search: consequence prediction
// from snap with up to Config.Arrivals nodes arriving (node.Environment),
// within Config.MaxStates, for the safety properties props. It adds its
// predictions to rep (with Arrivals set); a service whose members declare
// no arrival costs nothing.
//
// It is a search of its own, after the members-only one, for two
// reasons. The members-only search stays what it was — the arrivals'
// messages in flight would otherwise take a share of its budget from the
// faults it explores (Chord's Figure 10 lies seven steps deep). And it
// explores the configured faults but connection breaks: a break is a
// local action of both ends of every open connection, which multiplies
// the states of each level, while what arrivals add is depth — two joins
// racing through a Chord node alone on its ring, after it reset, lie
// eleven steps from a formed ring's snapshot. Measured on a snapshot of
// n1 in a 100-node Chord ring (seed 1 at 38 s, 9 members): with one
// silent reset the race is found at depth 11 in 33,498 states; with a
// break as well, 200,000 states reach depth 7.
//
// Its predictions are reported, never steered: a filter derived from a
// path through nodes that have not arrived is not installed (mode Steer
// installs the members-only search's filters), and its paths are not
// replayed in later rounds, whose members-only models lack the arrivals.
func (c *Controller) searchArrivals(ctx context.Context, snap *snapshot.Snapshot, props []consequence.Property[*consequence.GlobalState], rep *RoundReport) error {
	if c.cfg.NoArrivals || ctx.Err() != nil {
		return nil
	}
	m, err := c.arrivalsModel(snap)
	if m == nil {
		return err
	}
	live := holdingAt(props, m.Start())
	if len(live) == 0 {
		return nil
	}
	found, states, err := c.search(ctx, m, live)
	rep.States += states
	if err != nil {
		return err
	}
	rank(m.Start(), found) // among the environment's own: their start state holds the arrivals
	for _, p := range found {
		p.Arrivals = c.cfg.Arrivals
		c.stats.Predicted[p.Property]++
		rep.Predictions = append(rep.Predictions, p)
	}
	return nil
}

// arrivalsModel builds the environment search's model of snap: its
// members and up to Config.Arrivals arrivals, with the round's faults but
// connection breaks. It is nil when nobody arrives (no model to build) or
// on an error.
func (c *Controller) arrivalsModel(snap *snapshot.Snapshot) (*consequence.ActorModel, error) {
	arrivals, err := SnapshotArrivals(c.cfg.Spec, snap, c.cfg.Arrivals)
	if err != nil || len(arrivals) == 0 {
		return nil, err
	}
	faults := c.roundFaults()
	faults.Breaks = 0
	m, err := SnapshotModelWith(c.cfg.Spec, snap, SnapshotOptions{Workload: c.cfg.Workload, Faults: faults, Arrivals: c.cfg.Arrivals, TimerSkew: c.cfg.TimerSkew})
	if err != nil {
		return nil, fmt.Errorf("steering: round at %v: arrivals: %w", c.self, err)
	}
	return m, nil
}

// holdingAt returns the properties of props that hold in g.
func holdingAt(props []consequence.Property[*consequence.GlobalState], g *consequence.GlobalState) []consequence.Property[*consequence.GlobalState] {
	var out []consequence.Property[*consequence.GlobalState]
	for _, p := range props {
		if p.Check(g) == nil {
			out = append(out, p)
		}
	}
	return out
}
