package pastry

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// TestConformance holds the service, with and without its fixes, to the
// contracts every runtime relies on (clone independence, checkpoint round
// trip, hash coverage, message registration).
func TestConformance(t *testing.T) {
	servicetest.Conformance(t, map[string]node.Spec{
		"default": NewSpec(DefaultOptions()),
		"fixed":   NewSpec(AllFixes()),
	}, func(self node.ID, nodes []node.ID) []node.Message {
		return []node.Message{JoinOverlay{Bootstrap: nodes[0]}, JoinOverlay{Bootstrap: nodes[len(nodes)-1]}}
	})
}
