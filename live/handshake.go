package live

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The first frame on every service-transport connection, in both
// directions, is a hello:
//
//	"CBH1" | kind | uvarint node ID | uvarint len | label | uvarint len | gossip address | uvarint len | service address
//
// The dialler sends first; the acceptor checks the label and answers with
// its own hello. A data connection then carries envelope frames from the
// dialler to the acceptor only (each node sends on the connection it
// dialled); a probe connection ends after the exchange (Start uses it to
// learn a join address's node ID and gossip address).
const helloMagic = "CBH1"

// Hello kinds.
const (
	helloData  byte = 1
	helloProbe byte = 2
)

// maxHelloAddrLen bounds an address in a hello.
const maxHelloAddrLen = 255

// ErrHandshake is wrapped by every handshake failure: a malformed hello, a
// wrong cluster label, an unexpected node ID.
var ErrHandshake = errors.New("live: handshake failed")

// ErrIdentityConflict wraps ErrHandshake: an inbound hello claimed the node
// ID of a live inbound connection but other addresses, so the newcomer was
// refused and the established connection kept. Counted in
// Counters.HelloConflicts and Counters.FramesRejected.
var ErrIdentityConflict = fmt.Errorf("%w: node ID held by a live connection of another identity", ErrHandshake)

type hello struct {
	kind    byte
	id      node.ID
	label   string
	gossip  string
	service string
}

func appendHello(dst []byte, h hello) []byte {
	dst = append(dst, helloMagic...)
	dst = append(dst, h.kind)
	dst = binary.AppendUvarint(dst, uint64(h.id))
	for _, s := range []string{h.label, h.gossip, h.service} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	return dst
}

// decodeHello parses an untrusted hello payload.
func decodeHello(b []byte) (hello, error) {
	bad := func(what string) (hello, error) {
		return hello{}, fmt.Errorf("%w: malformed hello: %s", ErrHandshake, what)
	}
	if len(b) < len(helloMagic)+1 || string(b[:len(helloMagic)]) != helloMagic {
		return bad("not a crystalball hello")
	}
	h := hello{kind: b[len(helloMagic)]}
	if !slices.Contains(helloKinds, h.kind) {
		return bad("unknown kind")
	}
	rest := b[len(helloMagic)+1:]
	v, k := binary.Uvarint(rest)
	if k <= 0 || v == 0 {
		return bad("node ID")
	}
	h.id = node.ID(v)
	if what := decodeHelloStrings(&h, rest[k:]); what != "" {
		return bad(what)
	}
	return h, nil
}

// helloKinds are the kinds of hello there are.
var helloKinds = []byte{helloData, helloProbe}

// decodeHelloStrings decodes the label and the addresses that end a hello
// into h; it returns what is malformed, or "".
func decodeHelloStrings(h *hello, rest []byte) string {
	limits := [3]uint64{MaxLabelLen, maxHelloAddrLen, maxHelloAddrLen}
	for i, s := range []*string{&h.label, &h.gossip, &h.service} {
		var ok bool
		if *s, rest, ok = cutUvarintString(rest, limits[i]); !ok {
			return "string length"
		}
	}
	if len(rest) != 0 {
		return "trailing bytes"
	}
	return ""
}

// cutUvarintString cuts a string, written as a uvarint length and its
// bytes, off the front of b: false when the length does not decode,
// exceeds limit or runs past b's end.
func cutUvarintString(b []byte, limit uint64) (s string, rest []byte, ok bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > limit || n > uint64(len(b)-k) {
		return "", b, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// writeHelloFrame writes h as one frame.
func writeHelloFrame(w io.Writer, h hello) error {
	_, err := w.Write(AppendFrame(nil, appendHello(nil, h)))
	return err
}

// readHelloFrame reads and parses one hello frame, whose size is bounded
// by the hello's own limits rather than the runtime's frame size.
func readHelloFrame(r io.Reader) (hello, error) {
	const maxHello = len(helloMagic) + 1 + binary.MaxVarintLen64 + 3*binary.MaxVarintLen16 + MaxLabelLen + 2*maxHelloAddrLen
	b, err := ReadFrame(r, nil, maxHello)
	if err != nil {
		return hello{}, err
	}
	return decodeHello(b)
}
