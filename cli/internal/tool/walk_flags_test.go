package tool

import (
	"flag"
	"io"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestWalkWeightsReachTheRounds checks that --walk-weights replaces
// steering's default weights (unlisted kinds then weigh 1) and that
// without it the defaults stay.
func TestWalkWeightsReachTheRounds(t *testing.T) {
	for _, c := range []struct {
		args []string
		want map[consequence.ActorActionKind]float64
	}{
		{nil, steering.DefaultWalkWeights()},
		{[]string{"--walk-weights", "timer=0.02,reset=0.05"}, map[consequence.ActorActionKind]float64{consequence.ActTimer: 0.02, consequence.ActReset: 0.05}},
	} {
		var w walkFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		w.register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := w.validate(); err != nil {
			t.Fatal(err)
		}
		cfg := steering.DefaultConfig()
		w.apply(&cfg)
		if len(cfg.WalkWeights) != len(c.want) {
			t.Fatalf("%v: weights %v, want %v", c.args, cfg.WalkWeights, c.want)
		}
		for k, v := range c.want {
			if cfg.WalkWeights[k] != v {
				t.Fatalf("%v: weights %v, want %v", c.args, cfg.WalkWeights, c.want)
			}
		}
	}
}
