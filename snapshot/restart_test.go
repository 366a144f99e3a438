package snapshot_test

import (
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// restart replaces id's manager by a fresh one, as a restarted live process
// has: checkpoint number 0, no stored checkpoints, no delta bases.
func (h *harness) restart(id node.ID) {
	h.t.Helper()
	for k := range h.q {
		if k[0] == id || k[1] == id {
			delete(h.q, k) // the old incarnation's connections are gone
		}
	}
	reg, err := node.NewRegistry(ping{})
	if err != nil {
		h.t.Fatal(err)
	}
	m, err := snapshot.New(snapshot.Config{Registry: reg, Interval: defaults(id).Interval}, id, h.srcs[id])
	if err != nil {
		h.t.Fatal(err)
	}
	h.mgrs[id] = m
	h.apply(m.Start(h.now))
}

// A restarted gatherer has lost the checkpoints its members acknowledged.
// A member that learned of the broken connection forgets its delta base
// and answers in full; one that did not answers with a delta the gatherer
// cannot decode: the gatherer withdraws the base (an Ack with hash 0) and
// asks that member again in the gather's next round, which it answers in
// full — so the restarted node's first gather holds every member (it used
// to leave the member out until the next gather).
func TestRestartedGathererGetsFullCheckpoints(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, defaults)
	for i := range 3 {
		h.srcs[2].svc.N, h.srcs[3].svc.N = i, i
		s := h.gather(1)
		if len(s.Nodes) != 3 {
			t.Fatalf("gather %d before the restart: nodes %v, excluded %v", i, s.Nodes, s.Excluded)
		}
	}
	if st := h.mgrs[2].Stats(); st.Deltas == 0 && st.Unchanged == 0 {
		t.Fatalf("no delta was ever sent before the restart: %+v", st)
	}

	h.restart(1)
	// Node 2 saw the connection to the old node 1 break; node 3 did not
	// (its RST was lost).
	h.apply(h.mgrs[2].TransportError(h.now, 1))
	h.srcs[2].svc.N, h.srcs[3].svc.N = 10, 10
	s := h.gather(1)
	if len(s.Nodes) != 3 || len(s.Excluded) != 0 || s.Rounds != 2 {
		t.Fatalf("first gather after the restart: nodes %d, excluded %v, %d rounds; want all three in two rounds", len(s.Nodes), s.Excluded, s.Rounds)
	}
	if st := h.mgrs[1].Stats(); st.Resyncs != 1 || st.BadMessages != 0 {
		t.Fatalf("the restarted gatherer's stats: %d resyncs, %d bad messages; want 1 and 0", st.Resyncs, st.BadMessages)
	}
	s = h.gather(1)
	if len(s.Nodes) != 3 || len(s.Excluded) != 0 || s.Rounds != 1 {
		t.Fatalf("second gather after the restart: nodes %d, excluded %v, %d rounds; want all three in one round", len(s.Nodes), s.Excluded, s.Rounds)
	}
	for _, id := range []node.ID{2, 3} {
		if got := string(nodeCP(t, s, id).State); !strings.HasPrefix(got, "state:10:") {
			t.Errorf("n%d's checkpoint after the restart decodes to %.12q...", id, got)
		}
	}
}

// A restarted member starts again at checkpoint number 0, adopts the
// gatherer's larger number on the first message and checkpoints first, so
// the next gather includes it at the cut like everyone else.
func TestRestartedMemberAdoptsNumbers(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	for range 3 {
		h.gather(1)
	}
	before := h.mgrs[1].CN()
	h.restart(2)
	h.apply(h.mgrs[1].TransportError(h.now, 2))
	if cn := h.mgrs[2].CN(); cn != 0 {
		t.Fatalf("restarted manager at cn %d", cn)
	}
	h.send(1, 2, 1)
	h.deliverAll()
	if cn := h.mgrs[2].CN(); cn != before {
		t.Fatalf("restarted node at cn %d after a message stamped %d", cn, before)
	}
	if st := h.mgrs[2].Stats(); st.Forced != 1 {
		t.Fatalf("restarted node took %d forced checkpoints, want 1", st.Forced)
	}
	s := h.gather(1)
	cp := nodeCP(t, s, 2)
	if cp.CN < s.CN {
		t.Fatalf("n2's checkpoint %d is below the cut %d", cp.CN, s.CN)
	}
}
