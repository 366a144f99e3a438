package scoreboard

import (
	"testing"
	"time"
)

// Liveness lost counts a steer run that ends with a liveness property
// failing which holds at the end of its variant's off run — and not one
// whose off run fails it too (the fault load, not steering).
func TestLivenessLost(t *testing.T) {
	var s Summary
	s.add(SeedResult{
		Bug:  Variant{Off: RunResult{}, Steer: RunResult{Starved: []string{"CaughtUp"}}},
		Twin: Variant{Off: RunResult{Starved: []string{"CaughtUp"}}, Steer: RunResult{Starved: []string{"CaughtUp"}}},
	}, time.Minute)
	if s.LivenessLost != 1 {
		t.Fatalf("liveness lost %d, want 1 (the bug's steer run only)", s.LivenessLost)
	}
	if got := s.plus(s).LivenessLost; got != 2 {
		t.Fatalf("summed liveness lost %d, want 2", got)
	}
}
