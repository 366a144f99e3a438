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
	r := steering.EventRates{
		Latencies: e.rates.Latencies, LatencySum: e.rates.LatencySum,
		TimersSet: e.rates.TimersSet, TimerDelaySum: e.rates.TimerDelaySum,
		Lasting: e.rates.lasting,
	}
	r.Span, r.Nodes = e.now, e.cfg.Nodes
	r.Deliveries = uint64(e.st.delivered)
	r.Apps = uint64(e.st.byKind[kindApp])
	r.Resets = uint64(e.st.resets)
	r.Breaks = uint64(e.st.breaks)
	r.DatagramsDelivered, r.DatagramsLost = uint64(e.st.dgDelivered), uint64(e.st.dgLost)
	r.Sends = uint64(e.st.sent + e.st.dgSent)
	r.Refusals = uint64(e.st.byKind[kindRefused])
	return r
}

// eventCounts are the counts behind Rates the loop keeps as it runs:
// the travel times of messages and datagrams as scheduled, the timers'
// delays as set, and the lasting faults the nemesis injected.
type eventCounts struct {
	Latencies     uint64
	LatencySum    time.Duration
	TimersSet     uint64
	TimerDelaySum time.Duration
	lasting       steering.LastingRates
}

// observeLasting accounts a lasting fault the nemesis injected (kind
// consequence.ActCrash, ActPartition of shape cut, or ActClockJump; d its
// downtime, length or size) and tells every node's steering layer of it,
// as a deployment's monitoring would (steering.Layer.ObserveFault: the
// rounds explore the kinds seen). The scenario methods (Crash,
// CutOneWay, JumpClock, Partition, …) report nothing: a scripted run's
// rounds explore what they always did.
func (e *Emulator) observeLasting(kind consequence.ActorActionKind, cut consequence.CutKinds, d time.Duration) {
	f := steering.LastingFault{Kind: kind, Cut: cut, For: d}
	e.rates.lasting.Add(f)
	for _, n := range e.nodes[1:] {
		if n.steer.layer != nil {
			n.steer.layer.ObserveFault(f)
		}
	}
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
