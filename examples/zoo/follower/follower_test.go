package follower

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Times of the scripted run: the follower n2 restarts at followerReset,
// and loses its log; the leader restarts at leaderReset, which heals the
// bug (a new incarnation ships from the start); the run ends at end.
const (
	followerReset = 15 * time.Second
	leaderReset   = 45 * time.Second
	end           = 60 * time.Second
)

// scriptedRun emulates three nodes (seed 1), started together, through
// the script above and
// returns the result and the bounded properties' violations as they were
// reported during the run.
func scriptedRun(t *testing.T, fixed bool, steer *emulation.SteeringConfig, snaps *emulation.SnapshotConfig) (emulation.Result, []emulation.Violation) {
	t.Helper()
	var viols []emulation.Violation
	e, err := emulation.New(emulation.Config{Spec: Spec(fixed, 3), Nodes: 3, Seed: 1, Workload: Workload,
		StartSpread: time.Millisecond, // a follower that starts late falls behind at once
		Snapshots:   snaps, Steering: steer,
		Observers: emulation.Observers{OnViolation: func(v emulation.Violation) { viols = append(viols, v) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() error{
		func() error { return e.RunUntil(emulation.Epoch.Add(followerReset)) },
		func() error { return e.Reset(2, false) },
		func() error { return e.RunUntil(emulation.Epoch.Add(leaderReset)) },
		func() error { return e.Reset(1, false) },
		func() error { return e.RunUntil(emulation.Epoch.Add(end)) },
	} {
		if err := step(); err != nil {
			t.Fatalf("seed 1: %v", err)
		}
	}
	return e.Result(), viols
}

func timed(t *testing.T, r emulation.Result, name string) emulation.TimedResult {
	t.Helper()
	for _, tr := range r.Timed {
		if tr.Name == name {
			return tr
		}
	}
	t.Fatalf("no timed result for %s in %+v", name, r.Timed)
	return emulation.TimedResult{}
}

// TestBoundedPropertyFindsTheOutageDuringTheRun: the end-of-run verdict
// (the previous model) calls the run live — AllCaughtUp holds at the end,
// and no safety property ever fails — while the bounded property reports
// the follower's outage when its bound passes, during the run and long
// before the leader's restart heals it, and measures it: from the
// follower's restart to the leader's. The corrected twin has no outage.
func TestBoundedPropertyFindsTheOutageDuringTheRun(t *testing.T) {
	r, viols := scriptedRun(t, false, nil, nil)
	if l := r.Liveness[0]; l.Name != "AllCaughtUp" || !l.Holds {
		t.Fatalf("end-of-run verdict %+v, want AllCaughtUp holding at the end (what the run's end shows)", l)
	}
	if s := r.Safety[0]; s.ViolatedStates != 0 {
		t.Fatalf("safety %+v, want no violated state", s)
	}
	if len(viols) != 1 || viols[0].Property != "CaughtUpWithin" {
		t.Fatalf("violations during the run %v, want one of CaughtUpWithin", viols)
	}
	v := viols[0]
	at := v.At.Sub(emulation.Epoch)
	if at < followerReset+CatchUpBound || at > followerReset+CatchUpBound+AppendEvery {
		t.Errorf("outage reported at %v, want within an append of %v (the follower's restart plus the bound)", at, followerReset+CatchUpBound)
	}
	if at >= leaderReset {
		t.Errorf("outage reported at %v, after the leader's restart at %v: not during the run", at, leaderReset)
	}
	var overdue *node.OverdueError
	if !errors.As(v.Err, &overdue) || overdue.Bound != CatchUpBound {
		t.Errorf("violation error %v (%T), want a node.OverdueError of bound %v", v.Err, v.Err, CatchUpBound)
	}
	tr := timed(t, r, "CaughtUpWithin")
	if tr.Outages != 1 || tr.Longest.Ongoing {
		t.Fatalf("CaughtUpWithin %+v, want one outage, ended", tr)
	}
	if l := tr.Longest; l.Start < followerReset || l.Start > followerReset+AppendEvery ||
		l.Start+l.Length < leaderReset || l.Start+l.Length > leaderReset+2*AppendEvery {
		t.Errorf("outage %+v, want it from the follower's restart (%v) to the leader's (%v)", l, followerReset, leaderReset)
	}
	if tr.Availability > 0.6 {
		t.Errorf("availability %.3f, want the 30 s outage of a minute to show", tr.Availability)
	}
	// The same goal, unbounded, judged every emulation.DefaultTimedEvery:
	// the same availability to that resolution (two transitions a run).
	if a := timed(t, r, "AllCaughtUp"); math.Abs(a.Availability-tr.Availability) > 4*emulation.DefaultTimedEvery.Seconds()/end.Seconds() {
		t.Errorf("AllCaughtUp availability %.4f, want %.4f", a.Availability, tr.Availability)
	}

	r, viols = scriptedRun(t, true, nil, nil)
	if tr := timed(t, r, "CaughtUpWithin"); len(viols) != 0 || tr.Outages != 0 {
		t.Errorf("fixed twin: violations %v, %+v; want none", viols, tr)
	}
}

// TestCheckFindsTheOutageInVirtualTime: breadth-first search from two
// nodes with one reset finds the bounded property's violation — the
// leader's appends go on for more than the bound of virtual time after
// the follower restarted — and nothing on the corrected twin; the
// properties of the previous model (a safety property; the unbounded
// liveness property, which exhaustive search judges only where the system
// can no longer move) find nothing.
func TestCheckFindsTheOutageInVirtualTime(t *testing.T) {
	search := func(fixed bool, delay time.Duration, depth int) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
		m, err := consequence.NewActorModel(Spec(fixed, 2), consequence.ActorOptions{N: 2, Faults: consequence.Faults{Resets: 1},
			Timely: consequence.TimelyOptions{MaxDelay: delay}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(depth).Workers(1).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := search(false, 0, 42)
	if len(res.Violations) != 1 || res.Violations[0].Property != "CaughtUpWithin" || res.Violations[0].Depth != 33 {
		t.Fatalf("bug: %d states, violations %v; want CaughtUpWithin at depth 33", res.Unique, res.Violations)
	}
	if res.Unique != 1193 {
		t.Errorf("bug: %d states to depth 42, want 1193", res.Unique)
	}
	if res := search(true, 0, 42); len(res.Violations) != 0 || res.Unique != 1480 {
		t.Errorf("fixed twin: %d states, violations %v; want 1480 and none", res.Unique, res.Violations)
	}
	// Without a bound on network delay a path that holds the follower's
	// messages while the leader's timers fire fails every bounded
	// property: the corrected twin too, at the first depth at which the
	// bound can pass (an append a second).
	if res := search(true, 24*time.Hour, 13); len(res.Violations) != 1 || res.Violations[0].Depth != 13 {
		t.Errorf("fixed twin without a delay bound: violations %v, want one at depth 13", res.Violations)
	}
}

// TestRoundsPredictTheBoundedProperty: the steering rounds (mode Debug)
// search the bounded property as a safety property of the timed system:
// after the follower's restart they predict it (a path of 31 steps from
// n2's snapshot), on the corrected twin never; the prediction's report
// replays.
func TestRoundsPredictTheBoundedProperty(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		snaps, steer := emulation.ModeConfig(steering.Debug, 3, false)
		// The follower n2 alone predicts (its neighbourhood is n2 and
		// the leader: the leader's holds both followers, whose paths
		// to the bound need more than this budget), with a small budget
		// and no liveness walks: the safety search alone, cheap under
		// the race detector.
		n2 := func(id node.ID) bool { return id == 2 }
		steer.Predictors, snaps.Gatherers = n2, n2
		steer.Controller.MaxStates = 1500
		steer.Controller.Walks = -1
		var replayed int
		steer.OnRound = func(id node.ID, _ time.Duration, rep *steering.RoundReport) {
			for _, p := range rep.Predictions {
				if p.Property == "CaughtUpWithin" && replayed == 0 {
					replayReport(t, id, fixed, rep, p)
					replayed++
				}
			}
		}
		r, _ := scriptedRun(t, fixed, steer, snaps)
		got := r.Steering.Predicted["CaughtUpWithin"]
		if fixed != (got == 0) {
			t.Errorf("fixed=%v: %d predictions of CaughtUpWithin (%v)", fixed, got, r.Steering.Predicted)
		}
	}
}

// replayReport writes p as a prediction report, reads it back as JSON and
// replays its path on the model the report rebuilds: the same violation.
func replayReport(t *testing.T, id node.ID, fixed bool, rep *steering.RoundReport, p steering.Prediction) {
	t.Helper()
	spec := Spec(fixed, 3)
	pd, err := report.NewPrediction(report.Source{Node: id, Service: spec.Name, Spec: spec, Mode: steering.Debug,
		Faults: steering.DefaultFaults()}, rep.Snapshot, p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(pd)
	if err != nil {
		t.Fatal(err)
	}
	var doc report.Prediction
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	m, err := doc.Model(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.ReplayReport(doc.Report, m.Properties()); err != nil {
		t.Errorf("the report of %s does not replay: %v", p.Property, err)
	}
}

// TestConformance holds both forms to the contracts every runtime relies
// on.
func TestConformance(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		nodetest.Conformance(t, Spec(fixed, 3), nodetest.ConformanceNodes(3))
	}
}
