package node

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// envelopeFormatV1 is the first byte of an encoded envelope;
// envelopeDatagramV1 the first byte of an encoded datagram (Envelope.Datagram
// set), whose layout is otherwise the same.
const (
	envelopeFormatV1   = 0xE1
	envelopeDatagramV1 = 0xE2
)

// ErrBadEnvelope is wrapped by every envelope decoding error other than an
// unknown message type (ErrUnknownMessageType).
var ErrBadEnvelope = errors.New("node: bad envelope")

// AppendEnvelope appends the wire encoding of env to dst:
//
//	0xE1 | uvarint From | uvarint To | uvarint CN | uvarint len(type) | type | msgpack body
//
// A datagram (env.Datagram) starts with 0xE2 instead. The body runs to the end of the buffer; the transport's framing delimits
// it. The message must pass CheckMessage.
func (r *Registry) AppendEnvelope(dst []byte, env Envelope) ([]byte, error) {
	if env.Msg == nil {
		return nil, fmt.Errorf("%w: nil message", ErrBadEnvelope)
	}
	if err := r.CheckMessage(env.Msg); err != nil {
		return nil, err
	}
	name := env.Msg.MessageType()
	format := byte(envelopeFormatV1)
	if env.Datagram {
		format = envelopeDatagramV1
	}
	dst = append(dst, format)
	dst = binary.AppendUvarint(dst, uint64(env.From))
	dst = binary.AppendUvarint(dst, uint64(env.To))
	dst = binary.AppendUvarint(dst, env.CN)
	dst = binary.AppendUvarint(dst, uint64(len(name)))
	dst = append(dst, name...)
	return encodeCanonical(dst, env.Msg)
}

// DecodeEnvelope decodes an envelope produced by AppendEnvelope. b is
// untrusted: header fields are bounds-checked and the body passes
// CheckMsgpack before it is decoded, so malformed input gives an error
// (wrapping ErrBadEnvelope or ErrUnknownMessageType), never a panic or an
// allocation beyond O(len(b)). The result does not alias b.
func (r *Registry) DecodeEnvelope(b []byte) (Envelope, error) {
	bad := func(what string) (Envelope, error) {
		return Envelope{}, fmt.Errorf("%w: %s", ErrBadEnvelope, what)
	}
	if len(b) == 0 || (b[0] != envelopeFormatV1 && b[0] != envelopeDatagramV1) {
		return bad("unknown format")
	}
	datagram := b[0] == envelopeDatagramV1
	rest := b[1:]
	var fields [4]uint64
	for i := range fields {
		v, k := binary.Uvarint(rest)
		if k <= 0 {
			return bad("truncated header")
		}
		fields[i] = v
		rest = rest[k:]
	}
	from, to, cn, nameLen := ID(fields[0]), ID(fields[1]), fields[2], fields[3]
	if from == None || to == None {
		return bad("sender or receiver is none")
	}
	if nameLen == 0 || nameLen > MaxTypeNameLen || nameLen > uint64(len(rest)) {
		return bad("message type name length")
	}
	name := string(rest[:nameLen])
	msg, err := r.DecodeMessage(name, rest[nameLen:])
	if err != nil {
		if errors.Is(err, ErrUnknownMessageType) {
			return Envelope{}, err
		}
		return Envelope{}, fmt.Errorf("%w: %w", ErrBadEnvelope, err)
	}
	return Envelope{From: from, To: to, CN: cn, Msg: msg, Datagram: datagram}, nil
}
