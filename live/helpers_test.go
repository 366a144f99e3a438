package live

import (
	"encoding/binary"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// envelopeFormatV1 is the first byte of an encoded (non-datagram) envelope
// (node's envelope codec); tests build malformed envelopes from it.
const envelopeFormatV1 = 0xE1

type joinMsg struct {
	Joiner   node.ID
	Siblings []node.ID
	Tags     map[string]uint32
}

func (joinMsg) MessageType() string { return "test.join" }

type note struct{ Text string }

func (note) MessageType() string { return "test.note" }

type unregistered struct{}

func (unregistered) MessageType() string { return "test.unregistered" }

func testRegistry(t testing.TB) *node.Registry {
	t.Helper()
	r, err := node.NewRegistry(joinMsg{}, note{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// envelopeWithBody builds an envelope header for test.join followed by body.
func envelopeWithBody(body []byte) []byte {
	b := []byte{envelopeFormatV1}
	for _, v := range []uint64{2, 1, 0, uint64(len("test.join"))} {
		b = binary.AppendUvarint(b, v)
	}
	b = append(b, "test.join"...)
	return append(b, body...)
}
