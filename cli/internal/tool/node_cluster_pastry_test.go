package tool

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/pastry"
)

// TestNodeProcessesRunPastry is TestNodeProcessesRunChordAndPaxos for
// Pastry: three `crystalball node --service pastry` processes on loopback
// (node 1 forms the overlay, 2 and 3 join through it, their Pastry
// messages datagrams over the runtime's connections), until a snapshot
// gathered at node 1 shows every node joined with consistent leaf sets
// and no safety property violated; /status, /metrics and a clean SIGTERM
// as for the other services. Skipped under -short.
func TestNodeProcessesRunPastry(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs 3 OS processes")
	}
	bin := nodeBinary(t)
	runCluster(t, bin, pastry.Name, func(v node.View) (bool, string) {
		s := pastry.Summarize(v)
		return s.Nodes == 3 && s.Joined == 3 && s.Consistent == 3 && s.Stale == 0, s.String()
	})
}
