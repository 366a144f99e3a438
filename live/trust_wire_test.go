package live

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// TestCheckpointNumberWalkIsBounded: one forged ID sends 2,000 notes
// stamped k·2^20 (each jump within the window of the last, the audit's
// walk). n1 moves by at most a window per Interval, takes a handful of
// forced checkpoints, and its next gather still holds n2. main moved n1
// to 2^31 (2,000 forced checkpoints here; the audit: 2^37 in 1.6 s),
// beyond n2's window, and its gathers failed until it restarted.
func TestCheckpointNumberWalkIsBounded(t *testing.T) {
	defer livetest.VerifyNone(t)
	cfg := snapshot.Config{Interval: time.Hour, GatherTimeout: 3 * time.Second}
	n1, sl := snapNode(t, 1, cfg, nil)
	n2, _ := snapNode(t, 2, cfg, nil, n1.Addr())
	defer stopNodes(t, n2, n1)
	if err := n1.Submit(sendNote{To: 2, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to hear n1", gotNote(t, n2, "n1:hello"))
	h := dialHostile(t, n1.Addr(), 50, "127.0.0.1:1")
	const w = snapshot.DefaultCNWindow
	for k := range uint64(2000) {
		if !h.send(node.Envelope{To: 1, CN: (k + 1) * w, Msg: note{Text: "walk"}}) {
			t.Fatalf("n1 closed the walker's connection after %d frames", k)
		}
	}
	waitFor(t, "n1 to handle the walk", func() bool {
		return len(noteState(t, n1).Got) >= 2000
	})
	st := sl.Status(time.Now()).Stats
	if st.CN > 2*w || st.Forced > 10 {
		t.Fatalf("the walk moved n1 to %d (%d forced checkpoints); want at most %d", st.CN, st.Forced, 2*w)
	}
	s := gatherOnce(t, n1, sl)
	if s == nil {
		t.Fatalf("n1's gather after the walk failed: %+v", sl.Status(time.Now()).LastFailure)
	}
	if !slices.Contains(snapNodes(s), 2) {
		t.Fatalf("n1's gather after the walk: nodes %v dead %v excluded %v; want n2 in it", snapNodes(s), s.Dead, s.Excluded)
	}
	t.Logf("n1 at %d after the walk: %d forced checkpoints, %d numbers limited; its gather rebased %d times, cut %d",
		st.CN, st.Forced, st.CNLimited, sl.Status(time.Now()).Stats.Rebased, s.CN)
}
