package webview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
)

// labelFields name a table's rows in bar charts, the first present wins.
var labelFields = []string{"run", "seed", "config", "name", "bug", "experiment"}

// maxRowDepth bounds how deep numericFields looks into a row's objects.
const maxRowDepth = 3

// flatRow is a row's numbers by dotted key ("steering.rounds").
type flatRow map[string]float64

// flatten collects the numbers of row, nested objects' by dotted key, down
// to maxRowDepth; label fields are not numbers to plot.
func flatten(row map[string]any, prefix string, depth int, out flatRow) flatRow {
	for k, v := range row {
		if prefix == "" && slices.Contains(labelFields, k) {
			continue
		}
		switch v := v.(type) {
		case json.Number:
			if f, err := v.Float64(); err == nil && !math.IsInf(f, 0) {
				out[prefix+k] = f
			}
		case map[string]any:
			if depth < maxRowDepth {
				flatten(v, prefix+k+".", depth+1, out)
			}
		}
	}
	return out
}

// numericFields are the keys that hold a number in every row, sorted.
func numericFields(rows []flatRow) []string {
	var out []string
	for k := range rows[0] {
		all := true
		for _, r := range rows[1:] {
			if _, ok := r[k]; !ok {
				all = false
				break
			}
		}
		if all {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// barFigure draws field of t's rows, a bar per row.
func barFigure(t table, flat []flatRow, field string) Figure {
	labels := make([]string, len(t.rows))
	values := make([]float64, len(t.rows))
	for i, r := range t.rows {
		labels[i] = rowLabel(r, i)
		values[i] = flat[i][field]
	}
	title := field + " by " + strings.TrimSuffix(rowNoun(t.path), "s")
	var buf bytes.Buffer
	WriteBarsSVG(&buf, title, labels, values)
	return Figure{Title: title, SVG: buf.Bytes()}
}

// rowLabel names row i by its first label field, else its index.
func rowLabel(r map[string]any, i int) string {
	for _, k := range labelFields {
		if v, ok := r[k]; ok {
			if s := fmt.Sprint(v); s != "" {
				return cutLabel(k + " " + s)
			}
		}
	}
	return fmt.Sprint(i)
}

// maxLabel is the most characters of a bar's label drawn (a 64-bit seed
// is 20 digits) below the chart.
const maxLabel = 14

// cutLabel shortens a label to maxLabel characters.
func cutLabel(s string) string {
	if r := []rune(s); len(r) > maxLabel {
		return string(r[:maxLabel-1]) + "…"
	}
	return s
}

// The bar chart's geometry, in SVG user units.
const (
	barsHeight = 300
	barsTop    = 40
	barsBottom = 70
	barsLeft   = 80
	barsWidth  = 36 // per bar
)

// WriteBarsSVG draws values as a bar chart, one bar per label, the value
// printed on each bar; the y axis runs from 0 (or the least negative
// value) to the largest. The output is a pure function of its arguments.
func WriteBarsSVG(w io.Writer, title string, labels []string, values []float64) error {
	lo, hi := 0.0, 0.0
	for _, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi == lo {
		hi = lo + 1
	}
	plotH := float64(barsHeight - barsTop - barsBottom)
	y := func(v float64) float64 { return barsTop + (hi-v)/(hi-lo)*plotH }
	width := barsLeft + max(len(values), 4)*barsWidth + 20
	width = max(width, 7*len([]rune(title))+40) // room for the title, centred above
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, barsHeight, width, barsHeight)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/><text x="%d" y="22" text-anchor="middle" font-size="13">%s</text>`+"\n", width, barsHeight, width/2, html.EscapeString(title))
	fmt.Fprintf(bw, `<path d="M%d %.1fV%.1fH%d" stroke="black" fill="none"/>`+"\n", barsLeft, y(hi), y(lo), width-10)
	fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="end">%s</text><text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n",
		barsLeft-6, y(hi)+4, formatValue(hi), barsLeft-6, y(lo)+4, formatValue(lo))
	for i, v := range values {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			v = 0
		}
		x := barsLeft + i*barsWidth + 6
		top, bottom := y(max(v, 0)), y(min(v, 0))
		fmt.Fprintf(bw, `<rect class="bar" x="%d" y="%.1f" width="%d" height="%.1f" fill="#0072b2"><title>%s: %s</title></rect>`+"\n",
			x, top, barsWidth-12, bottom-top, html.EscapeString(labels[i]), formatValue(v))
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="middle" font-size="9">%s</text>`+"\n", x+(barsWidth-12)/2, top-3, formatValue(v))
		lx, ly := x+(barsWidth-12)/2, barsHeight-barsBottom+12
		fmt.Fprintf(bw, `<text x="%d" y="%d" text-anchor="end" transform="rotate(-45 %d %d)">%s</text>`+"\n", lx, ly, lx, ly, html.EscapeString(labels[i]))
	}
	fmt.Fprintln(bw, "</svg>")
	return bw.Flush()
}

// formatValue prints a bar's value compactly.
func formatValue(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
