package macetransport

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
		"default": spec(t, DefaultOptions()),
		"fixed":   spec(t, AllFixes()),
	}, func(self node.ID, nodes []node.ID) []node.Message {
		return []node.Message{SendMessages{To: nodes[0], Count: 3}, SendMessages{To: nodes[len(nodes)-1], Count: 2}}
	})
}

func spec(t *testing.T, opts Options) node.Spec {
	t.Helper()
	s, err := NewSpec(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
