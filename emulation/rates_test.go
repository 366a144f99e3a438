package emulation_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// maceTransportWorkload is the CLI's: n1 sends two messages to n2.
func maceTransportWorkload(id node.ID, restart bool) []node.Message {
	if id != 1 || restart {
		return nil
	}
	return []node.Message{macetransport.SendMessages{To: 2, Count: 2}}
}

// Weights from the deployment find a dead end the fixed weights miss:
// MaceMC's MaceTransport bug (a stale SYN after a connection's fifth
// timeout) needs four lost datagrams in a row and the retransmission
// timer rare against deliveries, which MaceMC set by hand
// (timer=1,datagram=20,drop=200). A one-minute emulated run of the same
// service on a network losing 30% of its datagrams gives, by
// steering.EventRates.WalkWeights, timers 30 ms / 1 s and drops
// lost/delivered; with them, walks of 100 steps (seed 1) find the dead
// end (C1) in 192 walks, with the rounds' DefaultWalkWeights and
// unweighted walks (check's default) they find none. The path is a
// variant of the paper's Figure 4: two SYNs and two ACKs lost, the fifth
// timeout opening a new connection, and the critical step n2's delivery
// of a DATA after the stale SYN (step 16 of the suspect walk).
//
// The quick test takes up to 500 walks (the unweighted ones judge 7
// suspects C2); TestAdaptiveWeightsFindMaceTransportDeadEnd2000
// (rates_long_test.go) takes docs/RESULTS.md's 2,000, whose 2,000 live
// walks with the default weights were most of the cost.
func TestAdaptiveWeightsFindMaceTransportDeadEnd(t *testing.T) {
	checkAdaptiveWeights(t, 500, [3]int{192, 500, 500})
}

// checkAdaptiveWeights is TestAdaptiveWeightsFindMaceTransportDeadEnd
// with up to walks walks, which the adaptive, default and unweighted
// searches take want of.
func checkAdaptiveWeights(t *testing.T, walks int, want [3]int) {
	spec, err := macetransport.NewSpec(macetransport.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	adaptive, rates, err := emulation.WalkWeights(context.Background(), emulation.Config{Spec: spec, Nodes: 2, Seed: 1,
		Workload: maceTransportWorkload, Topology: emulation.UniformTopology{L: emulation.Link{Latency: 30 * time.Millisecond, Loss: 0.3}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("rates %+v\nweights %v", rates, adaptive)
	// 30 ms datagrams, timers 1 s ahead; 4 of 9 datagrams lost.
	if rates.DatagramsLost != 4 || rates.DatagramsDelivered != 5 || math.Abs(adaptive[consequence.ActTimer]-0.03) > 1e-9 || adaptive[consequence.ActDropDatagram] != 0.8 {
		t.Fatalf("rates %+v, weights %v", rates, adaptive)
	}
	walk := func(w map[consequence.ActorActionKind]float64) *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction] {
		m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Seed: 1, Workload: maceTransportWorkload, Faults: consequence.Faults{Drops: 4}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := consequence.FindLivenessViolation(context.Background(), m, m.Properties(), nil,
			consequence.LivenessOptions[consequence.ActorAction]{Walk: consequence.WalkOptions[consequence.ActorAction]{
				Seed: 1, Walks: walks, DMax: 100, DInit: 5, Weight: consequence.KindWeights(w)}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, tc := range []struct {
		name    string
		weights map[consequence.ActorActionKind]float64
		dead    bool
		walks   int
	}{
		{"adaptive", adaptive, true, want[0]},
		{"rounds' defaults", steering.DefaultWalkWeights(), false, want[1]},
		{"unweighted", map[consequence.ActorActionKind]float64{}, false, want[2]},
	} {
		res := walk(tc.weights)
		dead := res.Critical != nil && res.Critical.Verdict == consequence.C1
		t.Logf("%s: %d walks, %d live, %d suspects, C1 %v", tc.name, res.Walks, res.Live, res.Suspects, dead)
		if dead && (res.Critical.Step != 16 || res.Critical.Action.Act.String() != "n2 deliver-datagram macetransport.Data from n1") {
			t.Errorf("%s: critical step %d %v, want 16, n2 delivering a stale DATA", tc.name, res.Critical.Step, res.Critical.Action.Act)
		}
		if dead != tc.dead || res.Walks != tc.walks {
			t.Errorf("%s: dead end found %v, want %v (%d walks, %d live, %d suspects)", tc.name, dead, tc.dead, res.Walks, res.Live, res.Suspects)
		}
	}
}
