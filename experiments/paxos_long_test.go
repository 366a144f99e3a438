//go:build long

package experiments

import (
	"testing"
	"time"
)

// TestPaxosSteeringAvoidsTheViolationDefaults is
// TestPaxosSteeringAvoidsTheViolation with the experiment's own settings
// (10,000 states per search, a snapshot every 2 s), for both bugs.
func TestPaxosSteeringAvoidsTheViolationDefaults(t *testing.T) {
	testPaxosSteeringAvoidsTheViolation(t, []string{"bug1", "bug2"}, func(bug string) PaxosConfig {
		return PaxosConfig{Bug: bug, Seed: 1, Indices: []int{2}, MaxGap: 8 * time.Second}
	})
}
