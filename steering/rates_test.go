package steering_test

import (
	"math"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// WalkWeights' rule on figures worked by hand: 20 ms deliveries, timers
// 2 s ahead (0.01); 10 nodes over 100 s with 50 resets (0.05 per
// node-second × 20 ms = 0.001, raised to the fault floor) and 5,000
// breaks (5 per node-second: 0.1); 1 datagram lost per 4 delivered
// (0.25); 1 refusal in 1,000 sends (0.001: the floor); calls 1. Without
// any delivery the latency is AssumedLatency; without a timer, timers
// weigh MinWalkWeight.
func TestWalkWeightsRule(t *testing.T) {
	r := steering.EventRates{Span: 100 * time.Second, Nodes: 10, Deliveries: 100, Latencies: 100, LatencySum: 2 * time.Second,
		TimersSet: 10, TimerDelaySum: 20 * time.Second, Apps: 7, Resets: 50, Breaks: 5000,
		DatagramsDelivered: 400, DatagramsLost: 100, Sends: 1000, Refusals: 1}
	want := map[consequence.ActorActionKind]float64{
		consequence.ActDeliver: 1, consequence.ActDeliverDatagram: 1, consequence.ActApp: 1,
		consequence.ActTimer: 0.01, consequence.ActReset: steering.FaultWeightFloor, consequence.ActBreak: 0.1,
		consequence.ActDropDatagram: 0.25, consequence.ActRefuse: steering.FaultWeightFloor,
		// TCP shows no losses, copies or reordering of declared messages,
		// and no message later than the service's declared delay.
		consequence.ActLose: steering.FaultWeightFloor, consequence.ActDuplicate: steering.FaultWeightFloor,
		consequence.ActDeliverAhead: steering.FaultWeightFloor, consequence.ActDelay: steering.FaultWeightFloor,
	}
	check := func(name string, got, want map[consequence.ActorActionKind]float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %v, want %v", name, got, want)
		}
		for k, w := range want {
			if math.Abs(got[k]-w) > 1e-9 {
				t.Errorf("%s: kind %d weighs %v, want %v", name, k, got[k], w)
			}
		}
	}
	check("observed", r.WalkWeights(), want)
	empty := steering.EventRates{TimersSet: 1, TimerDelaySum: time.Second}
	want[consequence.ActTimer] = steering.AssumedLatency.Seconds()
	want[consequence.ActBreak], want[consequence.ActDropDatagram] = steering.FaultWeightFloor, steering.FaultWeightFloor
	check("no deliveries", empty.WalkWeights(), want)
	want[consequence.ActTimer] = steering.MinWalkWeight
	check("nothing", steering.EventRates{}.WalkWeights(), want)
}
