package statediff_test

import (
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/statediff"
)

type inner struct {
	Term  int
	Votes map[node.ID]bool
}

type state struct {
	node.NopHandlers
	Peers   map[node.ID]bool
	Log     []inner
	Timeout time.Duration
	Name    string
	Config  string `msgpack:"-"`
	hidden  int
}

func TestFirstNamesTheFieldAndBothValues(t *testing.T) {
	base := func() *state {
		return &state{Peers: map[node.ID]bool{2: true}, Log: []inner{{Term: 1}, {Term: 2, Votes: map[node.ID]bool{1: true}}}, Timeout: time.Second, Name: "a"}
	}
	cases := []struct {
		name   string
		change func(*state)
		want   string
	}{
		{"a map entry", func(s *state) { s.Peers[3] = true }, "state.Peers[n3]: absent vs true"},
		{"an empty map for nil", func(s *state) { s.Log[0].Votes = map[node.ID]bool{} }, "state.Log[0].Votes: nil vs map[] (empty, not nil)"},
		{"nil for an empty map", func(s *state) { s.Peers = nil }, "state.Peers: map[n2:true] vs nil"},
		{"a nested scalar", func(s *state) { s.Log[1].Term = 7 }, "state.Log[1].Term: 2 vs 7"},
		{"a duration", func(s *state) { s.Timeout = 2 * time.Second }, "state.Timeout: 1s vs 2s"},
		{"a string", func(s *state) { s.Name = "b" }, `state.Name: "a" vs "b"`},
		{"an element more", func(s *state) { s.Log = append(s.Log, inner{Term: 3}) }, "state.Log[2]: absent vs {Term:3 Votes:map[]}"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := base()
			c.change(b)
			d, ok := statediff.First(base(), b)
			if !ok || d.String() != c.want {
				t.Fatalf("First = %q, %v; want %q", d, ok, c.want)
			}
		})
	}
}

func TestFirstIgnoresWhatIsNotState(t *testing.T) {
	a := &state{Config: "x", hidden: 1}
	b := &state{Config: "y", hidden: 2}
	if d, ok := statediff.First(a, b); ok {
		t.Fatalf("a difference outside the state: %v", d)
	}
}

func TestEncodedDecodesBothSides(t *testing.T) {
	a, _ := msgpack.Marshal(map[string]any{"Peers": map[string]any{}, "N": 1})
	b, _ := msgpack.Marshal(map[string]any{"Peers": nil, "N": 1})
	d, ok := statediff.Encoded(a, b)
	if !ok || d.String() != "state.Peers: map[] (empty, not nil) vs nil" {
		t.Fatalf("Encoded = %q, %v", d, ok)
	}
	if d, ok := statediff.Encoded([]byte{0xc1}, []byte{0xc1, 0}); !ok || d.A != "1 byte that does not decode" {
		t.Fatalf("undecodable bytes: %q, %v", d, ok)
	}
}
