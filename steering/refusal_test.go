package steering_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// TestRefusalBudgetIsFreeWithoutTrySend: RandTree never calls TrySend, so
// a round with the default refusal budget of the command's steering modes
// (one refused send, steering.DefaultFaults) explores exactly what it
// explores without one — the same states, predictions and filters — from
// the paper's Figure 2 state, its liveness walks included. The walks get
// 5,000 steps (MaxWalkSteps): the round's two walks and part of the judgement
// of its suspect, as with the default 40,000, which the judgement spends too
// (BudgetSpent either way) at twice the cost of the whole rest of the round.
// The safety search keeps 2,000 states (MaxStates; 13,380 with the filter
// checks): it still predicts all four violations the default 20,000 does
// and installs two of its three filters, at a third of the cost.
func TestRefusalBudgetIsFreeWithoutTrySend(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	s := figure2Snapshot(t, spec)
	round := func(refusals int) string {
		ctl, err := steering.New(steering.Config{Mode: steering.Steer, Spec: spec, Workload: paper.Figure2Workload,
			Faults:        consequence.Faults{Resets: 1, SilentResets: true, Breaks: 1, Refusals: refusals},
			SearchBudget:  steering.SearchBudget{MaxStates: 2000},
			LivenessWalks: steering.LivenessWalks{MaxWalkSteps: 5000}}, 9)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ctl.Round(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		out := fmt.Sprintf("states %d, installed %v, liveness %+v", rep.States, rep.Installed, rep.Liveness)
		for _, p := range rep.Predictions {
			out += fmt.Sprintf("\n%s %v", p.Property, p.Path)
		}
		return out
	}
	without, with := round(0), round(1)
	if with != without {
		t.Errorf("with a refusal budget:\n%s\nwithout:\n%s", with, without)
	}
	t.Log(without)
}
