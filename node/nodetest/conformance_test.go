package nodetest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/seed6eee2ec7/crystalball/node"
)

// gossip is the conformance tests' service: a node appends what it hears to
// Heard and passes a Rumor on to the next node. Its faults are planted by
// configuration, so each test flips one.
type gossip struct {
	Heard []int
	Seen  map[node.ID]int
	Round int

	shallowClone bool
	sendUnlisted bool
}

type rumor struct{ N int }

func (rumor) MessageType() string { return "rumor" }

type unlisted struct{}

func (unlisted) MessageType() string { return "unlisted" }

type start struct{}

func (start) MessageType() string { return "start" }

func (g *gossip) Init(env node.Env) { env.SetTimer("tick", time.Second) }

func (g *gossip) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	r := msg.(rumor)
	g.Heard = append(g.Heard, r.N)
	if g.Seen == nil {
		g.Seen = map[node.ID]int{}
	}
	g.Seen[from]++
	if r.N < 50 {
		env.Send(env.Self()%3+1, rumor{N: r.N + 1})
	}
}

func (g *gossip) HandleTimer(env node.Env, name string) {
	g.Round++
	env.SetTimer("tick", time.Second)
	if g.sendUnlisted && g.Round == 3 {
		env.Send(env.Self()%3+1, unlisted{})
	}
}

func (g *gossip) HandleApp(env node.Env, call node.Message) {
	env.Send(env.Self()%3+1, rumor{N: len(g.Heard)})
}

func (g *gossip) HandleTransportError(node.Env, node.ID) {}

func (g *gossip) Clone() node.Service {
	c := *g
	if g.shallowClone {
		return &c
	}
	c.Heard = append([]int(nil), g.Heard...)
	if g.Seen != nil {
		c.Seen = make(map[node.ID]int, len(g.Seen))
		for k, v := range g.Seen {
			c.Seen[k] = v
		}
	}
	return &c
}

func gossipSpec(g gossip) node.Spec {
	return node.Spec{
		Name: "gossip",
		New: func() node.Service {
			c := g
			return &c
		},
		Messages: []node.Message{rumor{}, start{}},
	}
}

func gossipCalls(node.ID, []node.ID) []node.Message { return []node.Message{start{}} }

func TestConformanceAcceptsACorrectService(t *testing.T) {
	Conformance(t, gossipSpec(gossip{}), ConformanceCalls(gossipCalls))
}

func TestConformanceCatchesAShallowClone(t *testing.T) {
	err := checkConformance(gossipSpec(gossip{shallowClone: true}), ConformanceCalls(gossipCalls))
	if err == nil || !strings.Contains(err.Error(), "the clone shares mutable memory with the original at state.Heard") {
		t.Fatalf("shallow clone: %v", err)
	}
}

func TestConformanceCatchesAnUnregisteredMessage(t *testing.T) {
	err := checkConformance(gossipSpec(gossip{sendUnlisted: true}), ConformanceCalls(gossipCalls))
	if !errors.Is(err, node.ErrUnknownMessageType) || !strings.Contains(err.Error(), `"unlisted"`) {
		t.Fatalf("unregistered message: %v", err)
	}
}

func TestConformanceCatchesAnUnregisteredCall(t *testing.T) {
	calls := func(node.ID, []node.ID) []node.Message { return []node.Message{unlisted{}} }
	err := checkConformance(gossipSpec(gossip{}), ConformanceCalls(calls))
	if !errors.Is(err, node.ErrUnknownMessageType) || !strings.Contains(err.Error(), "application call") {
		t.Fatalf("unregistered call: %v", err)
	}
}

func TestConformanceCatchesCollidingNames(t *testing.T) {
	spec := gossipSpec(gossip{})
	spec.Messages = append(spec.Messages, otherRumor{})
	err := checkConformance(spec)
	if !errors.Is(err, node.ErrDuplicateMessageType) {
		t.Fatalf("colliding names: %v", err)
	}
}

type otherRumor struct{ M string }

func (otherRumor) MessageType() string { return "rumor" }

func TestConformanceCatchesAnUnhashedField(t *testing.T) {
	spec := gossipSpec(gossip{})
	spec.New = func() node.Service { return &forgetful{} }
	err := checkConformance(spec, ConformanceCalls(gossipCalls))
	if err == nil || !strings.Contains(err.Error(), "changing field Forgotten leaves the hash unchanged") {
		t.Fatalf("unhashed field: %v", err)
	}
}

// forgetful has an exported field its encoder drops.
type forgetful struct {
	gossip
	Forgotten int
}

func (f *forgetful) Clone() node.Service {
	c := *f
	c.gossip = *f.gossip.Clone().(*gossip)
	return &c
}

// EncodeMsgpack writes the gossip state and forgets Forgotten.
func (f *forgetful) EncodeMsgpack(enc *msgpack.Encoder) error { return enc.Encode(&f.gossip) }

// DecodeMsgpack reads what EncodeMsgpack wrote.
func (f *forgetful) DecodeMsgpack(dec *msgpack.Decoder) error { return dec.Decode(&f.gossip) }

func TestConformanceOptionsAreChecked(t *testing.T) {
	if err := checkConformance(gossipSpec(gossip{}), ConformanceNodes(0)); err == nil {
		t.Fatal("zero nodes accepted")
	}
	if err := checkConformance(node.Spec{Name: "x"}); err == nil || !strings.HasPrefix(err.Error(), "nodetest: ") {
		t.Fatalf("incomplete spec: %v", err)
	}
}
