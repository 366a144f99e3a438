package experiments

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// treeBaseline is the baseline's search on 3 RandTree nodes, small enough
// for BFS to violate properties within its state budget.
func treeBaseline() BaselineConfig {
	return BaselineConfig{
		Spec:      randtree.NewSpec(randtree.DefaultOptions()),
		Workload:  bootstrapJoin,
		Nodes:     3,
		Faults:    consequence.Faults{Resets: 1, SilentResets: true, Breaks: 1},
		MaxStates: 5000,
		Workers:   1, // the same paths as the test's own search
	}
}

// BFS from the initial 3 RandTree nodes runs within its state budget (the
// time budget being the online exploration time) and the online
// predictions are accounted for: a property BFS violated is found, one it
// did not is not, an ending BFS reached is found.
func TestMaceMCBaseline(t *testing.T) {
	cfg := treeBaseline()
	// The model BFS explores, to take a violation's ending from.
	m, err := consequence.NewActorModel(cfg.Spec, consequence.ActorOptions{N: 3, Seed: 1, Workload: cfg.Workload, Faults: cfg.Faults})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).Properties(m.Properties()...).
		WithOptions(consequence.Options{Strategy: consequence.BFS, MaxStates: 5000, MaxViolations: 256}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	paths := violatingPaths(m, res)
	t.Logf("%d states, %d properties violated", res.Unique, len(paths))
	online := BaselineOnline{ExplorationSeconds: 30, Predictions: []OnlinePrediction{{Property: "NoSuchProperty", Shape: "x", Depth: 1, Node: 1, Happened: true}}}
	for prop, ps := range paths {
		p := ps[0]
		online.Predictions = append(online.Predictions, OnlinePrediction{Property: prop, Shape: steering.Shape(p[len(p)-1:]), Depth: 1, FirstPredictedS: 61.5, Node: 2})
		break
	}
	if len(online.Predictions) != 2 {
		t.Fatal("BFS violated nothing within 5000 states: the test needs a violation")
	}
	out, err := MaceMCBaseline(context.Background(), cfg, online)
	if err != nil {
		t.Fatal(err)
	}
	off := out.Offline
	if out.Format != BaselineFormat || off.Nodes != 3 || off.BudgetSeconds != 30 || off.Unique != 5000 || off.Stop != "state budget" ||
		off.DepthComplete != off.Depth-1 || !strings.Contains(off.Faults, "breaks=1") || len(off.Found) == 0 {
		t.Fatalf("offline half: %+v", off)
	}
	if v := out.Violations; len(v) != 2 || v[0].FoundProperty || v[0].FoundEnding || !v[0].HappenedOnline ||
		!v[1].FoundProperty || !v[1].FoundEnding || v[1].PropertyDepth == 0 || v[1].Node != 2 {
		t.Fatalf("violations %+v", v)
	}
	text := out.String()
	for _, want := range []string{"offline: exhaustive BFS from the initial state of 3 nodes", "00:01:01.500", "shapes (the path with nodes as roles):"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), `"format":"`+BaselineFormat+`"`) {
		t.Errorf("JSON %s", b)
	}
}

func TestMaceMCBaselineErrors(t *testing.T) {
	cfg := treeBaseline()
	for _, c := range []struct {
		cfg    BaselineConfig
		online BaselineOnline
		want   string
	}{
		{BaselineConfig{}, BaselineOnline{ExplorationSeconds: 1}, "Spec is required"},
		{func() BaselineConfig { c := cfg; c.Nodes = 65; return c }(), BaselineOnline{ExplorationSeconds: 1}, "nodes must be in 1..64"},
		{cfg, BaselineOnline{}, "explored nothing"},
	} {
		if _, err := MaceMCBaseline(context.Background(), c.cfg, c.online); err == nil || !strings.HasPrefix(err.Error(), "experiments: macemc-baseline: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want an error containing %q", err, c.want)
		}
	}
	if d := DefaultBaselineConfig(cfg.Spec, cfg.Workload); d.Nodes != DefaultBaselineNodes || d.MaxStates != DefaultBaselineMaxStates || d.Workers <= 0 || d.Budget != 0 {
		t.Errorf("DefaultBaselineConfig = %+v", d)
	}
}

// The budget, when set, overrides the online exploration time.
func TestMaceMCBaselineBudget(t *testing.T) {
	cfg := treeBaseline()
	cfg.Budget, cfg.MaxStates = 250*time.Millisecond, 500
	out, err := MaceMCBaseline(context.Background(), cfg, BaselineOnline{ExplorationSeconds: 99})
	if err != nil {
		t.Fatal(err)
	}
	if out.Offline.BudgetSeconds != 0.25 || out.Offline.MaxStates != 500 || len(out.Violations) != 0 || !strings.Contains(out.String(), "nothing was predicted online") {
		t.Fatalf("%+v", out)
	}
}
