package steering

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// TestLayerTimingHooks: OnImmediateCheck sees one duration per event the
// immediate check examined (not the retries), measured with the injected
// Clock, and OnRoundTime one per round, as the Runner measured it.
func TestLayerTimingHooks(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, ev, _ := BeforeUpdateSibling(t, spec)
	var checks, rounds []time.Duration
	tick := time.Unix(0, 0)
	clock := func() time.Time { tick = tick.Add(time.Millisecond); return tick }
	cfg := LayerConfig{Controller: figure2Config(Debug, spec), Immediate: true, Clock: clock,
		Runner:           &SyncRunner{CostPerState: time.Microsecond},
		OnImmediateCheck: func(d time.Duration) { checks = append(checks, d) },
		OnRoundTime:      func(d time.Duration) { rounds = append(rounds, d) }}
	l, h := newTestLive(t, cfg, core)
	l.Gathered(figure2(t, spec))
	awaitRound(t, l, h)
	st := l.Status()
	if len(rounds) != 1 || rounds[0] <= 0 || rounds[0].Seconds() != st.LastRoundSeconds {
		t.Fatalf("round durations %v, want one positive, equal to the status's %vs", rounds, st.LastRoundSeconds)
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
	st = l.Status()
	if uint64(len(checks)) != st.ImmediateChecks || len(checks) != 2 {
		t.Fatalf("%d check durations for %d immediate checks, want 2", len(checks), st.ImmediateChecks)
	}
	for _, d := range checks {
		if d != time.Millisecond {
			t.Errorf("check took %v on a clock that advances 1ms a read, want 1ms", d)
		}
	}
	l.Stop()
}
