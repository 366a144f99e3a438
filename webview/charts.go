package webview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Chart is a figure a document declares in its "charts" field (the
// experiments' --json results do): the charts that carry the
// experiment's figures, with their axes named, drawn instead of a chart
// per numeric field. Kind "cdf" draws Series as empirical CDFs, its y
// axis the fraction of Of; kind "bars" draws Values, a bar per Labels
// entry, its y axis YLabel.
type Chart struct {
	Title  string    `json:"title"`
	Kind   string    `json:"kind"`
	XLabel string    `json:"x,omitempty"`
	YLabel string    `json:"y,omitempty"`
	Of     string    `json:"of,omitempty"`
	Series []Series  `json:"series,omitempty"`
	Labels []string  `json:"labels,omitempty"`
	Values []float64 `json:"values,omitempty"`
}

// Headline is the figure a person reads first on a document's page,
// beside the paper's: what is measured, this run's value and the paper's
// (with where it is reported). The experiments' --json results carry it
// as "headline".
type Headline struct {
	Figure   string `json:"figure"`
	Measured string `json:"measured"`
	Paper    string `json:"paper"`
}

// declaredCharts reads a document's "charts"; ok is false when it has
// none.
func declaredCharts(root map[string]any) (charts []Chart, ok bool, err error) {
	v, ok := root["charts"]
	if !ok {
		return nil, false, nil
	}
	b, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(b, &charts)
	}
	if err != nil {
		return nil, true, fmt.Errorf("%w: charts: %v", ErrFigures, err)
	}
	return charts, true, nil
}

// drawCharts draws declared charts, at most MaxFigures.
func drawCharts(charts []Chart, cdf CDFPlotter) ([]Figure, error) {
	var out []Figure
	for _, c := range charts[:min(len(charts), MaxFigures)] {
		var buf bytes.Buffer
		switch c.Kind {
		case "cdf":
			if cdf == nil || len(c.Series) == 0 || negative(c.Series) {
				continue
			}
			of := c.Of
			if of == "" {
				of = "values"
			}
			if err := cdf(&buf, c.Title, c.XLabel, of, c.Series[:min(len(c.Series), MaxCDFSeries)]); err != nil {
				return nil, fmt.Errorf("%w: %s: %v", ErrFigures, c.Title, err)
			}
		case "bars":
			if len(c.Labels) != len(c.Values) || len(c.Values) == 0 {
				return nil, fmt.Errorf("%w: %s: %d labels for %d values", ErrFigures, c.Title, len(c.Labels), len(c.Values))
			}
			title := c.Title
			if c.YLabel != "" {
				title += " (" + c.YLabel + ")"
			}
			WriteBarsSVG(&buf, title, c.Labels, c.Values)
		default:
			return nil, fmt.Errorf("%w: %s: kind %q (want cdf or bars)", ErrFigures, c.Title, c.Kind)
		}
		out = append(out, Figure{Title: c.Title, SVG: buf.Bytes()})
	}
	return out, nil
}

// rowNoun names what a table's rows are, from its path: "per_run" and
// "runs" are runs, "seeds" seeds.
func rowNoun(path []string) string {
	if len(path) == 0 {
		return "rows"
	}
	n := strings.TrimPrefix(path[len(path)-1], "per_")
	n = strings.ReplaceAll(n, "_", " ")
	if !strings.HasSuffix(n, "s") {
		n += "s"
	}
	return n
}
