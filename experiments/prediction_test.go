package experiments

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// Consequence prediction from Figure 2's live state finds the paper's
// inconsistency at depth 5, BFS from the same state after more states,
// while BFS from the initial state runs out of its state budget and
// consequence prediction from there exhausts its pruned space; each
// search is watched through OnSearch.
func TestRandTreePrediction(t *testing.T) {
	var labels []string
	levels := map[string]int{}
	cfg := PredictionConfig{MaxStates: 3000, Budget: -1, OnSearch: func(label string) (func(consequence.Progress), func()) {
		labels = append(labels, label)
		return func(consequence.Progress) { levels[label]++ }, func() { labels = append(labels, "done") }
	}}
	out, err := RandTreePrediction(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Format != PredictionFormat || out.MaxStates != 3000 || out.Budget != "0s" {
		t.Fatalf("header %q %d %q", out.Format, out.MaxStates, out.Budget)
	}
	p := out.Prediction
	if !p.Found || p.Depth != 5 || !strings.Contains(p.Violation, "n9: n13 is both a child and a sibling") || len(p.Path) != 5 {
		t.Fatalf("prediction: %+v", p)
	}
	if e := out.Exhaustive; e.Found || e.Unique != 3000 || e.Stop != "state budget" {
		t.Fatalf("exhaustive search from the initial state: %+v", e)
	}
	if b := out.LiveBFS; !b.Found || b.Depth != 5 || b.Unique != 463 {
		t.Fatalf("bfs from the live state: %+v", b)
	}
	if c := out.InitialPrediction; c.Found || c.Stop != "completed" || c.Unique != 128 {
		t.Fatalf("consequence prediction from the initial state: %+v", c)
	}
	if len(out.DepthTable["bfs"]) == 0 || len(out.DepthTable["consequence"]) == 0 {
		t.Fatalf("depth table %v", out.DepthTable)
	}
	if len(labels) != 8 || labels[0] != "consequence from "+liveFrom || labels[1] != "done" || levels["bfs from "+initialFrom] == 0 {
		t.Errorf("searches observed: %q, levels %v", labels, levels)
	}
	text := out.String()
	for _, want := range []string{"path found by consequence prediction from the figure 2 live state", "depth reached over time", "consequence from the initial state, 5 nodes explored all it could reach: 128 states"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	b, err := json.Marshal(out)
	if err != nil || !strings.Contains(string(b), `"format":"`+PredictionFormat+`"`) {
		t.Errorf("JSON %s (%v)", b, err)
	}
}

func TestDefaultPredictionConfig(t *testing.T) {
	if d := DefaultPredictionConfig(); d.Budget != DefaultPredictionBudget || d.MaxStates != DefaultPredictionMaxStates {
		t.Errorf("DefaultPredictionConfig = %+v", d)
	}
}
