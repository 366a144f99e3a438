package papers

import (
	"io"
	"testing"
)

// TestRandTreeLivenessTakesTheRateRules: the liveness experiment passes
// --adaptive-weights and --gather-on-fault to its controllers, and leaves
// both off without them.
func TestRandTreeLivenessTakesTheRateRules(t *testing.T) {
	cfg, _, err := parseRandTreeLiveness([]string{"--seed", "1", "--adaptive-weights", "--gather-on-fault"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Steering.AdaptiveWeights || !cfg.Steering.GatherOnFault {
		t.Errorf("with both flags: AdaptiveWeights %v, GatherOnFault %v", cfg.Steering.AdaptiveWeights, cfg.Steering.GatherOnFault)
	}
	cfg, _, err = parseRandTreeLiveness([]string{"--seed", "1"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Steering.AdaptiveWeights || cfg.Steering.GatherOnFault {
		t.Errorf("without the flags: AdaptiveWeights %v, GatherOnFault %v", cfg.Steering.AdaptiveWeights, cfg.Steering.GatherOnFault)
	}
}
