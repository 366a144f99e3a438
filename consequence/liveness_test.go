package consequence_test

import (
	"context"
	"errors"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// TestFindLivenessViolation: with a budget of one suspect it is RandomWalks
// followed by FindCriticalTransition; with more it passes over suspects
// judged C2 (walks too short to tell) and stops at the first C1.
func TestFindLivenessViolation(t *testing.T) {
	ctx := context.Background()
	walk := consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 200, DMax: 60, K: 10}
	m := retxModel(t, true)
	rw, err := consequence.RandomWalks(ctx, m, m.Properties(), walk)
	if err != nil || rw.Suspect == nil {
		t.Fatalf("RandomWalks: %v, suspect %v", err, rw != nil && rw.Suspect != nil)
	}
	crit, err := consequence.FindCriticalTransition(ctx, m, m.Properties(), rw.Suspect.Start, rw.Suspect.Path, walk)
	if err != nil {
		t.Fatal(err)
	}
	one, err := consequence.FindLivenessViolation(ctx, m, m.Properties(), nil, consequence.LivenessOptions[consequence.ActorAction]{Walk: walk, MaxSuspects: 1})
	if err != nil {
		t.Fatal(err)
	}
	if one.Walks != rw.Walks || one.Live != rw.Live || one.Suspects != 1 || pathString(one.Suspect.Path) != pathString(rw.Suspect.Path) ||
		one.Critical.Verdict != crit.Verdict || one.Critical.Step != crit.Step {
		t.Fatalf("one suspect: %+v, want RandomWalks' %+v and %v at %d", one, rw, crit.Verdict, crit.Step)
	}

	// The correct service with walks too short to deliver: every suspect
	// is judged C2, and the first is reported once the budget is spent.
	ok := retxModel(t, false)
	short := consequence.LivenessOptions[consequence.ActorAction]{Walk: consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 200, DMax: 6, K: 10}, MaxSuspects: 4}
	res, err := consequence.FindLivenessViolation(ctx, ok, ok.Properties(), nil, short)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("short walks: %d walks, %d live, %d suspects, %d C2", res.Walks, res.Live, res.Suspects, res.C2)
	if res.Suspects != 4 || res.C2 != 4 || res.Critical.Verdict != consequence.C2 {
		t.Fatalf("short walks: %d suspects, %d C2, verdict %v", res.Suspects, res.C2, res.Critical.Verdict)
	}
	first, err := consequence.RandomWalks(ctx, ok, ok.Properties(), short.Walk)
	if err != nil || pathString(first.Suspect.Path) != pathString(res.Suspect.Path) {
		t.Fatalf("reported suspect %s, want the first, %s (%v)", pathString(res.Suspect.Path), pathString(first.Suspect.Path), err)
	}

	// Shorter still: the first suspect is judged C2 and passed over; the
	// second is judged C1 (with walks this short, K walks can miss every
	// live state) and ends the search.
	shorter := short
	shorter.Walk.DMax = 4
	res, err = consequence.FindLivenessViolation(ctx, ok, ok.Properties(), nil, shorter)
	if err != nil {
		t.Fatal(err)
	}
	if res.Suspects != 2 || res.C2 != 1 || res.Critical.Verdict != consequence.C1 || res.Walks != 2 {
		t.Fatalf("shorter walks: %d walks, %d suspects, %d C2, verdict %v", res.Walks, res.Suspects, res.C2, res.Critical.Verdict)
	}

	if _, err := consequence.FindLivenessViolation(ctx, m, m.Properties(), nil, consequence.LivenessOptions[consequence.ActorAction]{MaxSuspects: -1}); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Fatalf("negative MaxSuspects: %v", err)
	}
}
