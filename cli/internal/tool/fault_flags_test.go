package tool

import (
	"io"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestFaultFlagsDefaultToTheLibrarys: with no fault flag, emulate (in both
// modes) and node explore steering.DefaultFaults, so a run from the CLI is
// the one a program builds from the library; a flag changes its budget in
// both commands alike.
func TestFaultFlagsDefaultToTheLibrarys(t *testing.T) {
	want := steering.DefaultFaults()
	for _, mode := range []string{"debug", "steer"} {
		fs := newFlagSet("emulate", io.Discard)
		p := emulateParams{services: testCatalog()}
		p.register(fs)
		if err := fs.Parse([]string{"--nodes", "4", "--mode", mode}); err != nil {
			t.Fatal(err)
		}
		if err := p.resolve(); err != nil {
			t.Fatal(err)
		}
		if got := p.emulationConfig(serviceRun{}).Steering.Controller.Faults; got != want {
			t.Errorf("emulate --mode %s: faults %+v, want %+v", mode, got, want)
		}
	}
	f, err := parseNodeFlags(testCatalog(), []string{"--id", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.steeringConfig(node.Spec{}).Faults; got != want {
		t.Errorf("node: faults %+v, want %+v", got, want)
	}
	f, err = parseNodeFlags(testCatalog(), []string{"--id", "1", "--steer-breaks", "0", "--steer-drops", "2"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.steeringConfig(node.Spec{}).Faults; got.Breaks != 0 || got.Drops != 2 || got.Resets != want.Resets {
		t.Errorf("node --steer-breaks 0 --steer-drops 2: faults %+v", got)
	}
}
