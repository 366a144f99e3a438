package emulation

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The client history of a run: every node.Invoke and node.Respond a
// handler made, in the order the loop ran them, with the node and the
// virtual time, recorded for a service that declares a history property
// (node.OnHistory). Its properties judge the whole run's history when a
// Result is taken.

// HistoryResult is a history property's verdict on the run's history.
type HistoryResult struct {
	Name string `json:"name"`
	// Operations counts the history's operations, Open those without a
	// response (their node reset or the run ended first).
	Operations int  `json:"operations"`
	Open       int  `json:"open"`
	Holds      bool `json:"holds"`
	// Error is the property's error on the shortest failing prefix.
	Error string `json:"error,omitempty"`
	// FirstViolation is the virtual time of the response after which the
	// history first fails (the end of its shortest failing prefix, for a
	// property whose failure lasts as the history grows, as
	// linearizability's does); meaningful only when Holds is false.
	FirstViolation time.Duration `json:"first_violation_ns,omitempty"`
}

// runHistory is the emulator's client history and its properties.
type runHistory struct {
	props  []node.Property
	events []node.HistoryEvent
	// judged are the verdicts on the first judgedN events.
	judged  []HistoryResult
	judgedN int
}

// recordHistory appends the marks n's step made to the run's history.
// A mark whose operation or result is outside Spec.Messages fails the
// run, as such a send does.
func (e *Emulator) recordHistory(n *emNode, marks []node.HistoryMark) error {
	if len(e.history.props) == 0 {
		return nil
	}
	for _, m := range marks {
		for _, msg := range []node.Message{m.Op, m.Result} {
			if msg == nil {
				continue
			}
			if err := e.messages.CheckMessage(msg); err != nil {
				e.fail(fmt.Errorf("emulation: node %v: %v of %s at %s: %w; rerun with seed=%d", n.id, m.Kind, msgType(msg), clock(e.now), err, e.cfg.Seed))
				return e.err
			}
		}
		e.history.events = append(e.history.events, node.HistoryEvent{Kind: m.Kind, Node: n.id, Op: m.Op, Result: m.Result, At: Epoch.Add(e.now)})
	}
	return nil
}

// History returns the run's client history so far (empty for a service
// that declares no history property). The events are the emulator's:
// read them before the next event.
func (e *Emulator) History() node.History {
	return node.History{Events: e.history.events}
}

// historyResults judges the run's history with every history property.
func (e *Emulator) historyResults() []HistoryResult {
	h := &e.history
	if len(h.props) == 0 {
		return nil
	}
	if h.judged != nil && h.judgedN == len(h.events) {
		return append([]HistoryResult(nil), h.judged...)
	}
	hist := node.History{Events: h.events}
	ops, opsErr := hist.Operations()
	open := 0
	for _, o := range ops {
		if !o.Done() {
			open++
		}
	}
	out := make([]HistoryResult, 0, len(h.props))
	for _, p := range h.props {
		r := HistoryResult{Name: p.Name, Operations: len(ops), Open: open, Holds: true}
		err := opsErr
		if err == nil {
			err = judgeHistory(p, hist)
		}
		if err != nil {
			at, first := firstFailure(p, h.events)
			if first == nil {
				first = err
			}
			r.Holds, r.Error, r.FirstViolation = false, first.Error(), at
		}
		out = append(out, r)
	}
	h.judged, h.judgedN = out, len(h.events)
	return append([]HistoryResult(nil), out...)
}

// judgeHistory runs a history property, a panic counting as a failure.
func judgeHistory(p node.Property, h node.History) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("history check panicked: %v", v)
		}
	}()
	return p.History(h)
}

// firstFailure returns the time of the response that ends the shortest
// failing prefix of events (by bisection over the prefixes that end at a
// response) and the property's error on it.
func firstFailure(p node.Property, events []node.HistoryEvent) (time.Duration, error) {
	var ends []int
	for i, ev := range events {
		if ev.Kind == node.Returned {
			ends = append(ends, i+1)
		}
	}
	judge := func(n int) error {
		h := node.History{Events: events[:n]}
		if _, err := h.Operations(); err != nil {
			return err
		}
		return judgeHistory(p, h)
	}
	k := sort.Search(len(ends), func(i int) bool { return judge(ends[i]) != nil })
	if k == len(ends) {
		if len(events) == 0 {
			return 0, nil
		}
		return events[len(events)-1].At.Sub(Epoch), nil
	}
	return events[ends[k]-1].At.Sub(Epoch), judge(ends[k])
}

// writeHistory renders the history properties' verdicts, one line each.
func writeHistory(b *strings.Builder, hs []HistoryResult) {
	for _, h := range hs {
		fmt.Fprintf(b, "history %s: %d operations (%d open)", h.Name, h.Operations, h.Open)
		if h.Holds {
			b.WriteString(", holds\n")
			continue
		}
		fmt.Fprintf(b, ", violated (first by the response at %v): %s\n", h.FirstViolation.Round(time.Millisecond), h.Error)
	}
}
