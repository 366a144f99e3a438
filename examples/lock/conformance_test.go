package main

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the lock service to the contracts every runtime
// relies on; the run's calls are the workload's.
func TestConformance(t *testing.T) {
	calls := nodetest.ConformanceCalls(func(self node.ID, _ []node.ID) []node.Message {
		return workload(self, false)
	})
	for seed := range uint64(3) {
		nodetest.Conformance(t, spec(), calls, nodetest.ConformanceSeed(seed))
	}
}
