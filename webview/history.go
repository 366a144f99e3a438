package webview

import (
	"bufio"
	"fmt"
	"html"
	"io"
)

// History is a client history as the view draws it (the caller's
// node.History, rendered): a row per client node, each operation a bar
// from its invocation to its response, on the history's own order (a
// position per event: what judges real-time precedence).
type History struct {
	// Title says whose history it is ("the path's", "the run's").
	Title string `json:"title"`
	// Verdicts are the history properties' verdicts on it, one a line.
	Verdicts []string `json:"verdicts,omitempty"`
	// Clients are the rows, top to bottom.
	Clients []string `json:"clients"`
	// Ops are the operations; Events the history's length (positions
	// 0..Events-1).
	Ops    []HistoryOp `json:"ops"`
	Events int         `json:"events"`
}

// HistoryOp is one operation of a History.
type HistoryOp struct {
	// Client is the operation's row (an index into History.Clients).
	Client int `json:"client"`
	// Label is the operation and its result ("Write{V:1} -> ok").
	Label string `json:"label"`
	// Call and Return are the positions of its invocation and response:
	// Call -1 for an operation invoked before the history began, Return
	// -1 for one without a response (its bar runs to the end).
	Call   int `json:"call"`
	Return int `json:"return"`
	// When says when, in the run's time ("1.2s–1.5s").
	When string `json:"when,omitempty"`
}

// MaxHistoryOps bounds the operations WriteHistorySVG draws; a longer
// history's drawing stops there, saying so.
const MaxHistoryOps = 2000

// The history's geometry, in SVG user units: a row per client, a column
// per event.
const (
	historyLeft = 60
	historyTop  = 30
	historyRow  = 34
	historyCol  = 18
	historyBar  = 14
)

// WriteHistorySVG draws h as SVG, the shape of Porcupine's visualisation:
// a row per client, each operation a bar from its invocation's column to
// its response's (an open one, dashed, to the end; one invoked before the
// history began, from the left edge), labelled with the operation and its
// result, the time in its tooltip. The output is a pure function of h.
func WriteHistorySVG(w io.Writer, h History) error {
	ops := h.Ops
	cutShort := len(ops) > MaxHistoryOps
	if cutShort {
		ops = ops[:MaxHistoryOps]
	}
	bw := bufio.NewWriter(w)
	x := func(pos int) int { return historyLeft + (pos+1)*historyCol }
	end := h.Events + 1
	width := x(end) + 200
	height := historyTop + (len(h.Clients)+1)*historyRow
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	for i, c := range h.Clients {
		y := historyTop + i*historyRow
		fmt.Fprintf(bw, `<text x="8" y="%d">%s</text><path d="M%d %dH%d" stroke="#ddd"/>`+"\n",
			y+historyBar-3, html.EscapeString(c), historyLeft, y+historyBar/2, x(end))
	}
	for _, o := range ops {
		if o.Client < 0 || o.Client >= len(h.Clients) {
			continue
		}
		y := historyTop + o.Client*historyRow
		from, to, dash := x(o.Call), x(o.Return), ""
		if o.Call < 0 {
			from = historyLeft
		}
		if o.Return < 0 {
			to, dash = x(end), ` stroke-dasharray="4 3"`
		}
		fmt.Fprintf(bw, `<g><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="3" fill="#cfe3f5" stroke="#0072b2"%s/>`+
			`<text x="%d" y="%d">%s</text></g>`+"\n",
			html.EscapeString(o.Label+" "+o.When), from, y, max(to-from, 4), historyBar, dash, from+3, y+historyBar+11, html.EscapeString(o.Label))
	}
	if cutShort {
		fmt.Fprintf(bw, `<text x="8" y="%d">… %d more operations not drawn</text>`+"\n", height-8, len(h.Ops)-len(ops))
	}
	fmt.Fprintln(bw, `</svg>`)
	return bw.Flush()
}
