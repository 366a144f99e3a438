//go:build long

package experiments

import (
	"testing"
	"time"
)

// TestPaxosSteeringAvoidsTheViolationDefaults is
// TestPaxosSteeringAvoidsTheViolation with the experiment's own settings
// (10,000 states per search, a snapshot every 2 s), as it ran in `make
// test` before the suite was shrunk: about 4 s of CPU without the race
// detector, 35 s with it.
func TestPaxosSteeringAvoidsTheViolationDefaults(t *testing.T) {
	testPaxosSteeringAvoidsTheViolation(t, func(bug string) PaxosConfig {
		return PaxosConfig{Bug: bug, Seed: 1, Indices: []int{2}, MaxGap: 8 * time.Second}
	})
}
