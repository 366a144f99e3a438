package webview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Bounds of Figures: how deep it walks a document, and how many plots it
// draws of one.
const (
	MaxFigureDepth = 32
	MaxFigures     = 32
)

// ErrFigures is wrapped by Figures' errors.
var ErrFigures = errors.New("webview: figures")

// Series is one curve of a CDF plot: a legend name and its sample.
type Series struct {
	Name   string    `json:"name"`
	Values []float64 `json:"values"`
}

// CDFPlotter draws the empirical CDFs of series as one SVG plot, at most
// MaxCDFSeries of them, its y axis the fraction of what the sample counts
// (of: "nodes", "runs"); WriteCDFSVGOf, which the experiments draw their
// --plot with too, is the one crystalball serve passes.
type CDFPlotter func(w io.Writer, title, xLabel, of string, series []Series) error

// MaxCDFSeries is how many series Figures puts in one CDF plot.
const MaxCDFSeries = 4

// Figures draws the figures of an experiment's --json result b, from the
// data it carries and nothing else:
//
//   - every array of numbers (a sample, e.g. a run's sorted download
//     times) is a CDF curve, samples of the same name in one plot, named
//     by where they are ("with", "without");
//   - every array of objects (the runs or seeds of an experiment) is a
//     table: a bar chart per numeric field (nested objects' fields by
//     dotted name, "steering.rounds"), a bar per row labelled by its seed,
//     run, config, name or bug field (else its index); and a field in
//     seconds (named *_s) of a table of two rows or more is also a
//     sample, its distribution over the rows.
//
// CDFs come first, then the bar charts, each in the order of their data
// (keys sorted). b must be one JSON object; bad JSON or nesting deeper
// than MaxFigureDepth is an error wrapping ErrFigures; at most MaxFigures
// plots are drawn. cdf nil draws no CDF. The result is a pure function of
// b (and cdf).
func Figures(b []byte, cdf CDFPlotter) ([]Figure, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %v", ErrFigures, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrFigures)
	}
	if charts, ok, err := declaredCharts(root); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return drawCharts(charts, cdf)
	}
	var c collector
	if err := c.walk(nil, root, 0); err != nil {
		return nil, err
	}
	return c.draw(cdf)
}

// collector gathers a document's samples and tables, in order.
type collector struct {
	samples []sample
	tables  []table
}

type sample struct {
	path   []string
	values []float64
	// of is what the values count, for the CDF's y axis ("runs").
	of string
}

type table struct {
	path []string
	rows []map[string]any
}

func (c *collector) walk(path []string, v any, depth int) error {
	if depth > MaxFigureDepth {
		return fmt.Errorf("%w: nested deeper than %d at %s", ErrFigures, MaxFigureDepth, strings.Join(path, "."))
	}
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // map order is random: figures must not be
		for _, k := range keys {
			if err := c.walk(append(slices.Clip(path), k), v[k], depth+1); err != nil {
				return err
			}
		}
	case []any:
		return c.array(path, v, depth)
	}
	return nil
}

// array records a sample (all numbers) or a table (all objects), and
// walks into the elements of anything else.
func (c *collector) array(path []string, v []any, depth int) error {
	if nums, ok := numbers(v); ok && len(nums) >= 2 {
		c.samples = append(c.samples, sample{path: path, values: nums, of: "values"})
		return nil
	}
	rows := make([]map[string]any, 0, len(v))
	for _, e := range v {
		if m, ok := e.(map[string]any); ok {
			rows = append(rows, m)
		}
	}
	if len(rows) > 0 && len(rows) == len(v) {
		c.tables = append(c.tables, table{path: path, rows: rows})
	}
	for i, e := range v {
		if err := c.walk(append(slices.Clip(path), fmt.Sprint(i)), e, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// numbers returns v's elements as finite numbers, if they all are.
func numbers(v []any) ([]float64, bool) {
	out := make([]float64, 0, len(v))
	for _, e := range v {
		n, ok := e.(json.Number)
		if !ok {
			return nil, false
		}
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, false
		}
		out = append(out, f)
	}
	return out, true
}

// draw renders the CDFs, then the bar charts, up to MaxFigures.
func (c *collector) draw(cdf CDFPlotter) ([]Figure, error) {
	flats := make([][]flatRow, len(c.tables))
	for i, t := range c.tables {
		flats[i] = make([]flatRow, len(t.rows))
		for j, r := range t.rows {
			flats[i][j] = flatten(r, "", 0, flatRow{})
		}
	}
	var out []Figure
	if cdf != nil {
		c.secondsSamples(flats)
		figs, err := c.drawCDFs(cdf)
		if err != nil {
			return nil, err
		}
		out = append(out, figs...)
	}
	for i, t := range c.tables {
		for _, f := range numericFields(flats[i]) {
			if len(out) >= MaxFigures {
				return out, nil
			}
			out = append(out, barFigure(t, flats[i], f))
		}
	}
	return out[:min(len(out), MaxFigures)], nil
}

// secondsSamples adds, for each table of at least two rows, a sample of
// every field in seconds (named *_s, as the experiments name durations)
// over its rows: the distribution over runs or seeds.
func (c *collector) secondsSamples(flats [][]flatRow) {
	for i, t := range c.tables {
		if len(t.rows) < 2 {
			continue
		}
		for _, f := range numericFields(flats[i]) {
			if !strings.HasSuffix(f, "_s") {
				continue
			}
			values := make([]float64, len(t.rows))
			for j := range t.rows {
				values[j] = flats[i][j][f]
			}
			c.samples = append(c.samples, sample{path: append(slices.Clip(t.path), f), values: values, of: rowNoun(t.path)})
		}
	}
}

// drawCDFs groups the samples by name (their last key, or the one before
// a "sorted") and draws each group, MaxCDFSeries curves a plot.
func (c *collector) drawCDFs(cdf CDFPlotter) ([]Figure, error) {
	groups := map[string][]Series{}
	of := map[string]string{}
	var order []string
	for _, s := range c.samples {
		name, where := sampleName(s.path)
		if _, ok := groups[name]; !ok {
			order = append(order, name)
			of[name] = s.of
		}
		groups[name] = append(groups[name], Series{Name: where, Values: s.values})
	}
	var out []Figure
	for _, name := range order {
		for series := range slices.Chunk(groups[name], MaxCDFSeries) {
			if series[0].Values == nil || negative(series) {
				continue // the plot's x axis starts at 0: not a sample of times or sizes
			}
			var buf bytes.Buffer
			title := "CDF of " + name
			if err := cdf(&buf, title, name, of[name], series); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrFigures, title, err)
			}
			out = append(out, Figure{Title: title, SVG: buf.Bytes()})
		}
	}
	return out, nil
}

// negative reports whether a series has a value below zero.
func negative(series []Series) bool {
	for _, s := range series {
		for _, v := range s.Values {
			if v < 0 {
				return true
			}
		}
	}
	return false
}

// sampleName splits a sample's path into its name and where it is.
func sampleName(path []string) (name, where string) {
	if len(path) == 0 {
		return "values", "document"
	}
	k := len(path) - 1
	if path[k] == "sorted" && k > 0 {
		k--
	}
	where = strings.Join(path[:k], ".")
	if where == "" {
		where = "document"
	}
	return path[k], where
}
