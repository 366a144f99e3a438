package node_test

import (
	"bytes"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
)

type counterNop struct {
	node.NopHandlers
	N    int
	Seen []node.ID
}

func (c *counterNop) HandleMessage(env node.Env, from node.ID, msg node.Message) { c.N++ }

type counterPlain struct {
	N    int
	Seen []node.ID
}

type counterArray struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	node.NopHandlers
	N    int
	Seen []node.ID
}

type counterArrayPlain struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	N        int
	Seen     []node.ID
}

// TestNopHandlersAddNothingToTheEncoding: embedding the base leaves a
// state's bytes as they were, in map and array form, so shipped services
// keep their checkpoints and hashes.
func TestNopHandlersAddNothingToTheEncoding(t *testing.T) {
	var _ node.Service = &counterNop{}
	pairs := [][2]any{
		{&counterNop{N: 3, Seen: []node.ID{1, 2}}, &counterPlain{N: 3, Seen: []node.ID{1, 2}}},
		{&counterArray{N: 3, Seen: []node.ID{1}}, &counterArrayPlain{N: 3, Seen: []node.ID{1}}},
	}
	for _, p := range pairs {
		a, err := node.AppendCanonical(nil, p[0])
		if err != nil {
			t.Fatal(err)
		}
		b, err := node.AppendCanonical(nil, p[1])
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%T encodes to %x, %T to %x", p[0], a, p[1], b)
		}
	}
}
