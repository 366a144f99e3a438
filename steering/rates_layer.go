package steering

import (
	"maps"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// rateAccount is a steering layer's account of the node's own events
// (Config.AdaptiveWeights): what the gate saw, by kind, over the time
// between the first and the latest event, on the times the pipeline
// gives (virtual in emulation). A node sees neither its messages' travel
// times nor when its timers were set: a timer's delay is taken as the gap
// between two firings of the same name (the period of a periodic timer),
// the latency as AssumedLatency. The churn the node saw arrives as
// transport errors, counted as breaks. Core goroutine.
type rateAccount struct {
	r           EventRates
	first, last time.Time
	// fired holds, per timer name, its latest firing.
	fired map[string]time.Time
}

// see counts one event offered to the gate (retries not).
func (a *rateAccount) see(now time.Time, ev node.Event) {
	if a.first.IsZero() {
		a.first, a.fired = now, map[string]time.Time{}
	}
	a.last = now
	switch ev.Kind {
	case node.EventTimer:
		a.seeTimer(now, ev.Timer)
	case node.EventReset:
		a.r.Resets++
		clear(a.fired) // the new incarnation sets its timers afresh
	default:
		if count, ok := eventCounters[ev.Kind]; ok {
			*count(&a.r)++
		}
	}
}

// eventCounters holds, per kind of event counted by its kind alone, the
// counter of EventRates it adds to.
var eventCounters = map[node.EventKind]func(*EventRates) *uint64{
	node.EventMessage:        func(r *EventRates) *uint64 { return &r.Deliveries },
	node.EventApp:            func(r *EventRates) *uint64 { return &r.Apps },
	node.EventTransportError: func(r *EventRates) *uint64 { return &r.Breaks },
	node.EventSendRefused:    func(r *EventRates) *uint64 { return &r.Refusals },
}

// seeTimer counts a firing of the timer name at now: the gap since its
// previous firing is taken as one timer's delay.
func (a *rateAccount) seeTimer(now time.Time, name string) {
	if prev, ok := a.fired[name]; ok && now.After(prev) {
		a.r.TimersSet++
		a.r.TimerDelaySum += now.Sub(prev)
	}
	a.fired[name] = now
}

// rates returns the account as EventRates of one node.
func (a *rateAccount) rates() EventRates {
	r := a.r
	r.Span, r.Nodes = a.last.Sub(a.first), 1
	return r
}

// setRates hands the controller the rates its layer observed, for the
// next round's walk weights under Config.AdaptiveWeights.
func (c *Controller) setRates(r EventRates) {
	c.lasting = r.Lasting
	if c.cfg.AdaptiveWeights {
		c.rateWeights = r.WalkWeights()
	}
}

// RoundWeights returns the walk weights the next round takes: those of
// the node's observed rates under Config.AdaptiveWeights once its layer
// has handed them over, else Config.WalkWeights. A copy.
func (c *Controller) RoundWeights() map[consequence.ActorActionKind]float64 {
	if c.rateWeights != nil {
		return maps.Clone(c.rateWeights)
	}
	return maps.Clone(c.cfg.WalkWeights)
}

// Rates returns the rates of the node's own events the layer has seen so
// far (rates_layer.go's account: one node, latency unknown). Call it from
// the goroutine that steps the node (the core goroutine; in emulation,
// between events).
func (l *Layer) Rates() EventRates { return l.rates.rates() }

// FaultGatherSpacing is the least time between two gathers that transport
// errors start (Config.GatherOnFault): a node that loses many connections
// at once (a neighbour's reset breaks them all) gathers once.
const FaultGatherSpacing = time.Second

// gatherAfterFault starts the gather a transport error asked for
// (Config.GatherOnFault), after the core handled it, so the snapshot
// holds the node's reaction; one in progress stands for it.
func (l *Layer) gatherAfterFault(now time.Time) []node.Envelope {
	if !l.faultGather || l.snaps == nil || l.mode == Off {
		l.faultGather = false
		return nil
	}
	if now.Before(l.nextFaultGather) {
		return nil // kept: the step after the spacing gathers
	}
	l.faultGather = false
	l.nextFaultGather = now.Add(FaultGatherSpacing)
	return l.gatherLogged(now, "steering: gathering after a transport error")
}
