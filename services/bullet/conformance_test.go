package bullet

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
		"default": NewSpec(small(DefaultOptions())),
		"fixed":   NewSpec(small(AllFixes())),
	}, func(self node.ID, nodes []node.ID) []node.Message {
		return []node.Message{Download{Source: nodes[0]}}
	})
}

// small shrinks the file so a random run sees whole downloads.
func small(o Options) Options {
	o.Blocks, o.BlockSize = 8, 16
	return o
}
