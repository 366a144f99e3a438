package webview_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// paxosLike declares its charts, as the experiments' results do: only
// they are drawn (not a bar chart per numeric field of its 3 runs), each
// with its axis named.
const paxosLike = `{"format":"crystalball-experiment-paxos/1","runs":3,
 "headline":{"figure":"runs avoided","measured":"3 of 3 (100%)","paper":"98% (§5.4.2)"},
 "charts":[{"title":"Outcomes of 3 runs","kind":"bars","y":"runs","labels":["by steering","by the check","violated"],"values":[3,0,0]},
           {"title":"Time between the rounds","kind":"cdf","x":"gap (s)","of":"runs","series":[{"name":"runs","values":[1,20,40]}]}],
 "per_run":[{"run":0,"gap_s":1,"rounds":4},{"run":1,"gap_s":20,"rounds":5},{"run":2,"gap_s":40,"rounds":6}]}`

func TestFiguresDrawsOnlyTheDeclaredCharts(t *testing.T) {
	figs, err := webview.Figures([]byte(paxosLike), recordCDF)
	if err != nil {
		t.Fatal(err)
	}
	if len(figs) != 2 || figs[0].Title != "Outcomes of 3 runs" || figs[1].Title != "Time between the rounds" {
		t.Fatalf("figures %+v, want the two declared", figs)
	}
	if bars := string(figs[0].SVG); !strings.Contains(bars, "Outcomes of 3 runs (runs)") || !strings.Contains(bars, "<title>by steering: 3</title>") {
		t.Errorf("bars:\n%s", bars)
	}
	if got, want := string(figs[1].SVG), "<svg>Time between the rounds|gap (s)|fraction of runs|runs=[1 20 40]</svg>"; got != want {
		t.Errorf("CDF drawn as %q, want %q", got, want)
	}
	bad := `{"charts":[{"title":"x","kind":"pie"}]}`
	if _, err := webview.Figures([]byte(bad), recordCDF); !errors.Is(err, webview.ErrFigures) {
		t.Errorf("a chart of an unknown kind: %v", err)
	}
}

// The real plotter names the sample on its y axis.
func TestCDFSaysWhatItCounts(t *testing.T) {
	var b strings.Builder
	if err := webview.WriteCDFSVGOf(&b, "t", "x", "runs", []webview.Series{{Name: "a", Values: []float64{1, 2}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), ">fraction of runs</text>") {
		t.Errorf("y axis:\n%s", b.String())
	}
}
