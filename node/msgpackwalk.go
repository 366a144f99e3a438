package node

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Errors reported when msgpack bytes fail the structural check that runs
// before any decoding (see CheckMsgpack).
var (
	// ErrMsgpackTruncated: the input ends inside an object.
	ErrMsgpackTruncated = errors.New("node: msgpack: truncated input")
	// ErrMsgpackOversized: a length header declares more bytes or elements
	// than the remaining input can hold.
	ErrMsgpackOversized = errors.New("node: msgpack: length header exceeds remaining input")
	// ErrMsgpackTooDeep: containers nest deeper than the allowed depth.
	ErrMsgpackTooDeep = errors.New("node: msgpack: nesting too deep")
	// ErrMsgpackInvalid: a byte that is not a msgpack type code, or trailing
	// bytes after the single top-level object.
	ErrMsgpackInvalid = errors.New("node: msgpack: invalid encoding")
)

// MaxMsgpackDepth is the deepest container nesting CheckMsgpack accepts.
const MaxMsgpackDepth = 64

// msgpackHeader describes the object whose type code is at b[pos]: the size of
// its header, the number of raw payload bytes following the header, and the
// number of child objects (elements of an array, keys plus values of a map).
type msgpackHeader struct {
	size     int
	payload  int
	children int
	isMap    bool
}

// readMsgpackHeader decodes the header at b[pos]. It checks only that the
// header itself is complete; callers check payload and children against the
// remaining input.
func readMsgpackHeader(b []byte, pos int) (msgpackHeader, error) {
	if pos >= len(b) {
		return msgpackHeader{}, ErrMsgpackTruncated
	}
	c := b[pos]
	rest := b[pos+1:]
	need := func(n int) error {
		if len(rest) < n {
			return ErrMsgpackTruncated
		}
		return nil
	}
	u := func(n int) uint64 {
		switch n {
		case 1:
			return uint64(rest[0])
		case 2:
			return uint64(binary.BigEndian.Uint16(rest))
		default:
			return uint64(binary.BigEndian.Uint32(rest))
		}
	}
	// sized reads an n-byte big-endian length after the type code (plus
	// extra header bytes, e.g. an ext type byte) and returns a header whose
	// payload or children come from that length.
	sized := func(n, extra int, children, isMap bool) (msgpackHeader, error) {
		if err := need(n + extra); err != nil {
			return msgpackHeader{}, err
		}
		l := u(n)
		if l > uint64(len(b)) { // cannot possibly fit; also keeps int conversion safe
			return msgpackHeader{}, ErrMsgpackOversized
		}
		h := msgpackHeader{size: 1 + n + extra, isMap: isMap}
		if children {
			h.children = int(l)
			if isMap {
				h.children *= 2
			}
		} else {
			h.payload = int(l)
		}
		return h, nil
	}
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return msgpackHeader{size: 1}, nil
	case c >= 0x80 && c <= 0x8f:
		return msgpackHeader{size: 1, children: 2 * int(c&0x0f), isMap: true}, nil
	case c >= 0x90 && c <= 0x9f:
		return msgpackHeader{size: 1, children: int(c & 0x0f)}, nil
	case c >= 0xa0 && c <= 0xbf:
		return msgpackHeader{size: 1, payload: int(c & 0x1f)}, nil
	}
	switch c {
	case 0xc4, 0xd9: // bin8, str8
		return sized(1, 0, false, false)
	case 0xc5, 0xda: // bin16, str16
		return sized(2, 0, false, false)
	case 0xc6, 0xdb: // bin32, str32
		return sized(4, 0, false, false)
	case 0xc7: // ext8
		return sized(1, 1, false, false)
	case 0xc8: // ext16
		return sized(2, 1, false, false)
	case 0xc9: // ext32
		return sized(4, 1, false, false)
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return msgpackHeader{size: 1, payload: 4}, nil
	case 0xcb, 0xcf, 0xd3: // float64, uint64, int64
		return msgpackHeader{size: 1, payload: 8}, nil
	case 0xcc, 0xd0: // uint8, int8
		return msgpackHeader{size: 1, payload: 1}, nil
	case 0xcd, 0xd1: // uint16, int16
		return msgpackHeader{size: 1, payload: 2}, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16 (type byte + data)
		return msgpackHeader{size: 1, payload: 1 + 1<<(c-0xd4)}, nil
	case 0xdc: // array16
		return sized(2, 0, true, false)
	case 0xdd: // array32
		return sized(4, 0, true, false)
	case 0xde: // map16
		return sized(2, 0, true, true)
	case 0xdf: // map32
		return sized(4, 0, true, true)
	}
	return msgpackHeader{}, fmt.Errorf("%w: type code 0x%02x at offset %d", ErrMsgpackInvalid, c, pos)
}

// CheckMsgpack verifies that b holds exactly one well-formed msgpack object
// whose length headers are all backed by input: every string, binary or
// extension fits in the remaining bytes, and the elements declared by all
// open arrays and maps together never exceed the remaining bytes (each
// element takes at least one). A decoder that pre-allocates from a header
// therefore allocates at most in proportion to len(b), which closes the
// "5-byte array32 header" out-of-memory class of inputs whatever the msgpack
// library version does. It never allocates more than the nesting stack.
func CheckMsgpack(b []byte, maxDepth int) error {
	pos := 0
	pending := 1 // objects declared but not yet read, over all levels
	// stack holds, for every open container, how many children it still
	// expects; its depth is the current nesting.
	var stackBuf [16]int
	stack := append(stackBuf[:0], 1)
	for len(stack) > 0 {
		if stack[len(stack)-1] == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		h, err := readMsgpackHeader(b, pos)
		if err != nil {
			return err
		}
		stack[len(stack)-1]--
		pending--
		pos += h.size
		remaining := len(b) - pos
		if h.payload > remaining {
			return fmt.Errorf("%w: %d payload bytes declared at offset %d, %d remain", ErrMsgpackOversized, h.payload, pos-h.size, remaining)
		}
		pos += h.payload
		if h.children > 0 {
			if pending+h.children > len(b)-pos {
				return fmt.Errorf("%w: %d elements declared at offset %d, %d bytes remain", ErrMsgpackOversized, h.children, pos-h.size, len(b)-pos)
			}
			if len(stack) > maxDepth {
				return ErrMsgpackTooDeep
			}
			pending += h.children
			stack = append(stack, h.children)
		}
	}
	if pos != len(b) {
		return fmt.Errorf("%w: %d trailing bytes", ErrMsgpackInvalid, len(b)-pos)
	}
	return nil
}

// msgpackObjectEnd returns the offset just past the object starting at pos.
// b must already have passed CheckMsgpack (or come from our own encoder).
func msgpackObjectEnd(b []byte, pos int) (int, error) {
	left := 1
	for left > 0 {
		h, err := readMsgpackHeader(b, pos)
		if err != nil {
			return 0, err
		}
		pos += h.size + h.payload
		if pos > len(b) {
			return 0, ErrMsgpackTruncated
		}
		left += h.children - 1
	}
	return pos, nil
}
