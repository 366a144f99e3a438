package experiments

import (
	"testing"

	"go.uber.org/goleak"
)

// Paxos runs its emulations on worker goroutines and the baseline's BFS
// on several: none may outlive the experiment.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
