package consequence_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// tokenModel is the example's buggy token passer (example_test.go) with
// its safety property and a liveness property it never meets: "n1 gives
// the token up".
func tokenModel(t *testing.T) (*consequence.ActorModel, []consequence.Property[*consequence.GlobalState]) {
	t.Helper()
	spec := node.Spec{
		Name:     "token",
		New:      func() node.Service { return &tokenRing{} },
		Messages: []node.Message{Token{}},
		Properties: []node.Property{
			node.Always("one-holder", oneHolder),
			node.Eventually("released", func(v node.View) error {
				if v.Service(1).(*tokenRing).HasToken {
					return errors.New("n1 still holds the token")
				}
				return nil
			}),
		},
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	return m, m.Properties()
}

func golden(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\n got %s\nwant %s", what, got, want)
	}
}

// TestSearchResultsPrintReadably pins the one-line String of the search's
// results: actions, paths, violations, periphery states, reports, the
// result and the progress report.
func TestSearchResultsPrintReadably(t *testing.T) {
	m, props := tokenModel(t)
	res, err := consequence.NewChecker(m).Properties(props...).Workers(1).Periphery(1).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	v, ok := res.Violated("one-holder")
	if !ok {
		t.Fatalf("no violation in %v", res)
	}
	golden(t, "action", v.Path[0].String(), "n1 timer pass")
	golden(t, "path", v.Path.String(), "n1 timer pass; n2 deliver token.Token from n1")
	golden(t, "empty path", consequence.Path[consequence.ActorAction]{}.String(), "(empty path)")
	golden(t, "violation", v.String(),
		`safety "one-holder" violated at depth 2: [n1 n2] all hold the token [path: n1 timer pass; n2 deliver token.Token from n1]`)
	if len(res.Periphery) != 1 {
		t.Fatalf("periphery: %d states", len(res.Periphery))
	}
	golden(t, "periphery", res.Periphery[0].String(), "depth 2: n1 timer pass; n2 deliver token.Token from n1")

	rep, err := m.Report(v)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report", rep.String(), v.String())
	rec := rep.Path[1]
	rec.Text = ""
	golden(t, "record without text", rec.String(), "n2 deliver token.Token from n1")
	golden(t, "break record", consequence.ActionRecord{Kind: "break", Node: 1, Peer: 9}.String(), "n1 break n9")

	res.Elapsed = 12_345 * time.Microsecond
	golden(t, "result", res.String(), "bfs, 1 worker: completed after 3 states (3 generated, 0 pruned) to depth 2 in 12ms, 2 violations")
	big := &consequence.Result[int, int]{Strategy: consequence.Consequence, Workers: 8, Stop: consequence.StopStateBudget,
		Unique: 1_204_000, Generated: 3_310_200, Pruned: 56, Depth: 17, Elapsed: 2 * time.Second}
	golden(t, "large result", big.String(), "consequence, 8 workers: state budget after 1,204,000 states (3,310,200 generated, 56 pruned) to depth 17 in 2s, 0 violations")
	p := consequence.Progress{Depth: 3, Frontier: 40, Unique: 112, Generated: 1500, Violations: 1, Elapsed: 1234 * time.Millisecond}
	golden(t, "progress", p.String(), "depth 3 done: 40 to expand, 112 states (1,500 generated, 0 pruned), 1 violation, 1.234s")
}

// TestWalkResultsPrintReadably pins the String of walks and of the
// critical transition's verdicts.
func TestWalkResultsPrintReadably(t *testing.T) {
	m, props := tokenModel(t)
	ctx := context.Background()
	opts := consequence.WalkOptions[consequence.ActorAction]{Walks: 5, DMax: 10, K: 3}
	wr, err := consequence.RandomWalks(ctx, m, props, opts)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "walks", wr.String(), "1 walk, 0 live; suspect: not live after 2 steps: released: n1 still holds the token")
	golden(t, "suspect path", wr.Suspect.Path.String(), "n1 timer pass; n2 deliver token.Token from n1")
	crit, err := consequence.FindCriticalTransition(ctx, m, props, wr.Suspect.Start, wr.Suspect.Path, opts)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "dead start", crit.String(), "C1: the start state is dead (3 probes)")

	live := consequence.Walk[int, int]{Live: true, Path: make(consequence.Path[int], 12)}
	golden(t, "live walk", live.String(), "live after 12 steps")
	c1 := &consequence.Critical[int, string]{Verdict: consequence.C1, Step: 4, Action: consequence.Action[string]{Act: "n1 timer go"}, Probes: 9}
	golden(t, "C1", c1.String(), "C1: critical step 4 (n1 timer go) after 9 probes")
	c2 := &consequence.Critical[int, string]{Verdict: consequence.C2, Step: -1, Probes: 1}
	golden(t, "C2", c2.String(), "C2: walks from the end of the path reach a live state; raise DMax (1 probe)")
}
