package tool

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// timelineHistory is the client history at the end of tl's path, for the
// web view: the replayed state's (a check's or a report's path), or a
// re-run emulation's at its last step; nil when the service declares no
// history property or the path made no operation.
func timelineHistory(tl *timeline) *webview.History {
	var h node.History
	var spec node.Spec
	switch {
	case tl.replayedOnModel():
		h, spec = tl.states[len(tl.states)-1].History(), tl.m.Spec()
	case tl.rerunCfg != nil && len(tl.rerunCfg.Spec.PropertiesOf(node.HistoryKind)) > 0:
		v, err := tl.rerun(len(tl.steps))
		if err != nil {
			return nil
		}
		h, spec = v.history, tl.rerunCfg.Spec
	default:
		return nil
	}
	title := "the path's history"
	if tl.rerunCfg != nil {
		title = "the run's history"
	}
	return webHistory(title, h, spec.PropertiesOf(node.HistoryKind))
}

// replayedOnModel reports whether tl is a path replayed on its model,
// with every state (not an emulation trace).
func (tl *timeline) replayedOnModel() bool { return tl.states != nil && tl.m != nil }

// webHistory renders h with the verdicts of props on it; nil for an
// empty history.
func webHistory(title string, h node.History, props []node.Property) *webview.History {
	if len(h.Events) == 0 {
		return nil
	}
	ops, err := h.Operations()
	out := &webview.History{Title: title, Events: len(h.Events), Verdicts: historyVerdicts(h, props)}
	if err != nil {
		out.Verdicts = append(out.Verdicts, err.Error())
		return out
	}
	var ids []node.ID
	ids, out.Clients = historyClients(ops)
	out.Ops = historyOps(h, ops, ids)
	return out
}

// historyVerdicts are the verdicts of props on h: "NAME: holds" or
// "NAME: " and why not.
func historyVerdicts(h node.History, props []node.Property) []string {
	var verdicts []string
	for _, p := range props {
		verdict := "holds"
		if err := p.History(h); err != nil {
			verdict = err.Error()
		}
		verdicts = append(verdicts, fmt.Sprintf("%s: %s", p.Name, verdict))
	}
	return verdicts
}

// historyClients are the clients of ops, sorted, and their names.
func historyClients(ops []node.Operation) ([]node.ID, []string) {
	var ids []node.ID
	for _, o := range ops {
		ids = append(ids, o.Node)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	var names []string
	for _, id := range ids {
		names = append(names, id.String())
	}
	return ids, names
}

// historyOps renders ops, each with its client's index in ids and its
// times in h.
func historyOps(h node.History, ops []node.Operation, ids []node.ID) []webview.HistoryOp {
	var out []webview.HistoryOp
	for _, o := range ops {
		op := webview.HistoryOp{Client: slices.Index(ids, o.Node), Label: opLabel(o), Call: o.Call, Return: o.Return}
		if o.Early && o.Call >= 0 {
			op.Call = -1 // under way when the history began
		}
		op.When = opWhen(h, o)
		out = append(out, op)
	}
	return out
}

// opLabel renders an operation and its result.
func opLabel(o node.Operation) string {
	switch {
	case !o.Done():
		return node.MessageString(o.Op) + " -> ?"
	case o.Result == nil:
		return node.MessageString(o.Op) + " -> ok"
	}
	return node.MessageString(o.Op) + " -> " + node.MessageString(o.Result)
}

// opWhen renders an operation's times relative to the history's first
// event.
func opWhen(h node.History, o node.Operation) string {
	t0 := h.Events[0].At
	at := func(t time.Time) string { return t.Sub(t0).Round(time.Millisecond).String() }
	call, ret := "before", "open"
	if o.Call >= 0 {
		call = at(o.CallAt)
	}
	if o.Done() {
		ret = at(o.ReturnAt)
	}
	return fmt.Sprintf("(%s–%s)", call, ret)
}

// printHistory prints, after a replayed path's listing ('trace show'),
// the client history at its end: an operation a line, with the positions
// of its invocation and response in the history's order.
func printHistory(w io.Writer, tl *timeline) {
	if !tl.replayedOnModel() {
		return
	}
	wh := webHistory("client history at the end of the path", tl.states[len(tl.states)-1].History(), tl.m.Spec().PropertiesOf(node.HistoryKind))
	if wh == nil {
		return
	}
	fmt.Fprintf(w, "%s (%d operations, by invocation):\n", wh.Title, len(wh.Ops))
	for _, op := range wh.Ops {
		fmt.Fprintf(w, "  %s %s [%s,%s]\n", wh.Clients[op.Client], op.Label, historyPosition(op.Call, "before"), historyPosition(op.Return, "open"))
	}
	for _, v := range wh.Verdicts {
		fmt.Fprintf(w, "  %s\n", v)
	}
}

// historyPosition renders an operation's position i in the history's
// order, or none when it has none (negative: before the history began,
// or still open).
func historyPosition(i int, none string) string {
	if i < 0 {
		return none
	}
	return fmt.Sprint(i)
}
