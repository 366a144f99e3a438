package consequence_test

import (
	"context"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// wrapped is a model defined outside the package by embedding one: its
// methods are promoted, and NewChecker still infers S and A.
type wrapped struct{ *consequence.ActorModel }

// TestNewCheckerInfersTypes pins NewChecker's type inference: each call
// below compiles only if S and A are inferred from the model's methods, and
// the assignments fix what they are inferred to.
func TestNewCheckerInfersTypes(t *testing.T) {
	am, err := consequence.NewActorModel(randtree.NewSpec(randtree.Options{}), consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	var actor *consequence.Checker[*consequence.GlobalState, consequence.ActorAction] = consequence.NewChecker(am)
	var embedded *consequence.Checker[*consequence.GlobalState, consequence.ActorAction] = consequence.NewChecker(wrapped{am})
	tp, err := twophase.New(twophase.Options{RMs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var twoPhase *consequence.Checker[twophase.State, twophase.Action] = consequence.NewChecker(tp)

	for name, run := range map[string]func() (uint64, error){
		"actor": func() (uint64, error) {
			r, err := actor.Workers(1).MaxDepth(2).Run(context.Background())
			if err != nil {
				return 0, err
			}
			return r.Unique, nil
		},
		"embedded": func() (uint64, error) {
			r, err := embedded.Workers(1).MaxDepth(2).Run(context.Background())
			if err != nil {
				return 0, err
			}
			return r.Unique, nil
		},
		"twophase": func() (uint64, error) {
			r, err := twoPhase.Workers(1).Run(context.Background())
			if err != nil {
				return 0, err
			}
			return r.Unique, nil
		},
	} {
		n, err := run()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n == 0 {
			t.Errorf("%s: no state explored", name)
		}
	}
}
