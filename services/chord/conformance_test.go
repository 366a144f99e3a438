package chord

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the service, with and without its fixes, to the
// contracts every runtime relies on (clone independence, checkpoint round
// trip, hash coverage, message registration).
func TestConformance(t *testing.T) {
	calls := nodetest.ConformanceCalls(func(self node.ID, nodes []node.ID) []node.Message {
		return []node.Message{JoinOverlay{Bootstrap: nodes[0]}, JoinOverlay{Bootstrap: nodes[len(nodes)-1]}}
	})
	for name, opts := range map[string]Options{"default": DefaultOptions(), "fixed": AllFixes()} {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(3) {
				nodetest.Conformance(t, NewSpec(opts), calls, nodetest.ConformanceNodes(4), nodetest.ConformanceSeed(seed))
			}
		})
	}
}
