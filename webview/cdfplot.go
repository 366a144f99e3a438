package webview

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// The plot's geometry, in SVG user units.
const (
	cdfWidth, cdfHeight = 640, 400
	cdfLeft, cdfRight   = 70, 20
	cdfTop, cdfBottom   = 40, 60
)

// cdfColours are the curves' colours, in series order (colour-blind safe).
var cdfColours = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7"}

// WriteCDFSVG writes the empirical cumulative distribution of each
// series as a step curve in one SVG plot (the paper's Figure 17 form):
// the x axis is the value from 0 to a rounded maximum, the y axis the
// fraction of the sample at or below it. The output is a pure function of
// its arguments, byte for byte, so it can be a golden file. It fails on
// no series, an empty or non-finite sample, more series than colours, or
// a write error.
func WriteCDFSVG(w io.Writer, title, xLabel string, series []Series) error {
	return WriteCDFSVGOf(w, title, xLabel, "nodes", series)
}

// WriteCDFSVGOf is WriteCDFSVG with the y axis naming what the sample
// counts: "fraction of " + of ("nodes", "runs").
func WriteCDFSVGOf(w io.Writer, title, xLabel, of string, series []Series) error {
	if len(series) == 0 || len(series) > len(cdfColours) {
		return fmt.Errorf("webview: a CDF plot takes 1 to %d series, not %d", len(cdfColours), len(series))
	}
	xMax := 0.0
	for _, s := range series {
		if len(s.Values) == 0 {
			return fmt.Errorf("webview: CDF series %q is empty", s.Name)
		}
		for _, v := range s.Values {
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
				return fmt.Errorf("webview: CDF series %q has the value %v (want finite, ≥ 0)", s.Name, v)
			}
			xMax = max(xMax, v)
		}
	}
	step := niceStep(xMax / 5)
	xMax = math.Ceil(xMax/step) * step
	if xMax == 0 {
		xMax, step = 1, 0.2
	}
	bw := bufio.NewWriter(w)
	p := cdfPlot{w: bw, xMax: xMax, of: of}
	p.frame(title, xLabel, step)
	for i, s := range series {
		p.curve(s.Values, cdfColours[i])
		p.legend(i, s.Name, cdfColours[i])
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// cdfPlot maps data to SVG coordinates and writes the elements.
type cdfPlot struct {
	w    *bufio.Writer
	xMax float64
	of   string // what the y axis is a fraction of
}

func (p cdfPlot) x(v float64) float64 {
	return cdfLeft + v/p.xMax*(cdfWidth-cdfLeft-cdfRight)
}

func (p cdfPlot) y(f float64) float64 {
	return cdfHeight - cdfBottom - f*(cdfHeight-cdfTop-cdfBottom)
}

// frame writes the header, the title, the axes, their ticks and labels.
func (p cdfPlot) frame(title, xLabel string, step float64) {
	w := p.w
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		cdfWidth, cdfHeight, cdfWidth, cdfHeight)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", cdfWidth, cdfHeight)
	fmt.Fprintf(w, `<text x="%d" y="24" text-anchor="middle" font-size="14">%s</text>`+"\n", cdfWidth/2, xmlEscape(title))
	fmt.Fprintf(w, `<path d="M%.1f %.1fH%.1fM%.1f %.1fV%.1f" stroke="black" fill="none"/>`+"\n",
		p.x(0), p.y(0), p.x(p.xMax), p.x(0), p.y(0), p.y(1))
	for v := 0.0; v <= p.xMax+step/2; v += step {
		fmt.Fprintf(w, `<path d="M%.1f %.1fv5" stroke="black"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n",
			p.x(v), p.y(0), p.x(v), p.y(0)+18, formatTick(v))
	}
	for f := 0.0; f <= 1.0001; f += 0.2 {
		fmt.Fprintf(w, `<path d="M%.1f %.1fh-5" stroke="black"/><path d="M%.1f %.1fH%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" text-anchor="end">%.1f</text>`+"\n",
			p.x(0), p.y(f), p.x(0), p.y(f), p.x(p.xMax), p.x(0)-8, p.y(f)+4, f)
	}
	fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", p.x(p.xMax/2), cdfHeight-20, xmlEscape(xLabel))
	fmt.Fprintf(w, `<text x="18" y="%.1f" text-anchor="middle" transform="rotate(-90 18 %.1f)">fraction of %s</text>`+"\n",
		p.y(0.5), p.y(0.5), xmlEscape(p.of))
}

// curve writes the empirical CDF of values as one step path.
func (p cdfPlot) curve(values []float64, colour string) {
	sorted := slices.Clone(values)
	slices.Sort(sorted)
	var d strings.Builder
	fmt.Fprintf(&d, "M%.1f %.1f", p.x(0), p.y(0))
	n := float64(len(sorted))
	for i, v := range sorted {
		fmt.Fprintf(&d, "H%.1fV%.1f", p.x(v), p.y(float64(i+1)/n))
	}
	fmt.Fprintf(p.w, `<path d="%s" stroke="%s" stroke-width="2" fill="none"/>`+"\n", d.String(), colour)
}

// legend writes series i's swatch and name in the upper left corner,
// where a CDF's curves rarely are (they rise to the right).
func (p cdfPlot) legend(i int, name, colour string) {
	y := p.y(1) + 20 + float64(i)*18
	x := p.x(0) + 20
	fmt.Fprintf(p.w, `<path d="M%.1f %.1fh24" stroke="%s" stroke-width="2"/><text x="%.1f" y="%.1f">%s</text>`+"\n",
		x, y, colour, x+30, y+4, xmlEscape(name))
}

// niceStep rounds raw up to 1, 2 or 5 times a power of ten (0 for 0).
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 0
	}
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*pow >= raw {
			return m * pow
		}
	}
	return 10 * pow
}

// formatTick renders a tick value without trailing zeros.
func formatTick(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }
