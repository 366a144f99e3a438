package consequence

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ErrBadReport is wrapped by the errors of decoding or replaying an
// ActorReport: an unknown action kind or message type, an undecodable
// body, a path that does not replay, or a replay that does not reproduce
// the reported violation.
var ErrBadReport = errors.New("consequence: bad report")

// ActionRecord is the serializable form of an actor-model action, as it
// appears in an ActorReport's JSON. Messages are carried as their type name
// and canonical msgpack body (base64 in JSON).
type ActionRecord struct {
	// Kind is "deliver", "transport-error", "timer", "app", "reset",
	// "break", "deliver-datagram", "drop-datagram", "refuse-send",
	// "crash", "restart", "partition", "heal" or "clock-jump".
	Kind    string  `json:"kind"`
	Node    node.ID `json:"node"`
	Peer    node.ID `json:"peer,omitempty"`
	Type    string  `json:"type,omitempty"`
	Body    []byte  `json:"body,omitempty"`
	Timer   string  `json:"timer,omitempty"`
	Silent  bool    `json:"silent,omitempty"`
	Pending bool    `json:"pending,omitempty"`
	// Pos is the message's position in its channel for "lose",
	// "duplicate" and "deliver-ahead" (delivery faults on messages the
	// service declares unreliable).
	Pos int32 `json:"pos,omitempty"`
	// Back, Cut and Side are a clock jump's direction and a partition's
	// shape ("isolate", "partial", "one-way" or "split") and split side.
	Back bool      `json:"back,omitempty"`
	Cut  string    `json:"cut,omitempty"`
	Side []node.ID `json:"side,omitempty"`
	// Text is the action's String, for people; it is not read back.
	Text string `json:"text,omitempty"`
}

// ActorReport is a violation found in an ActorModel, as data: the property,
// its kind and error, the depth, the fingerprint of the violating state and
// the path of actions from the model's start state. It marshals to JSON
// with encoding/json and replays with ActorModel.ReplayReport on a model
// built from the same inputs.
type ActorReport struct {
	Property    string         `json:"property"`
	Kind        string         `json:"kind"`
	Error       string         `json:"error"`
	Depth       int            `json:"depth"`
	Fingerprint string         `json:"fingerprint"`
	Path        []ActionRecord `json:"path"`
}

var actionKindNames = [...]string{
	ActDeliver: "deliver",
	ActTimer:   "timer",
	ActApp:     "app",
	ActReset:   "reset",
	ActBreak:   "break",

	ActDeliverDatagram: "deliver-datagram",
	ActDropDatagram:    "drop-datagram",
	ActRefuse:          "refuse-send",

	ActLose:         "lose",
	ActDuplicate:    "duplicate",
	ActDeliverAhead: "deliver-ahead",
	ActDelay:        "delay",
}

// Record returns the serializable form of a.
func (m *ActorModel) Record(a ActorAction) (ActionRecord, error) { return RecordAction(m.reg, a) }

// RecordAction returns the serializable form of a, its message encoded
// with reg (the registry of the service and of any layer it holds
// messages of): what ActorModel.Record does, for a caller without the
// model, such as a steering layer saving its error paths.
func RecordAction(reg *node.Registry, a ActorAction) (ActionRecord, error) {
	if r := (ActionRecord{Node: a.Node, Peer: a.Peer, Text: a.String()}); recordLasting(a, &r) {
		return r, nil
	}
	if int(a.Kind) >= len(actionKindNames) || actionKindNames[a.Kind] == "" {
		return ActionRecord{}, fmt.Errorf("%w: action kind %d", ErrBadReport, a.Kind)
	}
	r := ActionRecord{Kind: actionKindNames[a.Kind], Node: a.Node, Peer: a.Peer, Timer: a.Timer,
		Silent: a.Silent, Pending: a.Pending, Pos: a.Pos, Text: a.String()}
	if a.Kind == ActDeliver && a.Msg == nil {
		r.Kind = "transport-error"
	}
	if a.Msg != nil {
		body, err := reg.EncodeMessage(a.Msg)
		if err != nil {
			return ActionRecord{}, fmt.Errorf("%w: %w", ErrBadReport, err)
		}
		r.Type, r.Body = a.Msg.MessageType(), body
	}
	return r, nil
}

// Action decodes a record made by Record (its body is untrusted: it is
// decoded with the model's registry, which checks it first).
func (m *ActorModel) Action(r ActionRecord) (ActorAction, error) {
	a := ActorAction{Node: r.Node, Peer: r.Peer, Timer: r.Timer, Silent: r.Silent, Pending: r.Pending, Pos: r.Pos}
	switch r.Kind {
	case "transport-error":
		a.Kind = ActDeliver
		return a, nil
	case "deliver":
		a.Kind = ActDeliver
	case "timer":
		a.Kind = ActTimer
	case "app":
		a.Kind = ActApp
	case "reset":
		a.Kind = ActReset
	case "break":
		a.Kind = ActBreak
	case "deliver-datagram":
		a.Kind = ActDeliverDatagram
	case "drop-datagram":
		a.Kind = ActDropDatagram
	case "refuse-send":
		a.Kind = ActRefuse
	case "lose":
		a.Kind = ActLose
	case "duplicate":
		a.Kind = ActDuplicate
	case "deliver-ahead":
		a.Kind = ActDeliverAhead
	case "delay":
		a.Kind = ActDelay
	default:
		if ok, err := lastingAction(r, &a); ok {
			return a, err
		}
		return ActorAction{}, fmt.Errorf("%w: action kind %q", ErrBadReport, r.Kind)
	}
	if r.Type != "" {
		msg, err := m.reg.DecodeMessage(r.Type, r.Body)
		if err != nil {
			return ActorAction{}, fmt.Errorf("%w: %w", ErrBadReport, err)
		}
		a.Msg = msg
	}
	if a.Msg == nil && (a.Kind == ActDeliverDatagram || a.Kind == ActDropDatagram || a.Kind == ActRefuse || a.Kind >= ActLose) {
		return ActorAction{}, fmt.Errorf("%w: %s without a message", ErrBadReport, r.Kind)
	}
	return a, nil
}

// Report turns a violation found by a search of m into an ActorReport.
func (m *ActorModel) Report(v Violation[*GlobalState, ActorAction]) (ActorReport, error) {
	// The state's own fingerprint, which ReplayReport reaches: under
	// symmetry v.Fingerprint is its orbit's.
	r := ActorReport{Property: v.Property, Kind: v.Kind.String(), Depth: v.Depth, Fingerprint: v.Fingerprint.String()}
	if v.State != nil {
		r.Fingerprint = v.State.fp.String()
	}
	if v.Err != nil {
		r.Error = v.Err.Error()
	}
	for _, a := range v.Path {
		rec, err := m.Record(a.Act)
		if err != nil {
			return ActorReport{}, err
		}
		r.Path = append(r.Path, rec)
	}
	return r, nil
}

// ReplayReport replays r's path from m's start state and checks that it
// reproduces the report: the same fingerprint and, if props has r's
// property, the same error. It returns the actions and the final state.
func (m *ActorModel) ReplayReport(r ActorReport, props []Property[*GlobalState]) ([]Action[ActorAction], *GlobalState, error) {
	path := make([]Action[ActorAction], 0, len(r.Path))
	g := m.start
	for i, rec := range r.Path {
		a, err := m.Action(rec)
		if err != nil {
			return nil, nil, fmt.Errorf("step %d: %w", i+1, err)
		}
		next, ok := m.Next(g, a)
		if !ok {
			return nil, nil, fmt.Errorf("%w: step %d (%v) is not enabled", ErrBadReport, i+1, a)
		}
		act := Action[ActorAction]{Act: a}
		act.Node, _ = m.index(a.Node)
		act.Local = a.Kind != ActDeliver && a.Kind != ActDeliverDatagram && a.Kind < ActLose
		act.Fault = a.Kind >= ActLose
		path = append(path, act)
		g = next
	}
	if got := g.fp.String(); got != r.Fingerprint {
		return nil, nil, fmt.Errorf("%w: replay reached %s, report says %s", ErrBadReport, got, r.Fingerprint)
	}
	for _, p := range props {
		if p.Name != r.Property {
			continue
		}
		err := p.Check(g)
		if err == nil || err.Error() != r.Error {
			return nil, nil, fmt.Errorf("%w: %s on the replayed state: %v, report says %q", ErrBadReport, p.Name, err, r.Error)
		}
	}
	return path, g, nil
}
