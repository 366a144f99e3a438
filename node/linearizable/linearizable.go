// Package linearizable checks client histories (node.History) for
// linearizability through github.com/anishathalye/porcupine, the checker
// etcd's robustness tests use, against a sequential model the user gives
// (Model; Register and KV are ready-made). Property declares it as a
// service's history property, which the emulator judges on a run's
// whole history and the explorer on every path's.
//
// An operation is an invocation and its response as the service marked
// them (node.Invoke, node.Respond), ordered by the history's order: a
// response precedes an invocation that comes after it, and everything
// else overlaps. An operation without a response may have taken effect
// or not: it may be placed anywhere after its invocation, and its model
// Step is told it has no result. In a history that begins at a snapshot
// (node.History.Start set) the operations invoked before it (answered
// without an invocation, or under way at the start: node.Client) may have
// seen what the history does not hold: their results are not judged, as
// an open operation's; the object's state at the start is any of those
// Model.InitFrom gives (without it such a history is not judged).
//
// Determinism: a verdict is a pure function of the history and the model
// (no timeout, no clock). Porcupine checks each part of a partitioned
// history on a goroutine of its own that it joins before returning; this
// package checks the parts one after the other.
package linearizable

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ErrNotLinearizable is wrapped by a failing Check's error.
var ErrNotLinearizable = errors.New("linearizable: history is not linearizable")

// Model is a sequential specification of the object a service serves.
// Init and Step are required; the rest are optional. Every function must
// be deterministic and must not modify its arguments (Step returns a new
// state).
type Model struct {
	// Init returns the object's initial state.
	Init func() any
	// InitFrom returns the states the object may be in at view, the start
	// of a history that begins in the middle of a run (a steering round's
	// snapshot), for an operation that starts after it: the states before
	// and after every operation under way then (a register's value at
	// each replica, say), since those may take effect later. Nil, or no state: such a history is not judged (it
	// holds), since the object's state there is unknown (the view may
	// hold none of the nodes that know it).
	InitFrom func(view node.View) []any
	// Step applies the operation op with its result (done) or without
	// one (done false: the operation may or may not have taken effect, and
	// nobody saw its result — Step must accept it, applying its effect if
	// it has one). It returns whether the object could have answered so,
	// and the next state.
	Step func(state any, op, result node.Message, done bool) (bool, any)
	// Equal reports whether two states are equal (nil: ==).
	Equal func(a, b any) bool
	// Partition names the independent part of the object op touches (a
	// key-value store's key): a history is linearizable exactly when the
	// history of each part is. Nil: the object is one part.
	Partition func(op node.Message) string
	// Describe renders an operation (nil: "zoo-register.Write{V:1} ->
	// ok", "zoo-register.Read{} -> zoo-register.Value{V:1}", "… -> ?"
	// without a result).
	Describe func(op, result node.Message, done bool) string
	// DescribeState renders a state (nil: %v).
	DescribeState func(state any) string
}

// Property declares the history property name: the service's client
// history is linearizable with respect to m.
func Property(name string, m Model) node.Property {
	return node.OnHistory(name, func(h node.History) error { return Check(h, m) })
}

// outcome is an operation's output as porcupine sees it: its result, if
// it has one (done), and whether the result is judged (not for an
// operation invoked before the history began).
type outcome struct {
	result       node.Message
	done, judged bool
}

// Check returns nil when h is linearizable with respect to m, and
// otherwise an error wrapping ErrNotLinearizable that lists the
// operations of the first part that is not (or node.History.Operations's
// error).
func Check(h node.History, m Model) error {
	if m.Init == nil || m.Step == nil {
		return errors.New("linearizable: Model needs Init and Step")
	}
	if h.Start != nil && m.InitFrom == nil {
		return nil
	}
	parts, err := partition(h, m)
	if err != nil {
		return err
	}
	if h.Start != nil && len(m.InitFrom(h.Start)) == 0 {
		return nil // the view does not say what state the object is in
	}
	pm := m.porcupine(h.Start)
	for _, p := range parts {
		if !porcupine.CheckOperations(pm, p.ops) {
			return fmt.Errorf("%w%s: %s", ErrNotLinearizable, p.label(), describeOps(m, p.ops))
		}
	}
	return nil
}

// part is the operations of one part of the object, as porcupine takes
// them: calls and returns at positions in the history (an operation
// invoked before the history began calls at -1, one without a response
// returns after the history's end).
type part struct {
	key string
	ops []porcupine.Operation
}

func (p part) label() string {
	if p.key == "" {
		return ""
	}
	return fmt.Sprintf(" (part %q)", p.key)
}

// partition turns h into porcupine's operations, by part in the order of
// their first operation.
func partition(h node.History, m Model) ([]part, error) {
	ops, err := h.Operations()
	if err != nil {
		return nil, err
	}
	clients := clientIndex(ops)
	var parts []part
	index := map[string]int{}
	end := int64(len(h.Events))
	for _, o := range ops {
		key := ""
		if m.Partition != nil {
			key = m.Partition(o.Op)
		}
		k, ok := index[key]
		if !ok {
			k = len(parts)
			index[key] = k
			parts = append(parts, part{key: key})
		}
		call, ret := int64(o.Call), int64(o.Return)
		if !o.Done() {
			ret = end + 1
		}
		// An operation invoked before the history began may have seen
		// what the history does not hold: its result is not judged.
		parts[k].ops = append(parts[k].ops, porcupine.Operation{
			ClientId: clients[o.Node], Input: o.Op, Call: call, Output: outcome{o.Result, o.Done(), o.Done() && !o.Early}, Return: ret,
			Metadata: o.Node.String(),
		})
	}
	return parts, nil
}

// clientIndex numbers the operations' nodes from 0, in ID order
// (porcupine's visualisation draws a row per client).
func clientIndex(ops []node.Operation) map[node.ID]int {
	var ids []node.ID
	for _, o := range ops {
		ids = append(ids, o.Node)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make(map[node.ID]int, len(ids))
	for i, id := range ids {
		out[id] = i
	}
	return out
}

// porcupine returns m as porcupine's model, starting from m.Init or, for
// a history that began at start, from every state m.InitFrom gives.
func (m Model) porcupine(start node.View) porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Init: func() []any {
			if start != nil {
				return m.InitFrom(start)
			}
			return []any{m.Init()}
		},
		Step: func(state, input, output any) []any {
			o := output.(outcome)
			ok, next := m.Step(state, input.(node.Message), o.result, o.judged)
			if !ok {
				return nil
			}
			return []any{next}
		},
		Equal: m.Equal,
		DescribeOperation: func(input, output any) string {
			o := output.(outcome)
			return m.describe(input.(node.Message), o.result, o.done)
		},
		DescribeState: m.DescribeState,
	}
	if nm.DescribeState == nil {
		nm.DescribeState = func(s any) string { return fmt.Sprintf("%v", s) }
	}
	return nm.ToModel()
}

// describe renders an operation.
func (m Model) describe(op, result node.Message, done bool) string {
	if m.Describe != nil {
		return m.Describe(op, result, done)
	}
	switch {
	case !done:
		return fmt.Sprintf("%s -> ?", node.MessageString(op))
	case result == nil:
		return fmt.Sprintf("%s -> ok", node.MessageString(op))
	}
	return fmt.Sprintf("%s -> %s", node.MessageString(op), node.MessageString(result))
}

// describeOpsMax bounds the operations an error lists.
const describeOpsMax = 12

// describeOps lists a part's operations for an error: "n3 write(1) -> ok
// [2,5]; n4 read -> 0 [6,9]" (the events' positions in the history).
func describeOps(m Model, ops []porcupine.Operation) string {
	var b strings.Builder
	for i, o := range ops {
		if i == describeOpsMax {
			fmt.Fprintf(&b, "; … %d more", len(ops)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		out := o.Output.(outcome)
		ret := fmt.Sprint(o.Return)
		if !out.done {
			ret = "open"
		}
		call := fmt.Sprint(o.Call)
		if o.Call < 0 || (out.done && !out.judged) {
			call = "before" // invoked before the history began
		}
		fmt.Fprintf(&b, "%v %s [%s,%s]", o.Metadata, m.describe(o.Input.(node.Message), out.result, out.done), call, ret)
	}
	return b.String()
}
