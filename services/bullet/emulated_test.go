package bullet_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/bullet"
)

// These tests run Bullet′ on the emulator the way `crystalball emulate`
// does: every node downloads from node 1, the source, on the default
// wide-area topology. Until the emulator models bandwidth no queue fills,
// so nothing is refused and the paper's code downloads as the corrected
// one does.

func emulate(t *testing.T, seed uint64, opts bullet.Options, nodes int, d time.Duration) (emulation.Result, *emulation.Emulator) {
	t.Helper()
	e, err := emulation.New(emulation.Config{
		Spec:     bullet.NewSpec(opts),
		Nodes:    nodes,
		Seed:     seed,
		Duration: d,
		Workload: func(node.ID, bool) []node.Message {
			return []node.Message{bullet.Download{Source: 1}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	return r, e
}

// A 64-block file of 1 KiB blocks reaches all of 8 nodes within two
// minutes, with and without the correction, and no safety property is
// violated on the way.
func TestEmulatedDownloadCompletes(t *testing.T) {
	for _, fix := range []bool{false, true} {
		opts := bullet.DefaultOptions()
		opts.Blocks, opts.BlockSize, opts.FixKeepShadow = 64, 1024, fix
		for seed := uint64(1); seed <= 2; seed++ {
			r, e := emulate(t, seed, opts, 8, 2*time.Minute)
			sum := bullet.Summarize(e.View())
			t.Logf("seed=%d fix=%v: %v; %d events", seed, fix, sum, r.Events)
			if sum.Complete != 8 || sum.Held != 8*64 {
				t.Errorf("seed=%d fix=%v: %v, want all 8 nodes complete", seed, fix, sum)
			}
			for _, l := range r.Liveness {
				if !l.Holds {
					t.Errorf("seed=%d fix=%v: liveness %s does not hold at the end: %s", seed, fix, l.Name, l.Error)
				}
			}
			for _, s := range r.Safety {
				if s.ViolatedStates != 0 {
					t.Errorf("seed=%d fix=%v: %s violated in %d states: %s", seed, fix, s.Name, s.ViolatedStates, s.FirstError)
				}
			}
		}
	}
}
