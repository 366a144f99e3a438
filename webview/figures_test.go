package webview_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/webview"
)

// recordCDF is a CDFPlotter that writes what it was asked to draw.
func recordCDF(w io.Writer, title, xLabel, of string, series []webview.Series) error {
	fmt.Fprintf(w, "<svg>%s|%s|fraction of %s", title, xLabel, of)
	for _, s := range series {
		fmt.Fprintf(w, "|%s=%v", s.Name, s.Values)
	}
	fmt.Fprint(w, "</svg>")
	return nil
}

// bulletLike is shaped as experiment bullet-overhead's --json output.
const bulletLike = `{"format":"crystalball-experiment-bullet-overhead/1","seed":1,
 "without":{"download_s":{"n":3,"median":2,"sorted":[1,2,3]}},
 "with":{"download_s":{"n":3,"median":2.5,"sorted":[1.5,2.5,3.5]}},
 "runs":[{"config":"off","rounds":0,"gap_s":0.5,"label":"x","steering":{"vetoes":1}},{"config":"steer","rounds":12,"gap_s":1.25,"steering":{"vetoes":3}}]}`

func TestFiguresPlotsSamplesAsCDFsAndRowsAsBars(t *testing.T) {
	figs, err := webview.Figures([]byte(bulletLike), recordCDF)
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, f := range figs {
		titles = append(titles, f.Title)
	}
	if got, want := strings.Join(titles, "; "), "CDF of download_s; CDF of gap_s; gap_s by run; rounds by run; steering.vetoes by run"; got != want {
		t.Fatalf("figures %q, want %q", got, want)
	}
	if got, want := string(figs[0].SVG), "<svg>CDF of download_s|download_s|fraction of values|with=[1.5 2.5 3.5]|without=[1 2 3]</svg>"; got != want {
		t.Errorf("CDF drawn as %q, want %q", got, want)
	}
	if got, want := string(figs[1].SVG), "<svg>CDF of gap_s|gap_s|fraction of runs|runs=[0.5 1.25]</svg>"; got != want {
		t.Errorf("CDF over the runs drawn as %q, want %q", got, want)
	}
	bars := string(figs[3].SVG)
	for _, want := range []string{"<title>config off: 0</title>", "<title>config steer: 12</title>"} {
		if !strings.Contains(bars, want) {
			t.Errorf("the rounds bars lack %q:\n%s", want, bars)
		}
	}
}

func TestFiguresWithoutAPlotterDrawsBarsOnly(t *testing.T) {
	figs, err := webview.Figures([]byte(bulletLike), nil)
	if err != nil || len(figs) != 3 {
		t.Errorf("%d figures, %v; want the 3 bar charts", len(figs), err)
	}
}

func TestFiguresRejectsBadInput(t *testing.T) {
	deep := strings.Repeat(`{"a":`, webview.MaxFigureDepth+2) + "1" + strings.Repeat("}", webview.MaxFigureDepth+2)
	for _, in := range []string{"", "[1,2]", "{", `{"a":[1,2]} x`, `{"a":[1,2]} {}`, deep} {
		if _, err := webview.Figures([]byte(in), recordCDF); !errors.Is(err, webview.ErrFigures) {
			t.Errorf("Figures(%.20q): %v, want ErrFigures", in, err)
		}
	}
}

func TestFiguresStopsAtMaxFigures(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"runs":[{`)
	for i := range webview.MaxFigures + 10 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"f%02d":%d`, i, i)
	}
	b.WriteString(`}]}`)
	figs, err := webview.Figures([]byte(b.String()), nil)
	if err != nil || len(figs) != webview.MaxFigures {
		t.Errorf("%d figures, %v; want %d", len(figs), err, webview.MaxFigures)
	}
}

func FuzzFigures(f *testing.F) {
	f.Add([]byte(bulletLike))
	f.Add([]byte(`{"a":[[1,2],[{"b":1}]],"c":[-1,2]}`))
	f.Add([]byte(`{"runs":[{"seed":1,"x":1e308},{"seed":2,"x":-1e308}]}`))
	f.Add([]byte(`{"charts":[{"title":"t","kind":"bars","labels":["a"],"values":[1]},{"title":"c","kind":"cdf","of":"runs","series":[{"name":"s","values":[1,2]}]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		figs, err := webview.Figures(b, recordCDF)
		if err != nil && !errors.Is(err, webview.ErrFigures) {
			t.Fatalf("error %v does not wrap ErrFigures", err)
		}
		if len(figs) > webview.MaxFigures {
			t.Fatalf("%d figures, more than %d", len(figs), webview.MaxFigures)
		}
		for _, fig := range figs {
			if !strings.HasPrefix(string(fig.SVG), "<svg") {
				t.Fatalf("figure %q is not an SVG element", fig.Title)
			}
		}
	})
}
