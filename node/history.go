package node

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Client histories: what Jepsen, Elle and Porcupine check. A client
// operation is marked by the service that serves it: Invoke when the
// operation starts (a client node taking a call from its application, in
// HandleApp or when it starts the next queued call) and Respond when it
// completes with its result (when the reply arrives). The hosts record
// the marks with the node and its clock as a History — the emulator over
// the whole run, the explorer along each path, as part of the explored
// state, for services that declare a history property — and history
// properties (OnHistory; package node/linearizable for linearizability
// through Porcupine) judge it.
//
// An operation is named by its value: Respond names the operation as
// Invoke did (an equal message at the same node), and a response answers
// the oldest open invocation of an equal operation at that node. Both
// messages (the operation and the result) must be registered in
// Spec.Messages, like every message a service sends. A node that resets
// leaves its open operations open: they may or may not have taken effect.

// HistoryEventKind says whether a HistoryEvent starts or ends an
// operation.
type HistoryEventKind uint8

const (
	// Invoked starts an operation (Invoke).
	Invoked HistoryEventKind = iota + 1
	// Returned ends one with its result (Respond).
	Returned
)

// String returns "invoke" or "return".
func (k HistoryEventKind) String() string {
	switch k {
	case Invoked:
		return "invoke"
	case Returned:
		return "return"
	}
	return fmt.Sprintf("history-event(%d)", uint8(k))
}

// HistoryMark is one Invoke or Respond of a handler, as Effects carry it.
type HistoryMark struct {
	Kind HistoryEventKind
	// Op is the operation, as the service invoked it.
	Op Message
	// Result is a Returned mark's result (nil: none).
	Result Message
}

// HistoryRecorder is implemented by the Env of every host that records
// client histories (the core's). Services do not call it: they call
// Invoke and Respond, which are no-ops on an Env that does not record.
type HistoryRecorder interface {
	RecordHistory(HistoryMark)
}

// Invoke marks the start of the client operation op at this node. It is a
// no-op on an Env that records no history. op must not be nil.
func Invoke(env Env, op Message) { record(env, HistoryMark{Kind: Invoked, Op: op}) }

// Respond marks that the client operation op (equal to what Invoke was
// given at this node) completed with result (nil for none, e.g. a write's
// acknowledgement). It is a no-op on an Env that records no history. op
// must not be nil.
func Respond(env Env, op, result Message) {
	record(env, HistoryMark{Kind: Returned, Op: op, Result: result})
}

func record(env Env, m HistoryMark) {
	if m.Op == nil {
		panic(fmt.Sprintf("node: %v of a nil operation", m.Kind))
	}
	if r, ok := env.(HistoryRecorder); ok {
		r.RecordHistory(m)
	}
}

// RecordHistory implements HistoryRecorder: the mark joins the step's
// Effects.History.
func (e *coreEnv) RecordHistory(m HistoryMark) {
	fx := e.live()
	fx.History = append(fx.History, m)
}

// Client is an optional method of a Service's state: the client
// operations the node has invoked (Invoke) and not yet answered
// (Respond), oldest first. A history the explorer records from a
// snapshot (a steering round's) begins with their invocations, so that
// their responses along the explored future answer them; without it
// such a response answers an operation invoked before the history began.
// Outstanding must be deterministic and read-only, and return registered
// messages, like node.AppCaller's AppCalls.
type Client interface {
	Outstanding(self ID) []Message
}

// HistoryEvent is one event of a History: a mark, with the node that
// made it and the node's clock then.
type HistoryEvent struct {
	Kind   HistoryEventKind
	Node   ID
	Op     Message
	Result Message
	At     time.Time
	// Outstanding marks the invocation of an operation that was under
	// way when a history from a snapshot began (node.Client): it was
	// invoked earlier, at a time the history does not hold.
	Outstanding bool
}

// History is a client history: the marks of a run or of an explored
// path, in the order they happened (the order is what judges real-time
// precedence; At is the marking node's clock, which in the explorer moves
// only with timers).
type History struct {
	Events []HistoryEvent
	// Start is the state the history began at when it began in the middle
	// of a run (a steering round's snapshot): its operations that were
	// open then were invoked before the history began. Nil when it began
	// with the system, where every response answers an invocation before
	// it.
	Start View
}

// ErrUnmatchedResponse is wrapped by History.Operations for a response
// that answers no open invocation in a history that began with the
// system: a service that responds to an operation it never invoked, or
// twice.
var ErrUnmatchedResponse = errors.New("node: response to no open invocation")

// Operation is one client operation of a History: an invocation and its
// response.
type Operation struct {
	Node   ID
	Op     Message
	Result Message
	// Call and Return are the positions of the operation's events in
	// History.Events: Call is -1 for an operation invoked before the
	// history began, Return -1 for one that has no response (an open
	// operation: it may or may not have taken effect).
	Call, Return int
	// CallAt and ReturnAt are the events' times (zero without the event).
	CallAt, ReturnAt time.Time
	// Early marks an operation invoked before the history began (Call -1,
	// or an Outstanding invocation): what it returns may depend on what
	// happened before, which the history does not hold.
	Early bool
}

// Done reports whether the operation has its response.
func (o Operation) Done() bool { return o.Return >= 0 }

// Operations pairs the history's events into operations, in the order of
// their invocations (those invoked before the history began first, in
// the order of their responses). It fails, wrapping
// ErrUnmatchedResponse, on a response that answers no open invocation in
// a history that began with the system.
func (h History) Operations() ([]Operation, error) {
	var early, ops []Operation
	open := map[string][]int{} // node and operation → open positions in ops
	for i, ev := range h.Events {
		key, err := opKey(ev.Node, ev.Op)
		if err != nil {
			return nil, fmt.Errorf("node: history event %d: %w", i, err)
		}
		switch ev.Kind {
		case Invoked:
			open[key] = append(open[key], len(ops))
			ops = append(ops, Operation{Node: ev.Node, Op: ev.Op, Call: i, Return: -1, CallAt: ev.At, Early: ev.Outstanding})
		case Returned:
			if q := open[key]; len(q) > 0 {
				o := &ops[q[0]]
				o.Result, o.Return, o.ReturnAt = ev.Result, i, ev.At
				open[key] = q[1:]
				continue
			}
			if h.Start == nil {
				return nil, fmt.Errorf("%w: %v %s at event %d", ErrUnmatchedResponse, ev.Node, msgName(ev.Op), i)
			}
			early = append(early, Operation{Node: ev.Node, Op: ev.Op, Result: ev.Result, Call: -1, Return: i, ReturnAt: ev.At, Early: true})
		default:
			return nil, fmt.Errorf("node: history event %d has kind %v", i, ev.Kind)
		}
	}
	return append(early, ops...), nil
}

// opKey names an operation at a node by its type and canonical encoding.
func opKey(id ID, op Message) (string, error) {
	if op == nil {
		return "", errors.New("nil operation")
	}
	b, err := AppendCanonical([]byte(fmt.Sprintf("%d/%s/", id, op.MessageType())), op)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", op.MessageType(), err)
	}
	return string(b), nil
}

// MessageString renders a message for a person, as its type and its
// fields ("kv.Put{K:x V:1}"; an embedded Named is left out), "<nil>" for
// none: how histories name operations and results.
func MessageString(m Message) string {
	if m == nil {
		return "<nil>"
	}
	return m.MessageType() + strings.ReplaceAll(fmt.Sprintf("%+v", m), "Named:{} ", "")
}

func msgName(m Message) string {
	if m == nil {
		return "<nil>"
	}
	return m.MessageType()
}

// OnHistory declares a history property: check judges a client history
// (nil when it is acceptable, otherwise an error saying why not). It must
// be deterministic and must not modify the history; it runs on the whole
// run's history in the emulator and on every explored path's history in
// the explorer (which keeps the history as part of the state only for
// services that declare such a property), where it should be fast on
// histories that differ by one event from one it has judged.
func OnHistory(name string, check func(History) error) Property {
	return Property{Name: name, Kind: HistoryKind, Check: holdsOnEveryView, History: check}
}

// holdsOnEveryView is a history property's Check: a view alone never
// violates it.
func holdsOnEveryView(View) error { return nil }
