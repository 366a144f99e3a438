package consequence

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/elect"
	"github.com/seed6eee2ec7/crystalball/node"
)

// lastingModels are actor models with every lasting fault between them:
// crash-stops with and without restarts, partitions of every shape with
// and without heals, clock jumps, beside resets and breaks; a service
// with durable state (elect) and one with datagrams (gossipSvc).
func lastingModels(t testing.TB) []packModel {
	t.Helper()
	build := func(spec node.Spec, opts ActorOptions) *ActorModel {
		m, err := NewActorModel(spec, opts)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	gsp := node.Spec{Name: "gossip", New: func() node.Service { return &gossipSvc{} }, Messages: []node.Message{gossip{}}}
	return []packModel{
		{"elect-crash-restart", build(elect.Spec(3, false), ActorOptions{N: 3, Faults: Faults{Crashes: 1, Downtime: 1500 * time.Millisecond, Resets: 1, Breaks: 1}}), 6, 4,
			[]string{"timer", "deliver", "crash", "restart", "reset rst", "break", "transport-error"}},
		{"elect-partitions", build(elect.Spec(4, true), ActorOptions{N: 4, Faults: Faults{Partitions: 2, PartitionLength: time.Second, Crashes: 1}}), 5, 3,
			[]string{"timer", "deliver", "partition", "heal", "crash"}},
		{"elect-jumps", build(elect.Spec(3, true), ActorOptions{N: 3, TimerSkew: 150 * time.Millisecond, Faults: Faults{ClockJumps: 2, Partitions: 1, PartitionKinds: CutOneWay}}), 5, 3,
			[]string{"timer", "deliver", "clock-jump", "partition"}},
		{"gossip-lasting", build(gsp, ActorOptions{N: 3, Faults: Faults{Crashes: 1, Downtime: 1, Partitions: 1, PartitionLength: 2, ClockJumps: 1, Drops: 1}}), 5, 3,
			[]string{"timer", "deliver", "deliver-datagram", "crash", "restart", "partition", "heal", "clock-jump"}},
	}
}

// TestLastingPackRoundTrip is TestPackRoundTrip for the lasting faults:
// every unique state's packing round trip (the same fingerprint, actions
// and successors), and the same states, level by level, as the Checker
// finds, three levels less than packModel.maxDepth (a few hundred states
// each); TestLastingPackRoundTripFull (make test-long) one level less.
func TestLastingPackRoundTrip(t *testing.T) { checkLastingPackRoundTrip(t, 3) }

func checkLastingPackRoundTrip(t *testing.T, less int) {
	for _, c := range lastingModels(t) {
		t.Run(c.name, func(t *testing.T) {
			depth := c.maxDepth - less
			got := packedBFS(t, c.m, depth, 1, true)
			res, err := NewChecker(c.m).Strategy(BFS).MaxDepth(depth).Workers(1).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got.unique != res.Unique || !slices.Equal(got.depthCounts, res.DepthCounts) {
				t.Fatalf("packed BFS: %d unique %v, Checker: %d unique %v", got.unique, got.depthCounts, res.Unique, res.DepthCounts)
			}
			t.Logf("%d unique states to depth %d; actions taken %v", got.unique, depth, got.kinds)
		})
	}
}

// TestLastingWalks takes walks (a fixed choice of actions) deep enough for
// every kind of lasting fault to happen, checking at every step the
// incremental fingerprint against the one from scratch and the packing
// round trip, and that every kind was taken: 4 walks of 40 steps per
// model; TestLastingWalksFull (make test-long) takes 12 of 60.
func TestLastingWalks(t *testing.T) { checkLastingWalks(t, 4, 40) }

func checkLastingWalks(t *testing.T, walks, steps int) {
	for _, c := range lastingModels(t) {
		t.Run(c.name, func(t *testing.T) {
			kinds := map[string]int{}
			p := c.m.NewPacker()
			for w := range walks {
				g := c.m.Start()
				for step := range steps {
					acts := c.m.Actions(g, nil)
					if len(acts) == 0 {
						break
					}
					// Lasting faults first, when enabled, so that the walks
					// reach their later kinds (restarts, heals).
					a := acts[(w*7+step*13)%len(acts)]
					for _, b := range acts {
						if b.Act.Kind >= ActCrash && (w+step)%3 == 0 {
							a = b
						}
					}
					next, ok := c.m.Next(g, a.Act)
					if !ok {
						t.Fatalf("listed %v is not enabled", a.Act)
					}
					if next.fp != next.fingerprint() {
						t.Fatalf("after %v: incremental fingerprint %v, from scratch %v\n%v", a.Act, next.fp, next.fingerprint(), next)
					}
					if h := c.m.clockHash(next); !c.m.opts.AnyOrderTimers && h != next.clockH {
						t.Fatalf("after %v: clock component %v, from scratch %v", a.Act, next.clockH, h)
					}
					kinds[actionKind(a.Act)]++
					checkRoundTrip(t, p, next)
					if t.Failed() {
						return
					}
					g = next
				}
			}
			for _, k := range c.kinds {
				if kinds[k] == 0 {
					t.Errorf("no %q action taken (%v)", k, kinds)
				}
			}
		})
	}
}

// TestLastingParallelCounts: a search with lasting faults finds the same
// states, level by level, and the same violations with one worker and
// with four, with and without a packed frontier (no state budget packs).
func TestLastingParallelCounts(t *testing.T) {
	m := lastingModels(t)[0].m
	var want *Result[*GlobalState, ActorAction]
	for _, w := range []int{1, 4} {
		for _, budget := range []int{0, 1 << 20} {
			res, err := NewChecker(m).Properties(m.Properties()...).Strategy(BFS).MaxDepth(4).MaxStates(budget).Workers(w).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want == nil {
				want = res
				continue
			}
			if res.Unique != want.Unique || !slices.Equal(res.DepthCounts, want.DepthCounts) || len(res.Violations) != len(want.Violations) {
				t.Fatalf("workers %d, budget %d: %d unique %v, want %d %v", w, budget, res.Unique, res.DepthCounts, want.Unique, want.DepthCounts)
			}
		}
	}
}
