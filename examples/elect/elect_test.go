package elect_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/elect"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestConformance holds the election, bug and fix, to the contracts every
// runtime relies on.
func TestConformance(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		nodetest.Conformance(t, elect.Spec(3, fixed), nodetest.ConformanceNodes(3))
	}
}

// walkWeights make faults and timers rare, as MaceMC's do: a walk then
// follows the messages of an election before its next timeout.
var walkWeights = consequence.KindWeights(map[consequence.ActorActionKind]float64{
	consequence.ActTimer: 0.05, consequence.ActReset: 0.02, consequence.ActBreak: 0.02,
	consequence.ActCrash: 0.02, consequence.ActPartition: 0.02,
})

// walks runs the liveness search (100 walks of 150 steps, 5 per probe of the
// critical transition, seed 1) on three
// nodes with faults f.
func walks(t *testing.T, fixed bool, f consequence.Faults) *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(elect.Spec(3, fixed), consequence.ActorOptions{N: 3, Seed: 1, Workload: elect.Workload, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.FindLivenessViolation(context.Background(), m, m.Properties(), nil, consequence.LivenessOptions[consequence.ActorAction]{
		Walk: consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 100, DMax: 150, K: 5, Weight: walkWeights},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestOldModelMissesTheStall: with the faults that end — a reset (with or
// without RST) and a broken connection along a path — every walk elects a
// leader: the stall stays hidden.
func TestOldModelMissesTheStall(t *testing.T) {
	for _, f := range []consequence.Faults{
		{Resets: 1, Breaks: 1},
		{Resets: 1, SilentResets: true, StaleConnections: true, Breaks: 1},
	} {
		if res := walks(t, false, f); res.Suspect != nil {
			t.Errorf("faults %+v: a suspect (%d of %d walks live): %v", f, res.Live, res.Walks, res.Suspect.Failing)
		}
	}
}

// TestLastingFaultsFindTheStall: a crash-stop, or an isolation that
// lasts, is the critical transition of a dead end of LeaderElected
// (verdict C1); the corrected twin elects a leader on every walk under
// the same faults, and so does the bug when the crashed node restarts.
func TestLastingFaultsFindTheStall(t *testing.T) {
	for _, c := range []struct {
		f    consequence.Faults
		kind consequence.ActorActionKind
	}{
		{consequence.Faults{Crashes: 1}, consequence.ActCrash},
		{consequence.Faults{Partitions: 1, PartitionKinds: consequence.CutIsolate}, consequence.ActPartition},
	} {
		res := walks(t, false, c.f)
		if res.Critical == nil || res.Critical.Verdict != consequence.C1 || res.Critical.Step < 0 || res.Critical.Action.Act.Kind != c.kind {
			t.Errorf("faults %+v: no C1 dead end at a %v: %+v", c.f, c.kind, res.Critical)
		}
		if res := walks(t, true, c.f); res.Suspect != nil {
			t.Errorf("the twin, faults %+v: a suspect: %v", c.f, res.Suspect.Failing)
		}
	}
	if res := walks(t, false, consequence.Faults{Crashes: 1, Downtime: 2 * time.Second}); res.Suspect != nil {
		t.Errorf("a crash with a restart 2s later: a suspect: %v", res.Suspect.Failing)
	}
}

// emulate runs three nodes for two minutes of virtual time (seed 1, whose
// leader at 20s is n3) under schedule (may be empty) and churn, and
// returns whether LeaderElected holds at the end.
func emulate(t *testing.T, fixed bool, schedule string, churn emulation.ChurnConfig) bool {
	t.Helper()
	cfg := emulation.Config{Spec: elect.Spec(3, fixed), Nodes: 3, Seed: 1, Duration: 2 * time.Minute, Workload: elect.Workload, Churn: churn}
	if schedule != "" {
		s, err := emulation.ParseSchedule(schedule)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Nemesis.Schedule = s
	}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return r.Liveness[0].Holds
}

// TestScheduleFindsTheStall: the leader of the run crashed for good, or
// isolated for good, leaves no leader at the end; the twin elects another;
// churn whose nodes come back before the end (the older model's only
// lasting fault) shows nothing.
func TestScheduleFindsTheStall(t *testing.T) {
	e, _ := emulation.New(emulation.Config{Spec: elect.Spec(3, false), Nodes: 3, Seed: 1, Workload: elect.Workload})
	if err := e.RunUntil(emulation.Epoch.Add(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if s := e.View().Service(3).(*elect.State); s.Role != elect.Leader {
		t.Fatalf("seed 1: n3 does not lead at 20s (%v): the schedules below crash the wrong node", s)
	}
	for _, sched := range []string{"at 20s crash 3", "at 20s isolate 3"} {
		if emulate(t, false, sched, emulation.ChurnConfig{}) {
			t.Errorf("%q: LeaderElected holds at the end", sched)
		}
		if !emulate(t, true, sched, emulation.ChurnConfig{}) {
			t.Errorf("the twin, %q: LeaderElected fails at the end", sched)
		}
	}
	churn := emulation.ChurnConfig{Rate: 4, Downtime: 10 * time.Second, After: 20 * time.Second, Until: 60 * time.Second}
	if !emulate(t, false, "", churn) {
		t.Error("churn that ends a minute before the end: LeaderElected fails")
	}
}
