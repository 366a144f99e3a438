package zoo

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds every case, bug and fix, to the contracts every
// runtime relies on; the run's calls are the case's workload.
func TestConformance(t *testing.T) {
	for _, c := range Cases() {
		calls := nodetest.ConformanceCalls(func(self node.ID, _ []node.ID) []node.Message {
			return c.Workload(self, false)
		})
		for _, fixed := range []bool{false, true} {
			for seed := range uint64(3) {
				nodetest.Conformance(t, c.Spec(fixed), calls, nodetest.ConformanceNodes(c.Nodes), nodetest.ConformanceSeed(seed))
			}
		}
	}
}
