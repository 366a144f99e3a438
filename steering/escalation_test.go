package steering

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// escalationLayer is n9's layer of Figure 2 in mode Steer with a budget
// of two interventions a minute, and the round-applying helper.
func escalationLayer(t *testing.T) (*Layer, func(fs []Filter, snapAt time.Time)) {
	t.Helper()
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	cfg := LayerConfig{Controller: figure2Config(Steer, spec)}
	cfg.Controller.MaxInterventions = 2
	cfg.Controller.InterventionWindow = time.Minute
	l, _ := newTestLive(t, cfg, core)
	apply := func(fs []Filter, snapAt time.Time) {
		rep := &RoundReport{Installed: fs, Members: []node.ID{9, 13}} // the filters' peer is seen
		l.apply(&pendingRound{round: &Round{l: l, snap: &snapshot.Snapshot{At: snapAt}, rep: rep}, ended: snapAt}, snapAt)
	}
	return l, apply
}

// A filter hit past its budget is escalated, not let through: the event is
// held (dropped: a message) while rounds on snapshots older than the
// escalation replace the filters (the escalated filter stays: not
// re-checked yet) and while fresh rounds re-install it (the re-check
// still finds it dangerous), with no bound in time; the first fresh round
// without it releases it. Every count is exact.
func TestEscalationHoldsUntilAFreshRoundRechecks(t *testing.T) {
	l, apply := escalationLayer(t)
	probe := Filter{Kind: FilterMessage, Node: 9, From: 13, Type: "randtree.Probe"}
	t0 := time.Unix(5000, 0)
	apply([]Filter{probe}, t0)
	at := func(s int) node.Event {
		return node.Event{Kind: node.EventMessage, From: 13, Msg: randtree.Probe{Root: 13}, At: t0.Add(time.Duration(s) * time.Second)}
	}
	gate := handledAt(t, l, at)
	want := func(hits, esc, held, released, overrides uint64) {
		t.Helper()
		st := l.Status()
		if st.FilterHits != hits || st.Escalations != esc || st.Held != held || st.Released != released || st.Overrides != overrides {
			t.Fatalf("hits %d escalations %d held %d released %d overrides %d, want %d %d %d %d %d",
				st.FilterHits, st.Escalations, st.Held, st.Released, st.Overrides, hits, esc, held, released, overrides)
		}
	}
	if gate(1) || gate(2) {
		t.Fatal("a Probe passed the filter within its budget")
	}
	want(2, 0, 0, 0, 0)
	if gate(3) || gate(4) {
		t.Fatal("a Probe passed when its budget was spent (the old override)")
	}
	want(4, 1, 2, 0, 0)
	// A round on a snapshot of 2 s, older than the escalation (3 s),
	// installs nothing: the escalated filter stays in force.
	apply(nil, t0.Add(2*time.Second))
	if got := l.Filters(); len(got) != 1 || got[0] != probe {
		t.Fatalf("filters after a stale round: %v, want the escalated %v", got, probe)
	}
	if gate(5) {
		t.Fatal("a stale round released the escalation")
	}
	want(5, 1, 3, 0, 0)
	// A fresh round (6 s) re-checks and still installs it: held.
	apply([]Filter{probe}, t0.Add(6*time.Second))
	if gate(7) {
		t.Fatal("a re-check that still finds the Probe dangerous released it")
	}
	want(6, 1, 4, 0, 0)
	// No bound in time: a fresh round at 30 s still installs it, and it
	// is held at 40 s, well past a 10 s bound in time.
	apply([]Filter{probe}, t0.Add(30*time.Second))
	if gate(40) {
		t.Fatal("the Probe ran 37 s after its escalation though every re-check found it dangerous")
	}
	want(7, 1, 5, 0, 0)
	// A fresh round without it: released, and the Probe runs.
	apply(nil, t0.Add(41*time.Second))
	if !gate(42) {
		t.Fatal("the Probe is still held after a fresh round found it safe")
	}
	want(7, 1, 5, 1, 0)
	if len(l.Filters()) != 0 {
		t.Fatalf("filters %v after the release", l.Filters())
	}
}

// With a bound in time (Config.FilterHold, 10 s
// here), a kind held for the whole hold (every fresh round
// re-installing its filter) runs for the next InterventionWindow, counted
// as overrides, and only then does the budget count again.
func TestEscalationTimesOutWithAFilterHold(t *testing.T) {
	l, apply := escalationLayer(t)
	l.gate.cfg.FilterHold = 10 * time.Second
	recovery := Filter{Kind: FilterTimer, Node: 9, Timer: "recovery"}
	t0 := time.Unix(5000, 0)
	apply([]Filter{recovery}, t0)
	gate := func(s int) bool {
		t.Helper()
		ev := node.Event{Kind: node.EventTimer, Timer: "recovery", Deadline: t0, At: t0.Add(time.Duration(s) * time.Second)}
		v, _, _ := l.Gate(ev.At, ev, nil, false)
		if !v.Handle && !v.RetryAt.Equal(ev.At.Add(DefaultPostponeDelay)) {
			t.Fatalf("verdict %+v, want a postponement", v)
		}
		return v.Handle
	}
	for _, s := range []int{1, 2, 3, 8, 12} { // escalated at 3 s
		if gate(s) {
			t.Fatalf("the timer ran at %d s, within its budget and escalation", s)
		}
		if s == 8 {
			apply([]Filter{recovery}, t0.Add(7*time.Second)) // a fresh round still finds it dangerous
		}
	}
	// Held since 3 s: at 13 s the hold (FilterHold) is over; the timer
	// runs until 73 s.
	for _, s := range []int{13, 40, 72} {
		if !gate(s) {
			t.Fatalf("the timer is still held at %d s, past its escalation's hold", s)
		}
	}
	st := l.Status()
	if st.Escalations != 1 || st.Held != 3 || st.Overrides != 3 || st.FilterHits != 5 {
		t.Fatalf("status %+v", st)
	}
	// The free window (13–73 s) is over: the budget counts again.
	if gate(73) {
		t.Fatal("the budget did not count again after the free window")
	}
}

// A veto's escalation holds until the check passes (the check vetoes the
// event itself on the newest view, at every retry): with no bound in time
// where a liveness guard watches the holds, for UnguardedVetoHold where
// none does, and for at most Config.VetoHold when that is set. n1's Raise
// (n3 up, in the view) is vetoed twice within the budget and escalated at
// 3 s; guarded it is still held an hour later; unguarded (mode Off: no
// rounds) it runs at 63 s, a minute later; with VetoHold 20 s at 23 s.
func TestEscalationOfAVetoHoldsUntilSafe(t *testing.T) {
	for _, c := range []struct {
		hold    time.Duration
		guarded bool
		checks  []int // seconds
		runs    bool  // the last check runs the event
	}{
		{0, true, []int{1, 2, 3, 30, 63, 3603}, false},
		{0, false, []int{1, 2, 3, 30, 62, 63}, true},
		{20 * time.Second, true, []int{1, 2, 3, 22, 23}, true},
	} {
		core := raiseCore(t, 1, false)
		cfg := LayerConfig{Controller: Config{Mode: Off, Spec: raiseSpec, EscalationPolicy: EscalationPolicy{MaxInterventions: 2, VetoHold: c.hold}}, Immediate: true}
		l, _ := newTestLive(t, cfg, core)
		l.gate.setGuarded(c.guarded)
		t0 := time.Unix(100, 0)
		l.Gathered(raiseSnapshot(t, t0, 1, 2, 3))
		for i, s := range c.checks {
			handled := c.runs && i == len(c.checks)-1
			ev := node.Event{Kind: node.EventApp, Msg: raise{}, At: t0.Add(time.Duration(s) * time.Second)}
			if v, _, _ := l.Gate(ev.At, ev, nil, false); v.Handle != handled {
				t.Fatalf("hold %v: at %d s: verdict %v, want handled=%v", c.hold, s, v, handled)
			}
		}
		vetoes, held, overrides := uint64(len(c.checks)), uint64(len(c.checks)-2), uint64(0)
		if c.runs {
			vetoes, held, overrides = vetoes-1, held-1, 1
		}
		st := l.Status()
		if st.Vetoes != vetoes || st.Escalations != 1 || st.Held != held || st.Overrides != overrides {
			t.Fatalf("hold %v: vetoes %d escalations %d held %d overrides %d, want %d 1 %d %d", c.hold, st.Vetoes, st.Escalations, st.Held, st.Overrides, vetoes, held, overrides)
		}
	}
}

// TestUnseenFilterOutlivesBlindRounds: a completed round replaces the
// filters on events it could see, but one on a peer outside its snapshot
// (a restarted node's first rounds see only itself) stays for
// Config.UnseenHold after a round first kept it, or until a round that
// holds the peer re-checks it; with UnseenHold negative the next round
// lifts it.
func TestUnseenFilterOutlivesBlindRounds(t *testing.T) {
	probe := Filter{Kind: FilterMessage, Node: 9, From: 13, Type: "randtree.Probe"}
	t0 := time.Unix(5000, 0)
	for _, tc := range []struct {
		name   string
		unseen time.Duration
		// kept after a blind round at 1 s, at 50 s, at 70 s
		want [3]bool
	}{
		{"default", 0, [3]bool{true, true, false}},
		{"10s", 10 * time.Second, [3]bool{true, false, false}},
		{"off", -1, [3]bool{false, false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := randtree.NewSpec(randtree.DefaultOptions())
			core, _, _ := BeforeUpdateSibling(t, spec)
			cfg := LayerConfig{Controller: figure2Config(Steer, spec)}
			cfg.Controller.UnseenHold = tc.unseen
			l, _ := newTestLive(t, cfg, core)
			round := func(fs []Filter, at time.Time, members ...node.ID) {
				rep := &RoundReport{Installed: fs, Members: members}
				l.apply(&pendingRound{round: &Round{l: l, snap: &snapshot.Snapshot{At: at}, rep: rep}, ended: at}, at)
			}
			round([]Filter{probe}, t0, 9, 13)
			for i, s := range []int{1, 50, 70} {
				round(nil, t0.Add(time.Duration(s)*time.Second), 9)
				if got := slices.Contains(l.Filters(), probe); got != tc.want[i] {
					t.Fatalf("after a round without n13 at %d s: filter in force %v, want %v", s, got, tc.want[i])
				}
			}
			// A round that sees n13 judges the filter: lifted at once.
			round([]Filter{probe}, t0.Add(80*time.Second), 9, 13)
			round(nil, t0.Add(81*time.Second), 9, 13)
			if len(l.Filters()) != 0 {
				t.Fatalf("filters %v after a round that saw n13 found nothing", l.Filters())
			}
		})
	}
}
