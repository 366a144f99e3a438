package node

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
)

// Message is a service message (or an application call, which uses the same
// machinery). A message is a plain Go struct whose exported fields are
// encoded with msgpack; it is passed by value and must be registered under
// its MessageType name before it can cross a wire or a checkpoint.
//
// Handlers must treat a received message as read-only, and a sender must not
// modify a message after passing it to Env.Send: in emulation and exploration
// the same value may be delivered along many alternative futures.
//
// msgpack encodes a struct as a map keyed by field name unless it carries
// msgpack's marker field,
//
//	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
//	_msgpack struct{} `msgpack:",as_array"`
//
// which makes it an array of its fields in declaration order: smaller and
// faster, but field order is then part of the format (append fields, never
// reorder), and an array decodes only into a struct with that many
// fields, where a map tolerates fields added or removed between versions.
// The bundled services mark their messages so. Only msgpack's reflection
// reads the marker, so staticcheck reports it unused (U1000) unless it
// carries the directive above.
//
// A message names itself by embedding Named[T], which derives the name
// from its Go type ("randtree.Join"; the bundled services do so), or by a
// MessageType method of its own: the way to keep a name across a rename,
// or to name the messages of a package main ("lock.Grant", not
// "main.Grant", in examples/lock).
type Message interface {
	// MessageType returns the message's stable type name. It is what the
	// wire carries, so it must not change between versions of a service;
	// it must be non-empty, at most MaxTypeNameLen bytes, and unique
	// within a service.
	MessageType() string
}

// InFlightFormer is an optional method of a Message that carries bulk its
// receiver's handler never reads — a file block's payload, which only costs
// its size on the wire. A snapshot records a message that was in flight at
// its cut (package snapshot), ships it to the gathering node and hands it
// to the explorer, where only its effect on the receiver's state matters;
// InFlightForm returns the message as it is recorded there: the same type
// with the bulk left out. The contract: delivering InFlightForm() to a
// handler leaves the same state and sends the same messages as delivering
// the message itself (a service whose handler reads the bulk must not
// implement it). The recorded form is what replays, reports and the
// explorer see; the live wire, the emulator's links and the service always
// carry the whole message.
type InFlightFormer interface {
	InFlightForm() Message
}

// MaxTypeNameLen bounds a message type name; the envelope decoder refuses
// longer names before looking them up.
const MaxTypeNameLen = 64

// Registry errors.
var (
	// ErrUnknownMessageType: a name or Go type that was never registered.
	ErrUnknownMessageType = errors.New("node: unknown message type")
	// ErrDuplicateMessageType: two registrations for one name.
	ErrDuplicateMessageType = errors.New("node: duplicate message type")
)

// Registry maps message type names to Go types. It is built once, when a
// service is set up, and is read-only afterwards, so it is safe for
// concurrent use after construction.
type Registry struct {
	byName map[string]reflect.Type
}

// NewRegistry registers the given prototypes (zero values are fine). Each
// must be a struct value (not a pointer) with a valid, unique MessageType.
func NewRegistry(prototypes ...Message) (*Registry, error) {
	r := &Registry{byName: make(map[string]reflect.Type, len(prototypes))}
	for _, p := range prototypes {
		if p == nil {
			return nil, errors.New("node: nil message prototype")
		}
		t := reflect.TypeOf(p)
		if t.Kind() != reflect.Struct {
			return nil, fmt.Errorf("node: message %v: must be a struct value, not %v", t, t.Kind())
		}
		name := p.MessageType()
		if name == "" || len(name) > MaxTypeNameLen {
			return nil, fmt.Errorf("node: message %v: type name %q must be 1..%d bytes", t, name, MaxTypeNameLen)
		}
		if prev, ok := r.byName[name]; ok {
			return nil, fmt.Errorf("%w: %q used by %v and %v", ErrDuplicateMessageType, name, prev, t)
		}
		r.byName[name] = t
	}
	return r, nil
}

// Names returns the registered type names in ascending order.
func (r *Registry) Names() []string {
	names := make([]string, 0, len(r.byName))
	for n := range r.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Has reports whether m's type is registered under its name.
func (r *Registry) Has(m Message) bool {
	t, ok := r.byName[m.MessageType()]
	return ok && t == reflect.TypeOf(m)
}

// CheckMessage is the one rule every host applies to the messages a
// service uses: every message it sends (Env.Send, Env.SendDatagram) and
// every application call it is given must be in its Spec.Messages, that is
// registered in r under its MessageType with its own Go type. It returns
// nil for such a message and otherwise an error wrapping
// ErrUnknownMessageType that names the type and says what to register.
//
// A message outside the registry cannot cross a wire or a checkpoint, so
// accepting it in one host would hide a bug that breaks another. Every
// host calls this (or CheckSends) and treats the error as the service's
// bug, never as a behaviour: the explorer (consequence) rejects the model
// — NewActorModel* fail, and a search or walk that meets such a send or
// call fails with consequence.ErrInvalidModel —, the emulator fails the
// run, nodetest fails the command, and the live runtime refuses the call
// (Submit), or logs the send and reports a transport error for its peer
// since a deployed node keeps running.
func (r *Registry) CheckMessage(m Message) error {
	if m == nil {
		return fmt.Errorf("%w: nil message", ErrUnknownMessageType)
	}
	name := m.MessageType()
	t, ok := r.byName[name]
	switch {
	case !ok:
		return fmt.Errorf("%w: %q (%T) is not in Spec.Messages", ErrUnknownMessageType, name, m)
	case t != reflect.TypeOf(m):
		return fmt.Errorf("%w: %q is registered as %v, not %T (register a struct value, not a pointer)", ErrUnknownMessageType, name, t, m)
	}
	return nil
}

// CheckSends applies CheckMessage to the message of every send, in order,
// and returns the first error, naming the envelope's sender and receiver.
func (r *Registry) CheckSends(sends []Envelope) error {
	for i := range sends {
		if err := r.CheckMessage(sends[i].Msg); err != nil {
			return fmt.Errorf("node: %v sent to %v: %w", sends[i].From, sends[i].To, err)
		}
	}
	return nil
}

// EncodeMessage returns the canonical msgpack encoding of m's body. The
// result is freshly allocated and owned by the caller. m must pass
// CheckMessage.
func (r *Registry) EncodeMessage(m Message) ([]byte, error) {
	if err := r.CheckMessage(m); err != nil {
		return nil, err
	}
	return encodeCanonical(nil, m)
}

// DecodeMessage decodes body as the message type registered under name.
// body is untrusted: it is structurally checked (CheckMsgpack) before
// decoding, so a hostile length header yields an error, not an allocation,
// and it is refused (ErrDecodeBudget) when decoding it would allocate more
// than DecodeBudgetFactor times its size plus DecodeBudgetSlack bytes.
// The returned message does not alias body.
func (r *Registry) DecodeMessage(name string, body []byte) (Message, error) {
	t, ok := r.byName[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownMessageType, name)
	}
	if err := CheckMsgpack(body, MaxMsgpackDepth); err != nil {
		return nil, fmt.Errorf("node: message %q: %w", name, err)
	}
	if err := checkDecodeBudget(body, t); err != nil {
		return nil, fmt.Errorf("node: message %q: %w", name, err)
	}
	v := reflect.New(t)
	if err := unmarshalMsgpack(body, v.Interface()); err != nil {
		return nil, fmt.Errorf("node: message %q: %w", name, err)
	}
	return v.Elem().Interface().(Message), nil
}
