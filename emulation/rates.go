package emulation

import (
	"context"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Rates returns the event rates of the run so far (steering.EventRates):
// every node over the virtual time elapsed, the messages' and datagrams'
// travel times as scheduled, the timers' delays as set. A pure function
// of the run's seed and configuration.
func (e *Emulator) Rates() steering.EventRates {
	r := e.rates
	r.Span, r.Nodes = e.now, e.cfg.Nodes
	r.Deliveries = uint64(e.st.delivered)
	r.Apps = uint64(e.st.byKind[kindApp])
	r.Resets = uint64(e.st.resets)
	r.Breaks = uint64(e.st.breaks)
	r.DatagramsDelivered, r.DatagramsLost = uint64(e.st.dgDelivered), uint64(e.st.dgLost)
	r.Sends = uint64(e.st.sent + e.st.dgSent)
	r.Refusals = uint64(e.st.byKind[kindRefused])
	if e.nem != nil {
		r.Lasting = e.nem.rates
	}
	return r
}

// DefaultWeightsRun is how long WalkWeights emulates a service when its
// configuration sets no Duration.
const DefaultWeightsRun = time.Minute

// WalkWeights derives the walk weights of an offline check from a short
// emulated run of the same service (`check --weights auto`): it runs cfg
// (Duration DefaultWeightsRun when unset; Steering and Snapshots are
// cleared: the rates are the service's, not the runtime's) and returns
// the rates it observed and steering.EventRates.WalkWeights of them. The
// result is a pure function of cfg (its Seed included).
func WalkWeights(ctx context.Context, cfg Config) (map[consequence.ActorActionKind]float64, steering.EventRates, error) {
	if cfg.Duration == 0 {
		cfg.Duration = DefaultWeightsRun
	}
	cfg.Steering, cfg.Snapshots = nil, nil
	e, err := New(cfg)
	if err != nil {
		return nil, steering.EventRates{}, fmt.Errorf("emulation: walk weights: %w", err)
	}
	if _, err := e.Run(ctx); err != nil {
		return nil, steering.EventRates{}, fmt.Errorf("emulation: walk weights: %w", err)
	}
	r := e.Rates()
	return r.WalkWeights(), r, nil
}
