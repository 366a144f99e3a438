package register

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/linearizable"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// run emulates the primary, the backup and two clients of twenty
// operations each for 30 s (seed 1).
func run(t *testing.T, fixed bool, snaps *emulation.SnapshotConfig, steer *emulation.SteeringConfig) emulation.Result {
	t.Helper()
	e, err := emulation.New(emulation.Config{Spec: Spec(fixed), Nodes: 4, Seed: 1, Workload: Workload(20), Duration: 30 * time.Second,
		Snapshots: snaps, Steering: steer})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed 1: %v", err)
	}
	return r
}

// TestHistorySeesTheStaleRead: in an emulated run no state violates the
// safety property (the previous model sees nothing wrong), while the
// run's client history is not linearizable: a read that began after a
// write was acknowledged returned the value before it. The corrected
// twin's history is linearizable.
func TestHistorySeesTheStaleRead(t *testing.T) {
	r := run(t, false, nil, nil)
	if s := r.Safety[0]; s.ViolatedStates != 0 {
		t.Fatalf("safety %+v, want no violated state", s)
	}
	if len(r.History) != 1 {
		t.Fatalf("history results %+v, want one", r.History)
	}
	h := r.History[0]
	if h.Holds || h.Operations != 40 || !strings.Contains(h.Error, "zoo-register.Read{} -> zoo-register.Value{V:0}") {
		t.Fatalf("history %+v, want 40 operations, not linearizable, by a read of 0", h)
	}
	if h.FirstViolation <= 0 || h.FirstViolation >= 30*time.Second {
		t.Errorf("first violation at %v, want during the run", h.FirstViolation)
	}
	if r := run(t, true, nil, nil); !r.History[0].Holds || r.History[0].Operations != 40 {
		t.Errorf("fixed twin: %+v, want 40 operations, linearizable", r.History)
	}
}

// TestCheckSeesTheStaleRead: breadth-first search from a client of a
// write and a read finds the non-linearizable path at depth 6 — the write
// acknowledged, the read served by the backup before the flush — and the
// corrected twin none to depth 12; the path's history is part of the
// explored state.
func TestCheckSeesTheStaleRead(t *testing.T) {
	search := func(fixed bool) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
		m, err := consequence.NewActorModel(Spec(fixed), consequence.ActorOptions{N: 3, Workload: Workload(2)})
		if err != nil {
			t.Fatal(err)
		}
		res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(12).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := search(false)
	if len(res.Violations) != 1 || res.Violations[0].Property != "Linearizable" || res.Violations[0].Depth != 6 {
		t.Fatalf("bug: violations %v, want Linearizable at depth 6", res.Violations)
	}
	v := res.Violations[0]
	if !errors.Is(v.Err, linearizable.ErrNotLinearizable) {
		t.Errorf("error %v, want linearizable.ErrNotLinearizable", v.Err)
	}
	h := v.State.History()
	ops, err := h.Operations()
	if err != nil || len(ops) != 2 || ops[1].Result != (Value{V: 0}) {
		t.Errorf("violating state's history %v (%v), want the write and the read of 0", ops, err)
	}
	if res.Unique != 194 {
		t.Errorf("bug: %d states to depth 12, want 194", res.Unique)
	}
	if res := search(true); len(res.Violations) != 0 || res.Unique != 183 {
		t.Errorf("fixed twin: %d states, violations %v; want 183 and none", res.Unique, res.Violations)
	}
}

// TestRoundsPredictTheStaleRead: the steering rounds (mode Debug, every
// node predicting) judge the history of every explored future from their
// snapshots: a write acknowledged, then a read of the value before it.
// The corrected twin: no prediction.
func TestRoundsPredictTheStaleRead(t *testing.T) {
	for _, fixed := range []bool{false, true} {
		snaps, steer := emulation.ModeConfig(steering.Debug, 4, false)
		steer.Controller.MaxStates = 2000
		steer.Controller.Walks = -1
		replayed := false
		steer.OnRound = func(id node.ID, _ time.Duration, rep *steering.RoundReport) {
			for _, p := range rep.Predictions {
				if p.Property == "Linearizable" && !replayed {
					replayed = true
					replayReport(t, id, fixed, rep, p)
				}
			}
		}
		r := run(t, fixed, snaps, steer)
		got := r.Steering.Predicted["Linearizable"]
		if fixed != (got == 0) || r.Steering.Predicted["BackupBehind"] != 0 {
			t.Errorf("fixed=%v: predictions %v", fixed, r.Steering.Predicted)
		}
	}
}

// replayReport writes p as a prediction report, reads it back and
// replays its path on the model the report rebuilds: the same history,
// the same verdict.
func replayReport(t *testing.T, id node.ID, fixed bool, rep *steering.RoundReport, p steering.Prediction) {
	t.Helper()
	spec := Spec(fixed)
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
	_, g, err := m.ReplayReport(doc.Report, m.Properties())
	if err != nil {
		t.Fatalf("the report of %s does not replay: %v", p.Property, err)
	}
	if h := g.History(); h.Start == nil || len(h.Events) == 0 {
		t.Errorf("the replayed path's history %+v, want one that began at the snapshot", h)
	}
}

// TestConformance holds both forms to the contracts every runtime relies
// on, their marks included.
func TestConformance(t *testing.T) {
	calls := nodetest.ConformanceCalls(func(self node.ID, _ []node.ID) []node.Message { return Workload(4)(self, false) })
	for _, fixed := range []bool{false, true} {
		nodetest.Conformance(t, Spec(fixed), calls, nodetest.ConformanceNodes(4))
	}
}
