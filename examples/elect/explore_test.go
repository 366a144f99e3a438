package elect_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/examples/elect"
)

func walk(t *testing.T, fixed bool, f consequence.Faults) *consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(elect.Spec(3, fixed), consequence.ActorOptions{N: 3, Seed: 1, Workload: elect.Workload, Faults: f})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.FindLivenessViolation(context.Background(), m, m.Properties(), nil, consequence.LivenessOptions[consequence.ActorAction]{
		Walk: consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 100, DMax: 300, Weight: consequence.KindWeights(map[consequence.ActorActionKind]float64{
			consequence.ActTimer: 0.05, consequence.ActReset: 0.02, consequence.ActBreak: 0.02, consequence.ActCrash: 0.02, consequence.ActPartition: 0.02,
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestProbe(t *testing.T) {
	for _, c := range []struct {
		name  string
		fixed bool
		f     consequence.Faults
	}{
		{"bug old", false, consequence.Faults{Resets: 1, Breaks: 1}},
		{"bug crash", false, consequence.Faults{Crashes: 1}},
		{"fixed crash", true, consequence.Faults{Crashes: 1}},
		{"bug partial", false, consequence.Faults{Partitions: 1, PartitionKinds: consequence.CutPartial}},
		{"fixed partial", true, consequence.Faults{Partitions: 1, PartitionKinds: consequence.CutPartial}},
		{"bug isolate", false, consequence.Faults{Partitions: 1, PartitionKinds: consequence.CutIsolate}},
		{"fixed isolate", true, consequence.Faults{Partitions: 1, PartitionKinds: consequence.CutIsolate}},
	} {
		res := walk(t, c.fixed, c.f)
		t.Logf("%s: walks %d live %d suspects %d c2 %d", c.name, res.Walks, res.Live, res.Suspects, res.C2)
		if res.Critical != nil {
			t.Logf("  verdict %v step %d %v", res.Critical.Verdict, res.Critical.Step, res.Critical.Action.Act)
		}
	}
}

func TestProbeFixedCrash(t *testing.T) {
	res := walk(t, true, consequence.Faults{Crashes: 1})
	if res.Suspect == nil {
		return
	}
	p := res.Suspect.Path
	for i, a := range p {
		if i > len(p)-30 || a.Act.Kind == consequence.ActCrash {
			t.Logf("%d %v", i, a.Act)
		}
	}
	t.Logf("final:\n%v", res.Suspect.State)
}
