package bullet

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

func TestCloneIsIndependent(t *testing.T) {
	orig := midDownload(128, 3)
	orig.Members, orig.PushTargets = []node.ID{2, 3}, []node.ID{2}
	want := orig.String()
	c := orig.Clone().(*State)
	if c.String() != want || c.opts != orig.opts {
		t.Fatalf("clone differs: %v", c)
	}
	set(c.Have, 1)
	set(c.Senders[0].View, 0)
	set(c.Receivers[2].Shadow, 127)
	set(c.Receivers[1].Told, 3)
	c.Senders[1].Asked[0] = 99
	c.Known[0], c.Members[0], c.PushTargets[0] = 77, 77, 77
	c.Senders[0].Received++
	c.Receivers[0].Sent++
	if got := orig.String(); got != want {
		t.Fatalf("original changed by mutating its clone:\n got %s\nwant %s", got, want)
	}
	empty := newState(DefaultOptions(), nil).Clone().(*State)
	if empty.Have != nil || empty.Senders != nil || empty.Receivers != nil || empty.Known != nil {
		t.Fatalf("clone of an idle node must keep its nil fields: %#v", empty)
	}
}

// TestCheckpointRoundTrip also measures checkpoint size: a node halfway
// through the paper's 20 MB download (1280 blocks) with six senders and
// six receivers checkpoints in under 3 kB uncompressed (the paper's
// compressed Bullet′ checkpoints were about 3 kB).
func TestCheckpointRoundTrip(t *testing.T) {
	spec := NewSpec(DefaultOptions())
	st := benchState(DefaultBlocks, 6)
	back, cp := servicetest.CheckpointRoundTrip(t, spec, st)
	if back.Service.(*State).opts != DefaultOptions() || len(back.Service.(*State).payload) != DefaultBlockSize {
		t.Fatalf("decoded state lost the factory's configuration")
	}
	t.Logf("checkpoint of a node mid-download (1280 blocks, 6 senders, 6 receivers): %d bytes", len(cp))
	if len(cp) > 3072 {
		t.Errorf("checkpoint of %d bytes, want under 3 kB", len(cp))
	}
}

// TestEncodeMsgpackMatchesReflection holds the hand-written encoder to the
// layout reflection derives from State's fields and tags, which is what the
// decoder reads: a field added to State without EncodeMsgpack fails here.
func TestEncodeMsgpackMatchesReflection(t *testing.T) {
	type plainState State // same fields and tags, no EncodeMsgpack
	big := midDownload(DefaultBlocks, 6)
	big.Members, big.PushTargets, big.NextPush, big.Completed = []node.ID{2, 1 << 40}, []node.ID{2}, 300, -5
	empty := midDownload(64, 0)
	empty.Senders, empty.Receivers = []SenderLink{}, []ReceiverLink{}
	for _, s := range []*State{newState(DefaultOptions(), nil), midDownload(64, 2), big, empty} {
		servicetest.EncodingMatchesReflection(t, s, (*plainState)(s))
	}
}

func TestOptions(t *testing.T) {
	var o Options
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.withDefaults() != DefaultOptions() {
		t.Fatalf("zero options = %+v, want the defaults", o.withDefaults())
	}
	for _, bad := range []Options{{Blocks: -1}, {BlockSize: -1}, {MaxSenders: -2}, {MaxReceivers: -1},
		{MaxOutstanding: -1}, {PushFanout: -1}, {SampleSize: -1}, {DiffInterval: -1}, {PeerInterval: -1},
		{Blocks: MaxBlocks + 1}, {BlockSize: MaxBlockSize + 1}} {
		if err := bad.Validate(); err == nil || !strings.HasPrefix(err.Error(), "bullet: ") {
			t.Errorf("Validate(%+v) = %v", bad, err)
		}
		if d := bad.withDefaults(); d.Validate() != nil {
			t.Errorf("withDefaults(%+v) still invalid", bad)
		}
	}
	if err := o.EnableFix("fix-keep-shadow"); err != nil || !o.FixKeepShadow {
		t.Fatalf("EnableFix: %v %+v", err, o)
	}
	if err := o.EnableFix("nope"); err == nil || !strings.HasPrefix(err.Error(), "bullet: unknown fix") {
		t.Errorf("EnableFix(nope) = %v", err)
	}
	var all Options
	if err := all.EnableFix("all"); err != nil || all != (Options{}).Fixed() {
		t.Errorf("EnableFix(all) = %v, %+v", err, all)
	}
	want := "blocks=1280x16384 senders=6 receivers=6 outstanding=5 fanout=5 sample=6 discover=5s peer=1s diff=250ms push=150ms fixes=[keep-shadow]"
	if got := AllFixes().String(); got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// TestRandomRuns drives five nodes through random schedules on the nodetest
// harness — deliveries, timers, and refusals of every refusable message the
// harness allows — and checks FileMapViewConsistent after every step: the
// correction never violates it, and the paper's code does in some run.
// The seeds are printed; a failing one replays exactly.
func TestRandomRuns(t *testing.T) {
	buggyViolations := 0
	for seed := uint64(1); seed <= 20; seed++ {
		for _, fix := range []bool{false, true} {
			v := randomRun(t, seed, fix)
			if fix && v != "" {
				t.Fatalf("seed=%d: with keep-shadow: %s", seed, v)
			}
			if !fix && v != "" {
				buggyViolations++
			}
		}
	}
	t.Logf("the paper's code violated %s in %d of 20 runs", FileMapViewConsistent, buggyViolations)
	if buggyViolations == 0 {
		t.Errorf("the paper's code never violated %s in 20 random runs with refusals", FileMapViewConsistent)
	}
}

// randomRun runs 600 random steps and returns the first violation of
// FileMapViewConsistent, or "".
func randomRun(t *testing.T, seed uint64, fix bool) string {
	t.Helper()
	h, err := nodetest.New(harnessConfig())
	if err != nil {
		t.Fatal(err)
	}
	opts := "options blocks=16 max-senders=2 max-receivers=2 push-fanout=2 sample-size=2 seed=" + fmt.Sprint(seed)
	if fix {
		opts += " fix-keep-shadow"
	}
	setup := []string{opts, "start n1 n2 n3 n4 n5", "app n1 download n1"}
	for id := 2; id <= 5; id++ {
		setup = append(setup, fmt.Sprintf("app n%d download n1", id))
	}
	for _, line := range setup {
		if _, err := h.Exec(line); err != nil {
			t.Fatalf("seed=%d: %s: %v", seed, line, err)
		}
	}
	r := rand.New(rand.NewPCG(seed, 99))
	timers := []string{TimerDiscover, TimerPeer, TimerDiff, TimerDiff, TimerPush, TimerPush}
	for step := range 600 {
		line := randomLine(h, r, timers)
		if _, err := h.Exec(line); err != nil && !strings.HasPrefix(line, "refuse") {
			t.Fatalf("seed=%d step %d: %s: %v", seed, step, line, err)
		}
		if err := checkFileMapViewConsistent(h); err != nil {
			return fmt.Sprintf("step %d (%s): %v", step, line, err)
		}
	}
	return ""
}

// randomLine picks the next command: mostly a delivery, sometimes a timer,
// and a refusal of a refusable message when there is one (the harness
// refuses it only if the sender's latest event sent it).
func randomLine(h *nodetest.Harness, r *rand.Rand, timers []string) string {
	pending := h.Pending()
	var refusable []int // indices into pending
	for i, e := range pending {
		if e.Refusable {
			refusable = append(refusable, i)
		}
	}
	switch x := r.IntN(10); {
	case x == 0 && len(refusable) > 0:
		i := refusable[r.IntN(len(refusable))]
		e, n := pending[i], 0
		for _, p := range pending[:i+1] {
			if p.From == e.From && p.To == e.To {
				n++
			}
		}
		return fmt.Sprintf("refuse %v %v %d", e.To, e.From, n)
	case x < 7 && len(pending) > 0:
		e := pending[r.IntN(len(pending))]
		return fmt.Sprintf("deliver %v %v", e.To, e.From)
	}
	return fmt.Sprintf("fire n%d %s", 1+r.IntN(5), timers[r.IntN(len(timers))])
}
