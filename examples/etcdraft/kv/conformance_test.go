package kv_test

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/examples/etcdraft/kv"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the replayed raft store, bug and fix, to the
// contracts every runtime relies on (its hash is its own fingerprint, so
// field coverage is the service's word).
func TestConformance(t *testing.T) {
	calls := nodetest.ConformanceCalls(func(self node.ID, _ []node.ID) []node.Message {
		return kv.Workload(self, false)
	})
	for _, fixed := range []bool{false, true} {
		spec, _, err := kv.Spec(kv.Options{ApplyCommitted: fixed})
		if err != nil {
			t.Fatal(err)
		}
		nodetest.Conformance(t, spec, calls, nodetest.ConformanceSteps(150))
	}
}
