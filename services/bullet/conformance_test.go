package bullet

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
		return []node.Message{Download{Source: nodes[0]}}
	})
	for name, opts := range map[string]Options{"default": small(DefaultOptions()), "fixed": small(AllFixes())} {
		t.Run(name, func(t *testing.T) {
			for seed := range uint64(3) {
				nodetest.Conformance(t, NewSpec(opts), calls, nodetest.ConformanceNodes(4), nodetest.ConformanceSeed(seed))
			}
		})
	}
}

// small shrinks the file so a random run sees whole downloads.
func small(o Options) Options {
	o.Blocks, o.BlockSize = 8, 16
	return o
}
