package node_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

// greet is a message named by its Go type; greetByHand the same fields
// with the name written by hand.
type greet struct {
	node.Named[greet]
	From node.ID
	Text string
}

type greetByHand struct {
	From node.ID
	Text string
}

func (greetByHand) MessageType() string { return "node_test.greet" }

// arrayGreet is an as_array message named by its Go type.
type arrayGreet struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	node.Named[arrayGreet]
	From node.ID
}

type arrayGreetByHand struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	From     node.ID
}

func (arrayGreetByHand) MessageType() string { return "node_test.arrayGreet" }

// TestNamedDerivesTheNameAndAddsNoBytes: node.Named gives a message the
// name "package.Type" and changes neither its encoding nor its envelope:
// the same bytes as the same fields with the name written by hand, map or
// array form.
func TestNamedDerivesTheNameAndAddsNoBytes(t *testing.T) {
	if got := (greet{}).MessageType(); got != "node_test.greet" {
		t.Errorf("MessageType %q, want node_test.greet", got)
	}
	for _, c := range []struct{ named, byHand node.Message }{
		{greet{From: 3, Text: "hi"}, greetByHand{From: 3, Text: "hi"}},
		{arrayGreet{From: 3}, arrayGreetByHand{From: 3}},
	} {
		a, err := node.AppendCanonical(nil, c.named)
		if err != nil {
			t.Fatal(err)
		}
		b, err := node.AppendCanonical(nil, c.byHand)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%T encodes as %x, %T as %x", c.named, a, c.byHand, b)
		}
		ra, err := node.NewRegistry(c.named)
		if err != nil {
			t.Fatal(err)
		}
		rb, err := node.NewRegistry(c.byHand)
		if err != nil {
			t.Fatal(err)
		}
		ea, err := ra.AppendEnvelope(nil, node.Envelope{From: 1, To: 2, Msg: c.named})
		if err != nil {
			t.Fatal(err)
		}
		eb, err := rb.AppendEnvelope(nil, node.Envelope{From: 1, To: 2, Msg: c.byHand})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ea, eb) {
			t.Errorf("%T's envelope %x differs from %T's %x", c.named, ea, c.byHand, eb)
		}
		env, err := ra.DecodeEnvelope(eb)
		if err != nil || env.Msg != c.named {
			t.Errorf("%T decodes the hand-named envelope as %+v, %v", c.named, env.Msg, err)
		}
	}
}

// TestNamedCollisionIsRejected: two types that derive one name (here a
// hand-written name equal to a derived one) cannot share a registry.
func TestNamedCollisionIsRejected(t *testing.T) {
	_, err := node.NewRegistry(greet{}, greetByHand{})
	if err == nil || !strings.Contains(err.Error(), "node_test.greet") {
		t.Errorf("NewRegistry(greet, greetByHand): %v, want a collision on node_test.greet", err)
	}
}

// TestNamedAllocatesNothing: the derived name costs no allocation, as the
// hand-written constant does (MessageType runs for every envelope).
func TestNamedAllocatesNothing(t *testing.T) {
	var m node.Message = greet{}
	if n := testing.AllocsPerRun(100, func() { _ = m.MessageType() }); n != 0 {
		t.Errorf("MessageType allocates %v times", n)
	}
}

func BenchmarkMessageType(b *testing.B) {
	for _, c := range []struct {
		name string
		m    node.Message
	}{{"named", greet{}}, {"by-hand", greetByHand{}}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				_ = c.m.MessageType()
			}
		})
	}
}
