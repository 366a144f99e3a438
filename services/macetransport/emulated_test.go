package macetransport_test

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// figure4Topology is the network of the emulated Figure 4: packets from the
// sender n1 to the receiver n2 take 10 ms plus up to 3 s of jitter (each
// datagram its own: they overtake each other), ACKs back take 10 ms. A
// round trip is at most 3.02 s, less than the 4 s of retransmission
// timeouts a connection survives (MaxRetries 4, RTO 1s), so once the
// sender has an ACK it never times out again.
type figure4Topology struct{}

func (figure4Topology) Link(from, to node.ID) emulation.Link {
	if from == 1 {
		return emulation.Link{Latency: 10 * time.Millisecond, Jitter: 3 * time.Second}
	}
	return emulation.Link{Latency: 10 * time.Millisecond}
}

// emulateFigure4 runs MaceMC's case on the emulator: n1's application sends
// two messages to n2 at the start; the link is cut for the first 3.5 s, so
// the SYN 2001 and its first three retransmissions are lost; the fourth
// (at 4 s) crosses, slowly or not; the fifth timeout (5 s) closes the
// connection and SYN 6001 follows. Whether the stale SYN 2001 overtakes
// SYN 6001 and DATA 6002 is up to the seed's jitter. It returns the view
// at end; debug, when set, adds snapshots and steering to the config.
func emulateFigure4(t *testing.T, seed uint64, opts macetransport.Options, end time.Duration, debug func(*emulation.Config)) node.View {
	t.Helper()
	spec, err := macetransport.NewSpec(opts)
	if err != nil {
		t.Fatal(err)
	}
	cfg := emulation.Config{
		Spec:        spec,
		Nodes:       2,
		Seed:        seed,
		StartSpread: time.Nanosecond,
		Topology:    figure4Topology{},
		Workload: func(id node.ID, restart bool) []node.Message {
			if id != 1 || restart {
				return nil
			}
			return []node.Message{macetransport.SendMessages{To: 2, Count: 2}}
		},
	}
	if debug != nil {
		debug(&cfg)
	}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Partition(1, 2); err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(3500 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if err := e.Heal(1, 2); err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(end)); err != nil {
		t.Fatal(err)
	}
	return e.View()
}

// TestEmulatedFigure4 runs emulateFigure4 for seeds 1..40. With MaceMC's
// code the dead end of Figure 4 happens on its own in six of them — the
// receiver back on the stale 2001 connection, the sender's m2 on 6001
// unacknowledged a minute later, although the network works — and in none
// with the correction. The other runs end with every message acknowledged
// (on the first connection, or on 6001 after the failure), some with the
// receiver switched back to 2001 after everything was acknowledged, which
// is harmless. Every run keeps the safety properties.
func TestEmulatedFigure4(t *testing.T) {
	wantDead := []uint64{12, 14, 17, 21, 28, 35}
	for _, tc := range []struct {
		name string
		opts macetransport.Options
		dead []uint64
	}{
		{"bug", macetransport.DefaultOptions(), wantDead},
		{"fixed", macetransport.AllFixes(), nil},
	} {
		var dead []uint64
		for seed := uint64(1); seed <= 40; seed++ {
			v := emulateFigure4(t, seed, tc.opts, time.Minute, nil)
			for _, p := range macetransport.SafetyProperties() {
				if err := p.Check(v); err != nil {
					t.Errorf("%s seed=%d: %s: %v", tc.name, seed, p.Name, err)
				}
			}
			err := macetransport.LivenessProperties()[0].Check(v)
			if err == nil {
				continue
			}
			dead = append(dead, seed)
			s1, s2 := v.Service(1).(*macetransport.State), v.Service(2).(*macetransport.State)
			if want := "n1: to n2 (conn 6001): [m2] unacknowledged"; err.Error() != want || len(s2.In) != 1 || s2.In[0].ISN != 2001 || s1.Out[0].Base != 6002 {
				t.Errorf("%s seed=%d: not Figure 4's dead end: %v\n n1 %v\n n2 %v", tc.name, seed, err, s1, s2)
			}
		}
		if !slices.Equal(dead, tc.dead) {
			t.Errorf("%s: AllAcked dead after a minute with seeds %v, want %v", tc.name, dead, tc.dead)
		}
	}
}

// TestEmulatedFigure4Debug runs seed 12 (a dead end from 7.4 s on) in mode
// Debug, every node gathering a snapshot every second and the receiver n2
// running a steering round on each of its snapshots, until 8 s. What the
// online predictor makes of it: before the dead end its walks reach no live
// state but every suspect is judged C2 (undecided: no prediction), and once
// in the dead end the rounds find AllAcked dead at the start (DeadAtStart:
// nothing left to predict). It does not predict the dead end ahead of time:
// the rounds' walks are unbiased and a round loses one datagram, where the
// dead end needs four (docs/RESULTS.md, "MaceTransport: the stale SYN").
//
// TestEmulatedFigure4DebugAtLength (emulated_long_test.go) runs rounds at
// both nodes for 15 s. In that run the only round that finds the dead end
// is n2's at 7.40 s; n1's rounds, about 2 s of CPU each under the race
// detector, never do, so this quick version runs n2's rounds only and stops
// at 8 s, just after that round. Its rounds' safety searches keep 1,000
// states instead of the default 20,000: they predict nothing either way
// (MaceTransport's safety properties hold on this run) and were three
// quarters of the test's cost.
func TestEmulatedFigure4Debug(t *testing.T) {
	figure4Debug(t, 8*time.Second, func(id node.ID) bool { return id == 2 }, 1000)
}

// figure4Debug runs emulateFigure4 with seed 12 until end in mode Debug,
// with snapshots every second at every node and rounds at the nodes
// predictors selects (nil: every node), their safety searches bounded by
// maxStates (0: the default), and requires that a round found AllAcked
// dead at the start.
func figure4Debug(t *testing.T, end time.Duration, predictors func(node.ID) bool, maxStates int) {
	t.Helper()
	const seed = 12
	var deadAtStart, predicted int
	emulateFigure4(t, seed, macetransport.DefaultOptions(), end, func(cfg *emulation.Config) {
		cfg.Snapshots = &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: time.Second}}}
		cfg.Steering = &emulation.SteeringConfig{
			Controller: steering.Config{Mode: steering.Debug, Workload: cfg.Workload, SearchBudget: steering.SearchBudget{MaxStates: maxStates}},
			Predictors: predictors,
			OnRound: func(id node.ID, at time.Duration, rep *steering.RoundReport) {
				predicted += len(rep.Predictions)
				if l := rep.Liveness; l != nil && slices.Contains(l.DeadAtStart, macetransport.AllAcked) {
					deadAtStart++
				}
			},
		}
	})
	t.Logf("seed %d: %d rounds found AllAcked dead at the start, %d predictions", seed, deadAtStart, predicted)
	if deadAtStart == 0 {
		t.Errorf("seed %d: no round saw the dead end", seed)
	}
}
