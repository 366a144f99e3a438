package tool

import (
	"io"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// emulate --mode M [--immediate] with no other steering flag builds what
// emulation.ModeConfig returns, so programs that run the modes through the
// library (the zoo scoreboard) run what the command runs.
func TestModeFlagsAreTheLibrarysModeConfig(t *testing.T) {
	const nodes = 10
	d := steering.DefaultConfig()
	for _, c := range []struct {
		mode      steering.Mode
		immediate bool
	}{{steering.Debug, false}, {steering.Steer, true}, {steering.Steer, false}, {steering.Debug, true}, {steering.Off, true}} {
		fs := newFlagSet("emulate", io.Discard)
		p := emulateParams{services: testCatalog()}
		p.register(fs)
		args := []string{"--nodes", "10", "--mode", c.mode.String()}
		if c.immediate {
			args = append(args, "--immediate")
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := p.resolve(); err != nil {
			t.Fatal(err)
		}
		got := p.emulationConfig(serviceRun{})
		snaps, steer := emulation.ModeConfig(c.mode, nodes, c.immediate)
		if got.Snapshots.Manager != snaps.Manager {
			t.Errorf("%v: snapshots %+v, library %+v", args, got.Snapshots.Manager, snaps.Manager)
		}
		gc, lc := got.Steering.Controller, steer.Controller
		if gc.Mode != lc.Mode || gc.Faults != lc.Faults || gc.MaxStates != lc.MaxStates || gc.BreakConnection != lc.BreakConnection ||
			got.Steering.Immediate != steer.Immediate {
			t.Errorf("%v: steering %+v, library %+v", args, gc, lc)
		}
		// The command spells the walk budgets out, the library leaves them
		// at steering's defaults.
		if gc.Walks != d.Walks || gc.DMax != d.DMax || gc.MaxWalkSteps != d.MaxWalkSteps || lc.Walks != 0 || lc.DMax != 0 {
			t.Errorf("%v: walks %d/%d, library %d/%d", args, gc.Walks, gc.DMax, lc.Walks, lc.DMax)
		}
		for id := node.ID(1); id <= nodes; id++ {
			if a, b := selects(got.Steering.Predictors, id), selects(steer.Predictors, id); a != b {
				t.Errorf("%v: predictor %v: command %v, library %v", args, id, a, b)
			}
			if a, b := selects(got.Snapshots.Gatherers, id), selects(snaps.Gatherers, id); a != b {
				t.Errorf("%v: gatherer %v: command %v, library %v", args, id, a, b)
			}
		}
	}
}

// selects applies an optional node selector (nil: every node).
func selects(f func(node.ID) bool, id node.ID) bool { return f == nil || f(id) }

// The rounds' workload is named in the configuration the command builds,
// not left to the emulator's default, because --reports rebuilds each
// round's model from it: without it a path with a workload call after a
// reset (the zoo's lockd: "A reset silent; A app Acquire") did not replay
// and the run ended in an error after its last event.
func TestEmulateRoundsAndReportsShareTheWorkload(t *testing.T) {
	fs := newFlagSet("emulate", io.Discard)
	p := emulateParams{services: testCatalog()}
	p.register(fs)
	if err := fs.Parse([]string{"--nodes", "4", "--mode", "debug"}); err != nil {
		t.Fatal(err)
	}
	if err := p.resolve(); err != nil {
		t.Fatal(err)
	}
	calls := func(node.ID, bool) []node.Message { return nil }
	got := p.emulationConfig(serviceRun{workload: calls})
	if got.Steering.Controller.Workload == nil {
		t.Fatal("the rounds' workload is unset: reports would rebuild their model without it")
	}
}
