package tool

import (
	"io"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// TestNodeHoldFlags: --filter-hold and --veto-hold reach the steering
// controller's FilterHold and VetoHold (bench/soak bounds its nodes'
// holds with them); without them both stay 0, the library's default
// (held until safe, with the liveness guard).
func TestNodeHoldFlags(t *testing.T) {
	for _, c := range []struct {
		args           []string
		filter, vetoes time.Duration
	}{
		{nil, 0, 0},
		{[]string{"--filter-hold", "10s", "--veto-hold", "1m"}, 10 * time.Second, time.Minute},
	} {
		f, err := parseNodeFlags(testCatalog(), append([]string{"--id", "1", "--mode", "steer"}, c.args...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		cfg := f.steeringConfig(node.Spec{})
		if cfg.FilterHold != c.filter || cfg.VetoHold != c.vetoes {
			t.Errorf("%v: FilterHold %v, VetoHold %v; want %v and %v", c.args, cfg.FilterHold, cfg.VetoHold, c.filter, c.vetoes)
		}
	}
}
