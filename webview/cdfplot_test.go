package webview

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite webview/testdata golden files")

// TestWriteCDFSVGGolden pins the plot byte for byte: it is a pure function
// of its input, and the file in testdata is what a reader opens.
func TestWriteCDFSVGGolden(t *testing.T) {
	var buf bytes.Buffer
	series := []Series{
		{Name: "without CrystalBall", Values: []float64{180, 200, 190, 230, 210}},
		{Name: "with CrystalBall", Values: []float64{185, 207, 196, 241, 215}},
	}
	if err := WriteCDFSVG(&buf, "20 MB download, 5 nodes", "download time (s)", series); err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "cdf.svg")
	if *updateGolden {
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("the plot differs from %s (rerun with -update after checking it):\n%s", golden, buf.String())
	}
	// Both curves end at fraction 1 (y = the top of the axis) at their maxima, 230 and 241 on an axis to 250.
	for _, end := range []string{"H576.0V40.0", "H600.2V40.0"} {
		if !strings.Contains(buf.String(), end) {
			t.Errorf("no curve ends with %s", end)
		}
	}
}

func TestWriteCDFSVGRejectsBadSamples(t *testing.T) {
	for name, series := range map[string][]Series{
		"none":     nil,
		"empty":    {{Name: "a"}},
		"NaN":      {{Name: "a", Values: []float64{1, math.NaN()}}},
		"infinite": {{Name: "a", Values: []float64{math.Inf(1)}}},
		"negative": {{Name: "a", Values: []float64{-1}}},
		"too many": {{"a", []float64{1}}, {"b", []float64{1}}, {"c", []float64{1}}, {"d", []float64{1}}, {"e", []float64{1}}},
	} {
		if err := WriteCDFSVG(&bytes.Buffer{}, "t", "x", series); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
