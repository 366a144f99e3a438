package live

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestFigure2SameInBothShells drives the paper's Figure 2 scenario through
// the two shells' steering and checks that they predict, filter and decide
// alike.
//
// Emulated shell: 13 RandTree nodes on the emulated wide-area network (seed
// 1); n9 and n13 join through each other at 1 s, n1 through n9 at 3 s, so
// the tree is n1 → n9 → n13 at 6 s (Figure 2's first row). n9 alone runs
// steering (mode Steer, one silent reset explored, BreakConnection) in its
// layer.Pipeline with a steering.SyncRunner; at 6 s it gathers its
// neighbourhood and the round runs on that snapshot. At 8 s n13 resets
// silently and asks n9 to let it join again: the paper's path, which n9's
// filter stops.
//
// Live shell: n9's steering as the live runtime hosts it — a steering.Layer
// in a layer.Pipeline around a core holding n9's checkpoint from that
// snapshot, its rounds on a RoundRunner goroutine — handed the very
// snapshot the emulated n9 gathered; the events are given the emulator's
// virtual times (an injected clock), not read from the wall clock, and no
// TCP is involved (a real-network run cannot reproduce the emulated
// state, and the states, not the sockets, decide what steering does).
//
// Compared, exactly: (1) the round's predictions — property, the text of
// every step of the path, the filter, whether replayed — and the filters
// the round installs (RoundReport.Installed) and that are in force after
// the round (Layer.Filters); (2) for every event the emulated n9's steering
// kept from its handler (the Join from the reset n13), the verdict the
// live pipeline gives the same event at the same time (layer.Verdict, as
// String renders it) and the connection it breaks (Outcome.Break).
func TestFigure2SameInBothShells(t *testing.T) {
	defer livetest.VerifyNone(t)
	spec := randtree.NewSpec(randtree.DefaultOptions())
	ctl := steering.Config{
		Mode:               steering.Steer,
		Workload:           paper.Figure2Workload,
		Faults:             consequence.Faults{Resets: 1, SilentResets: true},
		SearchBudget:       steering.SearchBudget{MaxStates: 5_000},
		InterventionPolicy: steering.InterventionPolicy{BreakConnection: true},
	}
	em := runFigure2Emulated(t, spec, ctl)

	// The live shell, on the emulated n9's snapshot.
	core, err := node.NewCore(node.CoreConfig{ID: 9, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(em.snap.Nodes, func(n snapshot.NodeCheckpoint) bool { return n.Node == 9 })
	if i < 0 {
		t.Fatalf("n9's snapshot lacks n9: %+v", em.snap)
	}
	if err := core.Restore(em.snap.Nodes[i].State); err != nil {
		t.Fatal(err)
	}
	ctl.Spec = spec
	var liveRounds []*steering.RoundReport
	sl, err := steering.NewLayer(steering.LayerConfig{Controller: ctl, Runner: NewRoundRunner(),
		OnRound: func(_ *snapshot.Snapshot, rep *steering.RoundReport) { liveRounds = append(liveRounds, rep) }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	host := &roundHost{core: core, woke: make(chan struct{}, 16)}
	pipe, err := layer.NewPipeline(layer.PipelineConfig{Core: core, Layers: []layer.Layer{sl}, Host: host})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Stop()
	pipe.Start(em.snap.At)
	sl.Gathered(em.snap)
	select {
	case <-host.woke:
	case <-time.After(60 * time.Second): // a hang guard, not a timing assertion
		t.Fatal("the live round never finished")
	}
	if errs := pipe.Tick(time.Now()).Errors; len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(liveRounds) != 1 {
		t.Fatalf("live rounds: %d", len(liveRounds))
	}

	// (1) Predictions and filters.
	want := "n9: drop+break randtree.Join from n13"
	if got, wantPreds := predictionsOf(liveRounds[0]), predictionsOf(em.rep); !slices.Equal(got, wantPreds) || len(got) == 0 {
		t.Fatalf("predictions differ:\nemulated %q\nlive     %q", wantPreds, got)
	}
	if got, emu := filterStrings(liveRounds[0].Installed), filterStrings(em.rep.Installed); !slices.Equal(got, emu) || !slices.Contains(got, want) {
		t.Fatalf("installed filters differ: emulated %q, live %q (want %q among them)", emu, got, want)
	}
	if got := filterStrings(sl.Filters()); !slices.Equal(got, em.filters) {
		t.Fatalf("filters in force differ: emulated %q, live %q", em.filters, got)
	}

	t.Logf("predictions: %q; filters in force: %q", predictionsOf(em.rep), em.filters)

	// (2) Verdicts on the events the emulated steering kept from n9.
	if len(em.kept) == 0 {
		t.Fatal("the emulated n9 kept no event from its handler: the scenario did not reach the filter")
	}
	for _, iv := range em.kept {
		ev := iv.Event
		in := &node.Envelope{From: ev.From, To: 9, Msg: ev.Msg}
		o := pipe.Step(ev, in)
		if o.Handled || o.Verdict.String() != iv.Verdict.String() {
			t.Errorf("%v at %v: live verdict %v (handled %v), emulated %v", ev, ev.At, o.Verdict, o.Handled, iv.Verdict)
		}
		t.Logf("%v at %v: emulated %v, live %v", ev, ev.At, iv.Verdict, o.Verdict)
		if iv.Verdict.Break && o.Break != ev.From {
			t.Errorf("%v: live breaks %v, want %v", ev, o.Break, ev.From)
		}
	}
	if ev := em.kept[0].Event; ev.Kind != node.EventMessage || ev.From != 13 || ev.Msg.MessageType() != "randtree.Join" {
		t.Errorf("first event kept: %v, want the Join from n13", ev)
	}
}

// figure2Run is what the emulated shell did.
type figure2Run struct {
	snap    *snapshot.Snapshot
	rep     *steering.RoundReport
	filters []string
	kept    []emulation.Intervention
}

// runFigure2Emulated runs Figure 2's scenario in emulation (see
// TestFigure2SameInBothShells) and returns n9's snapshot, its round, the
// filters in force after it and the events its steering kept.
func runFigure2Emulated(t *testing.T, spec node.Spec, ctl steering.Config) figure2Run {
	t.Helper()
	var run figure2Run
	only9 := func(id node.ID) bool { return id == 9 }
	e, err := emulation.New(emulation.Config{
		Spec: spec, Nodes: 13, Seed: 1, StartSpread: time.Millisecond,
		Snapshots: &emulation.SnapshotConfig{
			Gatherers:  func(node.ID) bool { return false },
			OnSnapshot: func(id node.ID, s *snapshot.Snapshot) { run.snap = s },
		},
		Steering: &emulation.SteeringConfig{
			Controller: ctl,
			Predictors: only9,
			OnRound:    func(_ node.ID, _ time.Duration, rep *steering.RoundReport) { run.rep = rep },
			OnIntervention: func(iv emulation.Intervention) {
				if iv.Node == 9 {
					run.kept = append(run.kept, iv)
				}
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) {
		t.Helper()
		if err := e.RunUntil(emulation.Epoch.Add(d)); err != nil {
			t.Fatal(err)
		}
	}
	join := func(id, to node.ID) {
		t.Helper()
		if err := e.Submit(id, randtree.JoinOverlay{Targets: []node.ID{to}}); err != nil {
			t.Fatal(err)
		}
	}
	at(time.Second)
	join(9, 13)
	join(13, 9)
	at(3 * time.Second)
	join(1, 9)
	at(6 * time.Second)
	if s, _ := e.Core(13).State().Service.(*randtree.State); s == nil || s.Parent != 9 || s.Root != 1 {
		t.Fatalf("not Figure 2's tree at 6 s: n13 is %v", s)
	}
	if err := e.Gather(9); err != nil {
		t.Fatal(err)
	}
	at(8 * time.Second)
	if run.snap == nil || run.rep == nil {
		t.Fatalf("no snapshot (%v) or round (%v) at n9 by 8 s", run.snap, run.rep)
	}
	run.filters = filterStrings(e.Steering(9).Filters())
	if err := e.Reset(13, true); err != nil {
		t.Fatal(err)
	}
	join(13, 9)
	at(10 * time.Second)
	return run
}

// predictionsOf renders a round's predictions for comparison.
func predictionsOf(rep *steering.RoundReport) []string {
	var out []string
	for _, p := range rep.Predictions {
		s := fmt.Sprintf("%s replayed=%v filter=%v:", p.Property, p.Replayed, p.Filter)
		for _, step := range p.Report.Path {
			s += " " + step.Text + ";"
		}
		out = append(out, s)
	}
	return out
}

func filterStrings(fs []steering.Filter) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.String()
	}
	return out
}
