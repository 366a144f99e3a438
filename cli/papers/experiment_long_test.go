//go:build long

package papers

// The experiments' tests at the sizes the quick suite used to run them
// (make test-long: go test -tags long, without the race detector).

import "testing"

// TestExperimentMaceMCBaselineLong is macemc-baseline with --mode debug's
// budget and seed 1 online (the rounds' walks on: 17 s of CPU under -race)
// and a BFS of 20,000 states (bounded in states, not in wall time). Quick:
// TestExperimentMaceMCBaseline (5,000 states for 9.5 s, seed 28; 2,000
// BFS states).
func TestExperimentMaceMCBaselineLong(t *testing.T) {
	checkMaceMCBaseline(t, 3600, 20000, "experiment", "macemc-baseline", "--service", "chord", "--nodes", "10", "--duration", "20s",
		"--churn", "0", "--budget", "1h", "--bfs-states", "20000", "--json")
}
