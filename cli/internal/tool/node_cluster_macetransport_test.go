package tool

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
)

// TestNodeProcessesRunMaceTransport runs three `crystalball node --service
// macetransport` processes as TestNodeProcessesRunChordAndPaxos runs Chord
// and Paxos (runCluster: snapshots, steering, the immediate check, /status,
// /metrics, SIGTERM). The live workload is the CLI builder's Join: a node
// that joins through others sends two messages to the first of them, so n2
// and n3 each send two to n1 over datagrams (the live runtime carries them
// on the peers' connections). Converged: a snapshot of all three nodes in
// which the four messages are sent and every one acknowledged — an ACK
// covers only packets the receiver accepted in order and delivered — and no
// safety property (in order, no duplicate, delivered was sent) is violated.
// Skipped under -short.
func TestNodeProcessesRunMaceTransport(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs 3 OS processes")
	}
	bin := nodeBinary(t)
	runCluster(t, bin, macetransport.Name, func(v node.View) (bool, string) {
		s := macetransport.Summarize(v)
		// Each node sends 2 messages (cli/papers configures MaceTransport so).
		return s.Nodes == 3 && s.Sent == 2*2 && s.Unacked == 0, s.String()
	})
}
