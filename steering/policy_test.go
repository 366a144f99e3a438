package steering

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// The install policy, driven through Round.Done and Tick as both shells
// drive it: a round's replayed paths' filters join those in force at once;
// at the round's end a completed round's filters replace them, a
// cancelled or failed round's replayed ones do; a newer round supersedes
// an older one whose end has not come; mode Debug installs nothing.
func TestLayerInstallPolicy(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	old := Filter{Kind: FilterTimer, Node: 9, Timer: "old"}
	replayed := Filter{Kind: FilterTimer, Node: 9, Timer: "replayed"}
	fresh := Filter{Kind: FilterTimer, Node: 9, Timer: "fresh"}
	t0 := time.Unix(100, 0)
	rep := func() *RoundReport {
		return &RoundReport{CN: 3, Installed: []Filter{replayed, fresh}, Reinstalled: []Filter{replayed}}
	}
	hand := func(l *Layer, cancel bool, err error, cost time.Duration) {
		r := &Round{l: l, snap: &snapshot.Snapshot{At: t0}, rep: rep(), cancel: cancel, err: err}
		r.Done(t0.Add(cost), cost)
	}
	for _, c := range []struct {
		name      string
		mode      Mode
		cancel    bool
		err       error
		atOnce    []Filter // in force right after the round is handed back
		atTheEnd  []Filter // once its end has come
		completed bool
	}{
		{"completed", Steer, false, nil, []Filter{old, replayed}, []Filter{replayed, fresh}, true},
		{"cancelled", Steer, true, nil, []Filter{old, replayed}, []Filter{replayed}, false},
		{"failed", Steer, false, errors.New("boom"), []Filter{old, replayed}, []Filter{replayed}, false},
		{"debug", Debug, false, nil, []Filter{old}, []Filter{old}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			core, _, _ := BeforeUpdateSibling(t, spec)
			var installs []bool
			cfg := LayerConfig{Controller: Config{Mode: c.mode, Spec: spec},
				OnInstall: func(_ []Filter, _ uint64, completed bool) { installs = append(installs, completed) }}
			l, _ := newTestLive(t, cfg, core)
			l.gate.Install([]Filter{old})
			hand(l, c.cancel, c.err, time.Second)
			if at := l.NextTick(); !at.Equal(t0) {
				t.Fatalf("NextTick %v, want the snapshot's time %v", at, t0)
			}
			l.Tick(t0)
			if got := l.Filters(); !slices.Equal(got, c.atOnce) {
				t.Fatalf("at once: %v, want %v", got, c.atOnce)
			}
			if at := l.NextTick(); c.mode == Steer && !at.Equal(t0.Add(time.Second)) {
				t.Fatalf("NextTick %v, want the round's end", at)
			}
			l.Tick(t0.Add(time.Second))
			if got := l.Filters(); !slices.Equal(got, c.atTheEnd) {
				t.Fatalf("at the end: %v, want %v", got, c.atTheEnd)
			}
			if c.mode == Steer && !slices.Equal(installs, []bool{c.completed}) {
				t.Fatalf("OnInstall saw %v", installs)
			}
			if !l.NextTick().IsZero() {
				t.Fatal("a round is still pending")
			}
		})
	}

	// A newer round supersedes one whose end has not come.
	core, _, _ := BeforeUpdateSibling(t, spec)
	l, _ := newTestLive(t, LayerConfig{Controller: Config{Mode: Steer, Spec: spec}}, core)
	hand(l, false, nil, 10*time.Second)
	l.Tick(t0)
	r := &Round{l: l, snap: &snapshot.Snapshot{At: t0.Add(time.Second)}, rep: &RoundReport{}}
	r.Done(t0.Add(2*time.Second), time.Second)
	l.Tick(t0.Add(2 * time.Second))
	if got := l.Filters(); len(got) != 0 || !l.NextTick().IsZero() {
		t.Fatalf("after the newer, empty round: %v in force, next tick %v", got, l.NextTick())
	}
}
