package replayed

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// input is one logged handler call. It is immutable once logged and
// shared by every clone whose log holds it.
type input struct {
	kind  node.EventKind
	at    time.Time
	peer  node.ID // the sender, the broken peer or the refused addressee
	timer string
	msg   node.Message
	// rand is the node's random source as the handler first drew from it
	// (hasRand): a replay hands the handler this state.
	rand    node.Rand
	hasRand bool
	// obs is the 64-bit xxh3 of the observation's encoding after the
	// input, which a replay checks.
	obs uint64
	// enc is the input's encoding in the log (appendInput), made when it
	// is logged.
	enc []byte
}

// Flags of an encoded input.
const (
	flagRand = 1 << iota
	flagMsg
)

// appendInput appends in's encoding to dst:
//
//	kind | varint at | uvarint peer | uvarint len(timer) | timer | flags
//	| [rand: 20 bytes] | [msg: uvarint len(type) | type | uvarint len(body) | body] | obs (8 bytes, big endian)
func appendInput(dst []byte, reg *node.Registry, in *input) ([]byte, error) {
	dst = append(dst, byte(in.kind))
	dst = binary.AppendVarint(dst, in.at.UnixNano())
	dst = binary.AppendUvarint(dst, uint64(in.peer))
	dst = binary.AppendUvarint(dst, uint64(len(in.timer)))
	dst = append(dst, in.timer...)
	var flags byte
	if in.hasRand {
		flags |= flagRand
	}
	if in.msg != nil {
		flags |= flagMsg
	}
	dst = append(dst, flags)
	if in.hasRand {
		dst, _ = in.rand.AppendBinary(dst)
	}
	if in.msg != nil {
		body, err := reg.EncodeMessage(in.msg)
		if err != nil {
			return nil, err
		}
		name := in.msg.MessageType()
		dst = binary.AppendUvarint(dst, uint64(len(name)))
		dst = append(dst, name...)
		dst = binary.AppendUvarint(dst, uint64(len(body)))
		dst = append(dst, body...)
	}
	return binary.BigEndian.AppendUint64(dst, in.obs), nil
}

// errTruncated reports an input cut short.
var errTruncated = errors.New("truncated input")

// randStateLen is the length of node.Rand's binary state.
const randStateLen = 20

// decodeInput decodes one input from the front of b and returns the rest.
// b is untrusted: every length is checked before use.
func decodeInput(b []byte, reg *node.Registry) (*input, []byte, error) {
	start := b
	if len(b) < 1 {
		return nil, nil, errTruncated
	}
	in := &input{kind: node.EventKind(b[0])}
	switch in.kind {
	case node.EventInit, node.EventMessage, node.EventTimer, node.EventApp, node.EventTransportError, node.EventSendRefused:
	default:
		return nil, nil, fmt.Errorf("input kind %d", b[0])
	}
	b = b[1:]
	at, k := binary.Varint(b)
	if k <= 0 {
		return nil, nil, errTruncated
	}
	in.at = time.Unix(0, at).UTC()
	b = b[k:]
	peer, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, errTruncated
	}
	in.peer = node.ID(peer)
	b = b[k:]
	tl, k := binary.Uvarint(b)
	if k <= 0 || tl > node.MaxTimerNameLen || tl > uint64(len(b)-k) {
		return nil, nil, errors.New("timer name")
	}
	in.timer = string(b[k : k+int(tl)])
	b = b[k+int(tl):]
	if len(b) < 1 {
		return nil, nil, errTruncated
	}
	flags := b[0]
	b = b[1:]
	if flags&^(flagRand|flagMsg) != 0 {
		return nil, nil, fmt.Errorf("flags %#x", flags)
	}
	if flags&flagRand != 0 {
		if len(b) < randStateLen {
			return nil, nil, errTruncated
		}
		if err := in.rand.UnmarshalBinary(b[:randStateLen]); err != nil {
			return nil, nil, err
		}
		in.hasRand = true
		b = b[randStateLen:]
	}
	if flags&flagMsg != 0 {
		msg, rest, err := decodeMessage(b, reg)
		if err != nil {
			return nil, nil, err
		}
		in.msg, b = msg, rest
	}
	if len(b) < 8 {
		return nil, nil, errTruncated
	}
	in.obs = binary.BigEndian.Uint64(b)
	b = b[8:]
	if err := in.check(); err != nil {
		return nil, nil, err
	}
	in.enc = append([]byte(nil), start[:len(start)-len(b)]...)
	return in, b, nil
}

// decodeMessage decodes a logged message from the front of b.
func decodeMessage(b []byte, reg *node.Registry) (node.Message, []byte, error) {
	nl, k := binary.Uvarint(b)
	if k <= 0 || nl == 0 || nl > node.MaxTypeNameLen || nl > uint64(len(b)-k) {
		return nil, nil, errors.New("message type name")
	}
	name := string(b[k : k+int(nl)])
	b = b[k+int(nl):]
	bl, k := binary.Uvarint(b)
	if k <= 0 || bl > uint64(len(b)-k) {
		return nil, nil, errors.New("message body length")
	}
	msg, err := reg.DecodeMessage(name, b[k:k+int(bl)])
	if err != nil {
		return nil, nil, err
	}
	return msg, b[k+int(bl):], nil
}

// check verifies that the input's fields fit its kind.
func (in *input) check() error {
	needPeer := in.kind == node.EventMessage || in.kind == node.EventTransportError || in.kind == node.EventSendRefused
	needMsg := in.kind == node.EventMessage || in.kind == node.EventApp || in.kind == node.EventSendRefused
	switch {
	case needPeer != (in.peer != node.None):
		return fmt.Errorf("%v input: peer %v", in.kind, in.peer)
	case needMsg != (in.msg != nil):
		return fmt.Errorf("%v input: message presence", in.kind)
	case (in.kind == node.EventTimer) != (in.timer != ""):
		return fmt.Errorf("%v input: timer name %q", in.kind, in.timer)
	}
	return nil
}

// String renders the input as a trace does.
func (in *input) String() string {
	switch in.kind {
	case node.EventMessage:
		return fmt.Sprintf("message %s from %v", in.msg.MessageType(), in.peer)
	case node.EventTimer:
		return "timer " + in.timer
	case node.EventApp:
		return "app " + in.msg.MessageType()
	case node.EventTransportError:
		return "transport-error " + in.peer.String()
	case node.EventSendRefused:
		return fmt.Sprintf("send-refused %s to %v", in.msg.MessageType(), in.peer)
	default:
		return in.kind.String()
	}
}
