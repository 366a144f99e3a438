package emulation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestConfirmPathVerdicts: a found path is real for its property, wrong
// for a property it does not violate, and model-only past a step the
// system cannot take, with the steps carried out counted.
func TestConfirmPathVerdicts(t *testing.T) {
	c := zoo.Cases()[0]
	prop, path := foundPath(t, c)
	judge := func(path []consequence.ActorAction, prop string) emulation.PathJudgement {
		t.Helper()
		e, err := emulation.New(emulation.Config{Spec: c.Spec(false), Nodes: c.Check.Nodes, Seed: 1, Workload: c.Workload,
			StartSpread: time.Nanosecond, Duration: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		j, err := e.ConfirmPath(context.Background(), path, c.Check.Faults, prop, node.Safety)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	if j := judge(path, prop); j.Verdict != emulation.PathReal || j.Steps != len(path) {
		t.Errorf("%s's found path: %+v, want real after %d steps", prop, j, len(path))
	}
	if j := judge(path, "NoSuchProperty"); j.Verdict != emulation.PathWrong {
		t.Errorf("another property: %+v, want wrong", j)
	}
	bogus := consequence.ActorAction{Kind: consequence.ActTimer, Node: path[0].Node, Timer: "no-such-timer"}
	j := judge([]consequence.ActorAction{path[0], bogus}, prop)
	if j.Verdict != emulation.PathModelOnly || j.Steps != 1 || j.Detail == "" {
		t.Errorf("a path past an unset timer: %+v, want model-only after 1 step with the reason", j)
	}
}

// TestConfirmPredictionNeedsSteering: a run without steering rounds has no
// predictions to confirm; a steered run that never predicts the property
// says so with ErrNoPrediction.
func TestConfirmPredictionNeedsSteering(t *testing.T) {
	c := zoo.Cases()[0]
	cfg := emulation.Config{Spec: c.Spec(true), Nodes: c.Nodes, Seed: 1, Workload: c.Workload, Duration: 20 * time.Second}
	none := func(steering.Prediction) bool { return false }
	if _, err := emulation.ConfirmPrediction(context.Background(), cfg, none); err == nil {
		t.Fatal("ConfirmPrediction without Config.Steering: no error")
	}
	cfg.Snapshots, cfg.Steering = emulation.ModeConfig(steering.Debug, c.Nodes, false)
	rounds := 0
	cfg.Steering.OnRound = func(node.ID, time.Duration, *steering.RoundReport) { rounds++ }
	if _, err := emulation.ConfirmPrediction(context.Background(), cfg, none); !errors.Is(err, emulation.ErrNoPrediction) {
		t.Fatalf("no matching prediction: %v, want ErrNoPrediction", err)
	}
	if rounds == 0 {
		t.Error("the caller's OnRound saw no round")
	}
}
