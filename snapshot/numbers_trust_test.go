package snapshot_test

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// onlyNegative returns the one Negative among sends, if that is all they
// are.
func onlyNegative(sends []node.Envelope) (snapshot.Negative, bool) {
	if len(sends) != 1 {
		return snapshot.Negative{}, false
	}
	n, ok := sends[0].Msg.(snapshot.Negative)
	return n, ok
}

// One peer sending window after window, each within the window of the
// last (the audit's k·2^20), moves the node by at most a window per
// Interval: the rest is handled at the limit (Stats.CNLimited) and forces
// no checkpoint. main adopted every one: 194,454 forced checkpoints and a
// number of 2^37 in 1.6 s.
func TestNumbersAreRateLimited(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, LimitsConfig: snapshot.LimitsConfig{CNWindow: 100}}
	})
	for k := range uint64(1000) {
		h.mgrs[1].Deliver(h.now, node.Envelope{From: hostile, To: 1, CN: 100 * (k + 1), Msg: ping{}})
	}
	st := h.mgrs[1].Stats()
	if st.CN != 100 || st.Forced != 1 || st.CNLimited == 0 {
		t.Fatalf("after 1,000 in-window jumps at one instant: %+v; want cn 100, one forced checkpoint", st)
	}
	h.full(2) // n2 adopts n1's number within its window, and both still gather
	h.full(1)
	// Half an Interval later, half a window more.
	h.now = h.now.Add(500 * time.Millisecond)
	before := h.mgrs[1].CN()
	h.mgrs[1].Deliver(h.now, node.Envelope{From: hostile, To: 1, CN: before + 100, Msg: ping{}})
	if cn := h.mgrs[1].CN(); cn != before+50 {
		t.Fatalf("cn %d half an interval later, want %d", cn, before+50)
	}
	h.now = h.now.Add(time.Second) // n2's limit on n1's numbers refills
	h.full(1)
}

// A node pushed more than a window ahead of its members (while they did
// not hear from it) finds every member refusing its cut (ReasonWindow)
// and rebases to their numbering, and its next gather holds them all.
// Their channels from it start over (Stats.CNWentBack). main's node
// stayed refused: every gather failed until it restarted.
func TestRefusedNodeRebases(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, LimitsConfig: snapshot.LimitsConfig{CNWindow: 100}}
	})
	// The pusher has no witness (a forged ID): its numbers do not hold n1
	// up there.
	h.srcs[1].witness = func(p node.ID) (string, bool) { return p.String(), p != hostile }
	h.full(1)
	for range 5 { // five intervals, a window each
		h.now = h.now.Add(time.Second)
		h.mgrs[1].Deliver(h.now, node.Envelope{From: hostile, To: 1, CN: h.mgrs[1].CN() + 100, Msg: ping{}})
	}
	if cn := h.mgrs[1].CN(); cn < 400 {
		t.Fatalf("n1 at %d, want it pushed past its members' windows", cn)
	}
	s := h.gather(1)
	if len(s.Nodes) != 3 {
		t.Fatalf("the gather after the push: nodes %v, excluded %v, dead %v; want all three", s.Nodes, s.Excluded, s.Dead)
	}
	st := h.mgrs[1].Stats()
	if st.Rebased != 1 || st.CN > 100 {
		t.Fatalf("n1's stats %+v; want one rebase to the members' numbering", st)
	}
	h.full(2)
	h.full(3)
	h.full(1)
}

// A member no witness vouches for (live without TLS: an ID only a hello
// claims) is left out of the gather without a Request: a forged child
// would otherwise answer with whatever state it likes and steer its
// parent. main asked it and took its answer in.
func TestUnvouchedMemberIsLeftOut(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, defaults)
	h.srcs[1].witness = func(p node.ID) (string, bool) { return p.String(), p != 3 }
	s := h.gather(1)
	if len(s.Nodes) != 2 || len(s.Excluded) != 1 || s.Excluded[0].Node != 3 || s.Excluded[0].Reason != snapshot.ReasonUnvouched {
		t.Fatalf("nodes %d, excluded %+v; want n3 left out as unvouched", len(s.Nodes), s.Excluded)
	}
	if n := h.mgrs[3].Stats().Requests; n != 0 {
		t.Fatalf("n3 was asked %d times", n)
	}
}
