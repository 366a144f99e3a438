package live

import (
	"encoding/json"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"

	"go.uber.org/zap"
)

// TestCheckpointNumberWalkIsBounded: one forged ID sends 2,000 notes
// stamped k·2^20 (each jump within the window of the last, the audit's
// walk). n1 moves by at most a window per Interval, takes a handful of
// forced checkpoints, and its next gather still holds n2. main moved n1
// to 2^31 (2,000 forced checkpoints here; the audit: 2^37 in 1.6 s),
// beyond n2's window, and its gathers failed until it restarted.
func TestCheckpointNumberWalkIsBounded(t *testing.T) {
	defer livetest.VerifyNone(t)
	cfg := snapshot.Config{Interval: time.Hour, GatherConfig: snapshot.GatherConfig{GatherTimeout: 3 * time.Second}}
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

// forgedMembers returns n member IDs nobody runs from 10,000+from,
// ascending, with the given IDs among them.
func forgedMembers(n, from int, with ...node.ID) []node.ID {
	ids := slices.Clone(with)
	for i := range n {
		ids = append(ids, node.ID(10_000+from+i))
	}
	slices.Sort(ids)
	return ids
}

// TestForgedMembersCauseNoDials: a stranger's snapshot Requests, each
// naming 1,000 members nobody runs, make n1 dial none of them: it sends
// Markers only to peers it knows (the directory's), and dials to IDs
// without an address are capped anyway. main dialled every one (20
// frames of 8 KB: 20,025 goroutines and 267 MB; MaxPendingAnswers did not
// stop it) and logged a line for each.
func TestForgedMembersCauseNoDials(t *testing.T) {
	defer livetest.VerifyNone(t)
	logs, obs := observedLogger()
	n1, _ := snapNode(t, 1, snapshot.Config{Interval: time.Hour}, func(c *RuntimeConfig) { c.Logger = logs })
	defer stopNodes(t, n1)
	h := dialHostile(t, n1.Addr(), 60, "127.0.0.1:1")
	base := runtime.NumGoroutine()
	for i := range 20 {
		req := snapshot.Request{Gather: uint64(i + 1), CR: 1, Members: forgedMembers(1000, 1000*i, 1, 60)}
		if !h.send(node.Envelope{To: 1, CN: 1, Msg: req}) {
			t.Fatalf("n1 closed the connection after %d requests", i)
		}
	}
	waitFor(t, "n1 to handle the requests", func() bool {
		return n1.Status().Counters.MessagesIn >= 20
	})
	time.Sleep(200 * time.Millisecond) // let any dial start
	g := runtime.NumGoroutine()
	c := n1.Status().Counters
	if g > base+100 || c.ConnsDialed+c.DialFailures > 50 {
		t.Fatalf("20 requests naming 1,000 forged members each: %d goroutines (%d before), %d dials, %d dial failures",
			g, base, c.ConnsDialed, c.DialFailures)
	}
	if n := obs.Len(); n > 200 {
		t.Fatalf("the requests logged %d lines", n)
	}
	t.Logf("%d goroutines (%d before), %d dials, %d log lines", g, base, c.ConnsDialed+c.DialFailures, obs.Len())
}

// TestDialsToUnknownPeersAreCapped: a service sending to 500 IDs nobody
// runs (a RandTree node forwarding forged joins) keeps at most 64
// connections waiting for an address; the rest fail at once, as
// transport errors, and cost no goroutine.
func TestDialsToUnknownPeersAreCapped(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Transport.DialTimeout = 2 * time.Second })
	defer stopNodes(t, n1)
	base := runtime.NumGoroutine()
	for i := range 500 {
		if err := n1.Submit(sendNote{To: node.ID(20_000 + i), Text: "x"}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the sends to be refused", func() bool { return n1.Status().Counters.DialsRefused >= 500-maxUnresolvedDials })
	g := runtime.NumGoroutine()
	if g > base+3*maxUnresolvedDials {
		t.Fatalf("%d goroutines after 500 sends to unknown peers (%d before)", g, base)
	}
	t.Logf("%d goroutines (%d before), %d sends refused", g, base, n1.Status().Counters.DialsRefused)
	waitFor(t, "the service to hear of the refusals", func() bool { return len(noteState(t, n1).Broken) >= 500-maxUnresolvedDials })
}

// TestGarbageCheckpointExcludesItsMember: a proved member (n2) answering
// n1's gathers with bytes that are no checkpoint, under a correct hash,
// is left out of n1's snapshot as malformed (with n3, which answers
// honestly, in it), and n1's steering rounds go on without errors. main took the bytes in: every later round failed
// ("bad checkpoint: missing header") while the member stayed.
func TestGarbageCheckpointExcludesItsMember(t *testing.T) {
	defer livetest.VerifyNone(t)
	reg, err := node.NewRegistry(noteSpec().Messages...)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := snapshot.NewLayer(snapshot.Config{Registry: reg, Interval: time.Hour}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steer, err := steering.NewLayer(steering.LayerConfig{Controller: steering.Config{Mode: steering.Debug, Spec: noteSpec(), SearchBudget: steering.SearchBudget{MaxStates: 100}},
		Runner: NewRoundRunner()}, snaps)
	if err != nil {
		t.Fatal(err)
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []layer.Layer{snaps, steer} })
	garbage := func([]byte) []byte { return []byte("random bytes, no checkpoint") }
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []layer.Layer{&liarLayer{answer: garbage}} }, n1.Addr())
	n3, _ := snapNode(t, 3, snapshot.Config{Interval: time.Hour}, nil, n1.Addr())
	defer stopNodes(t, n3, n2, n1)
	for _, n := range []*Runtime{n2, n3} {
		if err := n.Submit(sendNote{To: 1, Text: "hi"}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "n1 to hear the others", gotNote(t, n1, n.ID().String()+":hi"))
	}
	for i := range 2 {
		s := gatherOnce(t, n1, snaps)
		if s == nil {
			t.Fatalf("gather %d failed: %+v", i, snaps.Status(time.Now()).LastFailure)
		}
		if slices.Contains(snapNodes(s), 2) || len(s.Excluded) != 1 || s.Excluded[0].Node != 2 {
			t.Fatalf("gather %d: nodes %v excluded %v; want n2 left out", i, snapNodes(s), s.Excluded)
		}
	}
	waitFor(t, "n1's rounds", func() bool { return steer.Status().Rounds >= 1 })
	if st := steer.Status(); st.RoundErrors != 0 {
		t.Fatalf("n1's steering: %d round errors", st.RoundErrors)
	}
	t.Logf("n2 left out: %q", snaps.Last().Excluded[0].Reason)
}

// TestPeerStringsAreBounded: 16 steering requests whose property and
// filter names are about 1 MB each are refused as malformed without being
// echoed: the steering status stays small, and so do the node's log and
// its answers. main kept and showed them whole (the audit's /status grew
// from 4.4 KB to 7.7 MB, the log by 6.7 MB).
func TestPeerStringsAreBounded(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) }) // after the listener's cleanup
	logs, obs := observedLogger()
	steer, err := steering.NewLayer(steering.LayerConfig{Controller: steering.Config{Mode: steering.Debug, Spec: noteSpec(), SearchBudget: steering.SearchBudget{MaxStates: 10}},
		Runner: NewRoundRunner()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	n1 := startNoteNodeWith(t, 1, logs, func(c *RuntimeConfig) {
		c.Layers = []layer.Layer{steer}
		c.Transport.MaxFrameSize = 2 << 20
	})
	defer stopNodes(t, n1)
	h := dialHostile(t, n1.Addr(), 60, hostileListener(t, 60))
	huge := strings.Repeat("\x1b[2J", 80<<10) // 320 KiB of terminal escapes, thrice a request
	for i := range 16 {
		req := steering.Request{ID: uint64(i), Property: huge, Kind: "safety",
			Filter: steering.Filter{Kind: steering.FilterTimer, Node: 1, Timer: huge}, Path: []consequence.ActionRecord{{Kind: "timer", Node: 1, Timer: huge}}}
		if !h.send(node.Envelope{To: 1, Msg: req}) {
			t.Fatalf("n1 closed the connection after %d requests", i)
		}
	}
	waitFor(t, "n1 to refuse the requests", func() bool { return steer.Status().RequestsRefused() == 16 })
	b, err := json.Marshal(steer.Status())
	if err != nil {
		t.Fatal(err)
	}
	logged := 0
	for _, e := range obs.All() {
		logged += len(e.Message)
		for _, f := range e.Context {
			logged += len(f.String)
		}
	}
	if len(b) > 64<<10 || logged > 64<<10 {
		t.Fatalf("after 16 requests of 1 MiB names: the steering status is %d bytes, the log %d", len(b), logged)
	}
	if strings.Contains(string(b), "\x1b") {
		t.Fatal("the status shows the peer's terminal escapes")
	}
	t.Logf("the steering status is %d bytes, the log %d", len(b), logged)
}

// TestUnconfirmedConnectionsGiveWay: every inbound slot held by
// connections whose hellos claim IDs nobody confirmed (the audit: 1,022
// of 1,024, from nine loopback addresses) does not keep a new node from
// joining: its connections evict the oldest of them. main refused them,
// and the joiner's Start failed.
func TestUnconfirmedConnectionsGiveWay(t *testing.T) {
	defer livetest.VerifyNone(t)
	const slots = 16
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Limits.MaxInboundConns = slots })
	defer stopNodes(t, n1)
	for i := range slots {
		if _, err := spoofHello(t, n1.Addr(), node.ID(100+i), "127.0.0.1:1"); err != nil {
			t.Fatalf("hostile connection %d: %v", i, err)
		}
	}
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), func(c *RuntimeConfig) { c.JoinTimeout = 5 * time.Second }, n1.Addr())
	defer stopNodes(t, n2)
	if err := n2.Submit(sendNote{To: 1, Text: "in"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to hear the newcomer", gotNote(t, n1, "n2:in"))
	c := n1.Status().Counters
	if c.ConnsEvicted == 0 {
		t.Fatalf("counters %+v: want unconfirmed connections evicted", c)
	}
	t.Logf("%d unconfirmed connections evicted", c.ConnsEvicted)
}

// TestDirectoryBoundsUnconfirmedIDs: hellos claiming more IDs than the
// directory keeps unconfirmed leave it at its bound, the entries that
// expire first gone, and confirmed entries untouched.
func TestDirectoryBoundsUnconfirmedIDs(t *testing.T) {
	d := newDirectory()
	d.setMaxUnconfirmed(10)
	d.learn(1, "127.0.0.1:1", "")
	for i := range 100 {
		d.learnHello(node.ID(100+i), "127.0.0.1:2", "")
	}
	if n := len(d.list()); n != 11 {
		t.Fatalf("%d peers after 100 claimed IDs, want 10 and n1", n)
	}
	if _, ok := d.confirmed(1); !ok || !d.knows(199) || d.knows(100) {
		t.Fatalf("confirmed n1 %v, newest claim %v, oldest claim %v", d.knows(1), d.knows(199), d.knows(100))
	}
}
