package steering

import (
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// TestLiveTimingHooks: OnImmediateCheck sees one duration per event the
// immediate check examined (not the retries), and OnRoundTime one per
// round, as it ends.
func TestLiveTimingHooks(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, ev := n9BeforeUpdateSibling(t, spec)
	var checks, rounds []time.Duration
	cfg := LiveConfig{Controller: figure2Config(Debug, spec), Immediate: true,
		OnImmediateCheck: func(d time.Duration) { checks = append(checks, d) },
		OnRoundTime:      func(d time.Duration) { rounds = append(rounds, d) }}
	l, h := newTestLive(t, cfg, core)
	l.gathered(figure2(t, spec))
	awaitRound(t, l, h) // the round's hook ran before it woke the host
	if len(rounds) != 1 || rounds[0] <= 0 {
		t.Fatalf("round durations %v, want one positive", rounds)
	}
	probe := node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: ev.At}
	for _, e := range []node.Event{ev, probe} {
		if _, _, err := l.Gate(ev.At, e, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := l.Gate(ev.At, ev, nil, true); err != nil {
		t.Fatal(err)
	}
	st := l.Status()
	if uint64(len(checks)) != st.ImmediateChecks || len(checks) != 2 {
		t.Fatalf("%d check durations for %d immediate checks, want 2", len(checks), st.ImmediateChecks)
	}
	l.Stop()
}
