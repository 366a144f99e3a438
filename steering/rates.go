package steering

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// EventRates is what a run showed of how often each kind of event
// happens: counts over a span of virtual time and the waits of what was
// pending (how long a message travelled, how far ahead a timer was set).
// WalkWeights turns it into walk weights. The emulator accounts it over a
// whole run (emulation.Emulator.Rates, emulation.WalkWeights); every
// field is a count or a sum of virtual time, so a run's rates are a pure
// function of its seed.
type EventRates struct {
	// Span is the virtual time observed and Nodes the nodes observed over
	// it (node-time Span·Nodes is the base of the per-node rates).
	Span  time.Duration
	Nodes int
	// Deliveries counts messages delivered; LatencySum sums the travel
	// times (send to arrival) of Latencies messages and datagrams.
	Deliveries uint64
	Latencies  uint64
	LatencySum time.Duration
	// TimersSet counts timers scheduled, TimerDelaySum how far ahead of
	// the scheduling each was due.
	TimersSet     uint64
	TimerDelaySum time.Duration
	// Apps counts application calls (reported; WalkWeights weighs calls
	// 1); Resets node resets (churn included); Breaks broken connections.
	Apps, Resets, Breaks uint64
	// DatagramsDelivered and DatagramsLost count datagrams that arrived
	// and that the network lost.
	DatagramsDelivered, DatagramsLost uint64
	// Sends counts messages sent, Refusals those the transport refused.
	Sends, Refusals uint64
	// Lasting counts the lasting faults the deployment showed (a shell
	// reports them: Layer.ObserveFault, emulation.Emulator.Rates): what
	// decides which of them a round explores (RoundFaults).
	Lasting LastingRates
}

// Floors of WalkWeights. A fault's observed rate per pending action is
// tiny in any deployment (a node resets once an hour, a message travels
// for milliseconds: 1e-6), so a walk of DefaultWalkDepth steps would meet
// none; the rounds bound faults by their budget (Config.Faults) instead,
// and an observed rate only raises a fault above MaceMC's bias
// (FaultWeightFloor, the fault weight of DefaultWalkWeights). Timers keep
// MinWalkWeight, so that no timer the model offers is excluded by a run
// too short to show it.
const (
	FaultWeightFloor = 0.02
	MinWalkWeight    = 0.001
)

// AssumedLatency is the travel time WalkWeights takes when the rates
// carry no delivery: about a LAN round trip.
const AssumedLatency = 10 * time.Millisecond

// WalkWeights derives walk weights from observed rates: a walk
// should draw each enabled action about as often as the deployment would
// take it next, so an action's weight is its rate per pending action,
// relative to a message's delivery (weight 1, rate 1/mean latency):
//
//   - timer: mean latency / mean timer delay (a timer set 1 s ahead on a
//     10 ms network fires once per 100 deliveries: 0.01);
//   - app: 1, as a delivery: the model's application calls are the
//     workload's queued calls (a join, a send), which a deployment runs
//     as a node starts, not at the rate calls arrive over a run;
//   - reset, break: per node-second × mean latency, at least
//     FaultWeightFloor;
//   - drop: datagrams lost per datagram delivered, at least
//     FaultWeightFloor; refuse: refusals per send, at least
//     FaultWeightFloor;
//   - deliver, datagram: 1;
//   - crash, partition, clock jump, when the rates show any: per
//     node-second × mean latency, at least FaultWeightFloor (absent
//     otherwise: a round does not explore them, RoundFaults).
//
// Timers are at least MinWalkWeight. MaceMC's
// hand-tuned weights for comparison (docs/ARCHITECTURE.md): Pastry
// timer=0.02, reset=0.05; MaceTransport timer=1, datagram=20, drop=200
// (timer 0.05 relative to a datagram); RandTree here reset=0.02,
// timer=0.1. The result is a fresh map.
func (r EventRates) WalkWeights() map[consequence.ActorActionKind]float64 {
	lat := r.meanLatency()
	perNode := func(n uint64) float64 { return r.perNodeWeight(n, lat) }
	timer := r.timerWeight(lat)
	w := map[consequence.ActorActionKind]float64{
		consequence.ActDeliver:         1,
		consequence.ActDeliverDatagram: 1,
		consequence.ActTimer:           max(timer, MinWalkWeight),
		consequence.ActApp:             1,
		consequence.ActReset:           max(perNode(r.Resets), FaultWeightFloor),
		consequence.ActBreak:           max(perNode(r.Breaks), FaultWeightFloor),
		consequence.ActDropDatagram:    max(countRatio(r.DatagramsLost, r.DatagramsDelivered), FaultWeightFloor),
		consequence.ActRefuse:          max(countRatio(r.Refusals, r.Sends), FaultWeightFloor),
		// A transport that hides its losses, copies and reordering (TCP
		// under a service that declares them) shows no rate of them: they
		// weigh the floor.
		consequence.ActLose:         FaultWeightFloor,
		consequence.ActDuplicate:    FaultWeightFloor,
		consequence.ActDeliverAhead: FaultWeightFloor,
		consequence.ActDelay:        FaultWeightFloor,
	}
	r.Lasting.addWeights(w, perNode)
	return w
}

// meanLatency is the mean travel time the rates show, AssumedLatency
// when they carry none.
func (r EventRates) meanLatency() time.Duration {
	if r.Latencies > 0 && r.LatencySum > 0 {
		return r.LatencySum / time.Duration(r.Latencies)
	}
	return AssumedLatency
}

// perNodeWeight is n events over the rates' node-time, per node-second,
// times the latency lat: their weight against a delivery (0 with no
// node-time observed).
func (r EventRates) perNodeWeight(n uint64, lat time.Duration) float64 {
	nodeTime := r.Span.Seconds() * float64(max(r.Nodes, 1))
	if nodeTime <= 0 {
		return 0
	}
	return float64(n) / nodeTime * lat.Seconds()
}

// countRatio is n per base, 0 for no base.
func countRatio(n, base uint64) float64 {
	if base == 0 {
		return 0
	}
	return float64(n) / float64(base)
}

// timerWeight is the latency lat over the mean timer delay the rates
// show (0 when they show none), before MinWalkWeight.
func (r EventRates) timerWeight(lat time.Duration) float64 {
	if r.TimersSet > 0 && r.TimerDelaySum > 0 {
		return lat.Seconds() / (r.TimerDelaySum.Seconds() / float64(r.TimersSet))
	}
	return 0
}
