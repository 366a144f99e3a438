package steering

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// The durable record round-trips: a layer that predicted Figure 2 (its
// filter in force, its path stored) and holds an escalated kind restores,
// in a fresh layer of the same node, the same filters, the same held kind
// and the path, which the fresh layer's first round replays and whose
// filter it reinstalls. Asking again without a change reports none. The
// fresh layer's gathers take in the peer of a restored filter that is no
// neighbour (includeFiltered).
func TestDurableStateRoundTrip(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	cfg := LayerConfig{Controller: figure2Config(Steer, spec)}
	cfg.Controller.MaxInterventions = 1
	l, h := newTestLive(t, cfg, core)
	snap := figure2(t, spec)
	l.Gathered(snap)
	awaitRound(t, l, h)
	filters := l.Filters()
	if len(filters) == 0 {
		t.Fatal("the Figure 2 round installed no filter")
	}
	probe := node.Event{Kind: node.EventTimer, Timer: "probe", At: snap.At.Add(time.Second)}
	// n99 is no neighbour of n9's: a filter on its messages stands for
	// one a previous incarnation installed about a peer the restarted
	// node has forgotten.
	stranger := Filter{Kind: FilterMessage, Node: 9, From: 99, Type: "randtree.Join"}
	l.gate.Install(append(l.gate.Filters(), Filter{Kind: FilterTimer, Node: 9, Timer: "probe"}, stranger))
	// Figure 2's path resets n13, not n9, so its filter would die with
	// n9's reset (TestIncarnationFiltersDieWithIt); explain both filters as
	// a prediction that resets n9 would, to round-trip them.
	for _, f := range l.gate.Filters() {
		l.why[f] = Explanation{Source: "round", Reset: true}
	}
	for i := 0; i < 2; i++ { // the second is past the budget: escalated
		probe.At = probe.At.Add(time.Second)
		if v, _, _ := l.Gate(probe.At, probe, nil, false); v.Handle {
			t.Fatal("the probe timer ran through its filter")
		}
	}
	data, changed := l.DurableState()
	if !changed || !strings.Contains(string(data), DurableFormat) {
		t.Fatalf("durable state %q (changed %v)", data, changed)
	}
	if _, again := l.DurableState(); again {
		t.Fatal("a second DurableState without a change reports one")
	}

	fresh, fh := newTestLive(t, cfg, core)
	if err := fresh.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	if got, want := fresh.Filters(), l.Filters(); len(got) != len(want) || got[0] != want[0] {
		t.Fatalf("restored filters %v, want %v", got, want)
	}
	if held := fresh.gate.heldKinds().all(); len(held) != 1 || held[0].Timer != "probe" {
		t.Fatalf("restored holds %v, want the probe timer", held)
	}
	if v, _, _ := fresh.Gate(probe.At, probe, nil, false); v.Handle {
		t.Fatal("the restored hold let the probe timer run")
	}
	if _, changed := fresh.DurableState(); changed {
		t.Fatal("a restored layer reports a change before anything changed")
	}
	// The restarted node's gathers take in the peer its restored filter
	// drops, neighbour or not: its rounds must see what the filter does.
	if err := fresh.snaps.Attach(fh); err != nil {
		t.Fatal(err)
	}
	fresh.snaps.Start(snap.At)
	asked, err := fresh.snaps.Gather(snap.At)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(asked, func(e node.Envelope) bool { return e.To == stranger.From }) {
		t.Fatalf("the restarted node's gather asks %v, not n99 whose messages its restored filter %v drops", asked, stranger)
	}
	fresh.Gathered(snap)
	awaitRound(t, fresh, fh)
	if st := fresh.Stats(); st.ReplayHits == 0 {
		t.Fatalf("the first round after the restore replayed no stored path: %+v", st)
	}
	found := false
	for _, f := range fresh.Filters() {
		found = found || f == filters[0]
	}
	if !found {
		t.Fatalf("the first round did not reinstall %v: %v", filters[0], fresh.Filters())
	}
}

// A filter whose prediction does not reset the node it is installed at is
// about the node's current incarnation, and dies with it: Figure 2's
// filter at n9 (its path resets n13) and the hold of its kind are not in
// n9's durable record, and a restart brings neither back.
func TestIncarnationFiltersDieWithIt(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	cfg := LayerConfig{Controller: figure2Config(Steer, spec)}
	l, h := newTestLive(t, cfg, core)
	l.Gathered(figure2(t, spec))
	awaitRound(t, l, h)
	fs := l.Filters()
	if len(fs) == 0 {
		t.Fatal("the Figure 2 round installed no filter")
	}
	for _, r := range l.reasons() {
		if r.Why.Source != "round" || r.Why.Reset || !strings.Contains(strings.Join(r.Why.Path, "; "), "n13 reset") {
			t.Fatalf("filter %s explained %+v: want a round's prediction that resets n13 and not n9", r.Filter, r.Why)
		}
	}
	data, _ := l.DurableState()
	fresh, _ := newTestLive(t, cfg, core)
	if err := fresh.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	if got := fresh.Filters(); len(got) != 0 {
		t.Fatalf("restored %v from %s, want no filter: none predicts a reset of n9", got, data)
	}
}

// A record the node cannot have written is refused whole, and the layer
// keeps what it had.
func TestDurableStateRefusesForeignRecords(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	l, _ := newTestLive(t, LayerConfig{Controller: figure2Config(Steer, spec)}, core)
	for _, bad := range []string{
		"not json",
		`{"format": "something-else/1"}`,
		`{"format": "` + DurableFormat + `", "filters": [{"Kind": 1, "Node": 13, "From": 1, "Type": "x"}]}`,
		`{"format": "` + DurableFormat + `", "filters": [{"Kind": 9, "Node": 9}]}`,
		`{"format": "` + DurableFormat + `", "holds": [{"kind": 1, "since": "2026-01-01T00:00:00Z"}]}`,
		`{"format": "` + DurableFormat + `", "paths": [{"property": "p", "path": [], "checked": {"Kind": 1, "Node": 2}}]}`,
	} {
		if err := l.RestoreDurable([]byte(bad)); err == nil {
			t.Errorf("%s: restored", bad)
		}
	}
	if err := l.RestoreDurable([]byte(`{"format":"` + DurableFormat + `","filters":[` + strings.Repeat(`{"Kind":2,"Node":9,"Timer":"t"},`, maxDurableFilters) + `{"Kind":2,"Node":9,"Timer":"t"}]}`)); err == nil {
		t.Error("a record past the filter bound was restored")
	}
}

func FuzzDecodeDurable(f *testing.F) {
	f.Add([]byte(`{"format":"` + DurableFormat + `","filters":[{"Kind":1,"Node":9,"From":13,"Type":"randtree.Join"}],"holds":[{"kind":3,"name":"t","since":"2026-01-01T00:00:00Z"}],"paths":[{"property":"p","path":[{"kind":"timer","node":9,"timer":"t"}]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeDurable(data, 9)
		if err != nil {
			return
		}
		for _, fl := range st.Filters {
			if fl.Node != 9 {
				t.Fatalf("accepted a filter of %v", fl.Node)
			}
		}
	})
}

// What a node knew of its neighbours outlives its reset, and a snapshot of
// itself alone does not age it: n3's check, with n2 holding the lock in
// its view, vetoes the Grant that would make n3 a second holder — after a
// restart that restored the durable record, and after a first gather that
// reached nobody, five minutes on. Without the record the restarted node
// sees only itself and lets the Grant through; after a gather that did
// reach a node, the view ages as before (ImmediateMemory).
func TestCheckViewOutlivesTheReset(t *testing.T) {
	spec := grantSpec()
	before := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 3)
	later := func(ids ...node.ID) *snapshot.Snapshot {
		s := StartSnapshot(t, spec, ids, 3)
		s.At = before.At.Add(5 * time.Minute)
		return s
	}
	layer := func() *Layer {
		l, _ := grantLayer(t, 3, func(c *LayerConfig) {
			c.Controller.Mode = Off
			c.Immediate, c.ImmediateMemory = true, 30*time.Second
		})
		return l
	}
	vetoed := func(l *Layer) bool {
		t.Helper()
		ev := node.Event{Kind: node.EventMessage, From: 1, Msg: grantReply{}, At: before.At.Add(6 * time.Minute)}
		v, _, err := l.Gate(ev.At, ev, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		return !v.Handle
	}
	old := layer()
	old.Gathered(before)
	data, _ := old.DurableState()

	restored := layer()
	if err := restored.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	restored.Gathered(later(3))
	if !vetoed(restored) {
		t.Error("the restarted node let the second Grant through with n2's lock in its durable view")
	}
	blank := layer()
	blank.Gathered(later(3))
	if vetoed(blank) {
		t.Error("a node that knows nobody vetoed the Grant: the test proves nothing")
	}
	aged := layer()
	if err := aged.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	aged.Gathered(later(1, 3))
	if vetoed(aged) {
		t.Error("a gather that reached n1 five minutes on kept n2's old state past ImmediateMemory")
	}
}

// A restored path's filter is checked again, on the world the node
// returns to, and with the liveness guard (keepLive): n2's round installs
// "drop relay.Ping from n1" against NotPinged (a fresh filter meets the
// safety check alone), but n1 waits for the pong that only the ping
// brings. Read back after a restart, the path still replays and its
// filter still passes the safety check, but not the guard: the first
// round leaves it out (RoundReport.Starved).
func TestRestoredFilterMeetsTheLivenessGuard(t *testing.T) {
	spec := sideDoorSpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2}, 2)
	core := initedCore(t, spec, 2, snap.At)
	var rep *RoundReport
	cfg := LayerConfig{Controller: Config{Mode: Steer, Spec: spec, LivenessWalks: LivenessWalks{WalkOptions: WalkOptions{Walks: 8, DMax: 20}}},
		OnRound: func(_ *snapshot.Snapshot, r *RoundReport) { rep = r }}
	ping := Filter{Kind: FilterMessage, Node: 2, From: 1, Type: "relay.Ping", Break: true}
	l, h := newTestLive(t, cfg, core)
	l.Gathered(snap)
	awaitRound(t, l, h)
	if !slices.Contains(rep.Installed, ping) || len(rep.Starved) != 0 {
		t.Fatalf("the first incarnation's round installed %v (starved %v), want %v", rep.Installed, rep.Starved, ping)
	}
	for _, f := range l.gate.Filters() {
		l.why[f] = Explanation{Source: "round", Reset: true} // as if its path reset n2
	}
	data, _ := l.DurableState()

	fresh, fh := newTestLive(t, cfg, core)
	if err := fresh.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(fresh.Filters(), ping) {
		t.Fatalf("restored filters %v, want %v in force until a round judges it", fresh.Filters(), ping)
	}
	fresh.Gathered(snap)
	awaitRound(t, fresh, fh)
	if slices.Contains(rep.Installed, ping) || !slices.Contains(rep.Starved, ping) {
		t.Fatalf("the restarted node's round installed %v (starved %v), want %v refused by the liveness guard", rep.Installed, rep.Starved, ping)
	}
	if slices.Contains(fresh.Filters(), ping) {
		t.Fatalf("filters in force after the round: %v, want %v lifted", fresh.Filters(), ping)
	}
	if st := fresh.Stats(); st.StarvingFilters != 1 || st.ReplayHits == 0 {
		t.Fatalf("stats %+v: want one starving filter, from a replayed path", st)
	}
}

// A release does not outlive the reset: a kind whose hold the liveness
// guard released runs through its filter for a window, but the release
// was judged on the incarnation's world, not on the one after the reset
// the filter predicts. The durable record keeps the filter and not the
// released hold, so the restarted node's filter stops the kind again on a
// fresh budget (the zoo lease's grantor granted a second lease 1.3 s after
// its restart, its restored filter overridden by a release from before
// it). A record from before the rule, holding the release, restores
// without it.
func TestReleaseDoesNotOutliveTheReset(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	core, _, _ := BeforeUpdateSibling(t, spec)
	cfg := LayerConfig{Controller: figure2Config(Steer, spec)}
	cfg.Controller.MaxInterventions = 1
	l, _ := newTestLive(t, cfg, core)
	probe := node.Event{Kind: node.EventTimer, Timer: "probe", At: time.Unix(1000, 0)}
	f := Filter{Kind: FilterTimer, Node: 9, Timer: "probe"}
	l.gate.Install([]Filter{f})
	l.why = map[Filter]Explanation{f: {Source: "round", Reset: true}}
	for i := 0; i < 2; i++ { // the second is past the budget: held
		probe.At = probe.At.Add(time.Second)
		if v, _, _ := l.Gate(probe.At, probe, nil, false); v.Handle {
			t.Fatalf("probe %d ran through its filter", i)
		}
	}
	l.gate.releaseHolds(probe.At)
	probe.At = probe.At.Add(time.Second)
	if v, _, _ := l.Gate(probe.At, probe, nil, false); !v.Handle {
		t.Fatal("the released kind was still held")
	}
	data, _ := l.DurableState()
	if strings.Contains(string(data), `"holds"`) {
		t.Fatalf("the record keeps the released hold: %s", data)
	}
	restored := func(data []byte) {
		t.Helper()
		fresh, _ := newTestLive(t, cfg, core)
		if err := fresh.RestoreDurable(data); err != nil {
			t.Fatal(err)
		}
		if fs := fresh.Filters(); len(fs) != 1 || fs[0] != f {
			t.Fatalf("restored filters %v, want %v", fs, f)
		}
		if held := fresh.gate.heldKinds().all(); len(held) != 0 {
			t.Fatalf("restored holds %v, want none", held)
		}
		if v, _, _ := fresh.Gate(probe.At, probe, nil, false); v.Handle {
			t.Fatal("the restarted node let the kind its filter predicts through: the release outlived the reset")
		}
	}
	restored(data)
	old := durableState{Format: DurableFormat, Filters: []Filter{f},
		Holds: []durableHold{{Kind: node.EventTimer, Name: "probe", Filter: &f, Since: probe.At, Free: probe.At.Add(time.Minute)}}}
	oldData, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	restored(oldData)
}

// With Config.RecallView a restarted node's gathers take in what it knew:
// the nodes its restored check view holds join its gathers
// (includeFiltered) until a snapshot reaches each or finds it unreachable,
// since its fresh state names none of them. n3's neighbourhood is n1
// alone; n2, whose lock its durable view holds, is asked by the restarted
// n3's gather, and no longer once a snapshot held it. Without the option
// nothing is recalled.
func TestRestartedNodeGathersWhatItKnew(t *testing.T) {
	spec := grantSpec()
	before := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 3)
	immediate := func(c *LayerConfig) { c.Immediate = true }
	old, _ := grantLayer(t, 3, immediate)
	old.Gathered(before)
	data, _ := old.DurableState()

	plain, _ := grantLayer(t, 3, immediate)
	if err := plain.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	if len(plain.recall) != 0 {
		t.Fatalf("without RecallView the restarted node recalls %v", plain.recall)
	}
	fresh, fh := grantLayer(t, 3, func(c *LayerConfig) { c.Immediate, c.Controller.RecallView = true, true })
	if err := fresh.RestoreDurable(data); err != nil {
		t.Fatal(err)
	}
	if err := fresh.snaps.Attach(fh); err != nil {
		t.Fatal(err)
	}
	at := before.At.Add(time.Minute)
	fresh.snaps.Start(at)
	fresh.After(at)
	if !slices.Equal(fresh.included, []node.ID{1, 2}) {
		t.Fatalf("the restarted node's gathers take in %v, want n1 and n2 (its durable view)", fresh.included)
	}
	asked, err := fresh.snaps.Gather(at)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(asked, func(e node.Envelope) bool { return e.To == 2 }) {
		t.Fatalf("the restarted node's gather asks %v, not n2 whose state its durable view holds", asked)
	}
	reached := StartSnapshot(t, spec, []node.ID{2, 3}, 3)
	reached.Dead = []node.ID{1}
	fresh.Gathered(reached)
	fresh.After(at)
	if len(fresh.included) != 0 {
		t.Fatalf("after a snapshot that reached n2 and found n1 dead, the gathers still take in %v", fresh.included)
	}
}
