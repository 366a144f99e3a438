package steering

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// relay: n1 sends n2 a ping at Init, n2 answers with a pong, and n1's
// liveness property wants the pong. There is no retry: a ping n2 never
// handles leaves n1 waiting for ever.
type relay struct{ Ponged bool }

type relayPing struct{}

func (relayPing) MessageType() string { return "relay.Ping" }

type relayPong struct{}

func (relayPong) MessageType() string { return "relay.Pong" }

func (s *relay) Init(env node.Env) {
	if env.Self() == 1 {
		env.Send(2, relayPing{})
	}
}

func (s *relay) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case relayPing:
		env.Send(from, relayPong{})
	case relayPong:
		s.Ponged = true
	}
}

func (s *relay) HandleTimer(node.Env, string)           {}
func (s *relay) HandleApp(node.Env, node.Message)       {}
func (s *relay) HandleTransportError(node.Env, node.ID) {}

func relaySpec() node.Spec {
	return node.Spec{
		Name:     "relay",
		New:      func() node.Service { return &relay{} },
		Messages: []node.Message{relayPing{}, relayPong{}},
		Properties: []node.Property{node.Eventually("Ponged", func(v node.View) error {
			if s, ok := v.Service(1).(*relay); ok && !s.Ponged {
				return errNoPong
			}
			return nil
		})},
	}
}

var errNoPong = errorString("n1 has no pong")

type errorString string

func (e errorString) Error() string { return string(e) }

// The liveness guard of holds: n2 holds pings from n1 (a filter's kind,
// escalated past its budget of one intervention); a round on a snapshot
// older than the escalation cannot release it as safe, but its liveness
// walks find that with the hold in place n1 never gets its pong, while
// without it every walk does: the hold is released (counted as released
// for liveness, not as safe), the escalated filter leaves the filters in
// force, and the ping runs.
func TestHoldsReleasedForLiveness(t *testing.T) {
	spec := relaySpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2}, 2)
	core, err := node.NewCore(node.CoreConfig{ID: 2, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: snap.At}); err != nil {
		t.Fatal(err)
	}
	cfg := LayerConfig{Controller: Config{Mode: Steer, Spec: spec, MaxInterventions: 1, Walks: 8, WalkDepth: 20}}
	l, h := newTestLive(t, cfg, core)
	ping := Filter{Kind: FilterMessage, Node: 2, From: 1, Type: "relay.Ping"}
	l.install([]Filter{ping}, snap.At)
	at := snap.At.Add(time.Second)
	gate := func(s int) bool {
		t.Helper()
		ev := node.Event{Kind: node.EventMessage, From: 1, Msg: relayPing{}, At: at.Add(time.Duration(s) * time.Second)}
		v, _, err := l.Gate(ev.At, ev, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		return v.Handle
	}
	if gate(0) || gate(1) {
		t.Fatal("a ping passed the filter within its budget or once escalated")
	}
	if st := l.Status(); st.Escalations != 1 || st.Held != 1 {
		t.Fatalf("escalations %d held %d, want 1 and 1", st.Escalations, st.Held)
	}
	l.Gathered(snap) // completed before the escalation: not a re-check
	awaitRound(t, l, h)
	st := l.Status()
	if st.ReleasedForLiveness != 1 || st.Released != 0 {
		t.Fatalf("released for liveness %d, as safe %d; want 1 and 0", st.ReleasedForLiveness, st.Released)
	}
	if fs := l.Filters(); len(fs) != 0 {
		t.Fatalf("filters in force after the release: %v", fs)
	}
	if !gate(2) {
		t.Fatal("the ping is still held after the liveness guard released it")
	}
}

// A hold the walks show to be harmless stays: n2 holds pongs from n1 (n1
// never sends n2 one), so walks with and without the hold reach n1's pong
// alike, and the round releases nothing.
func TestHarmlessHoldStays(t *testing.T) {
	spec := relaySpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2}, 2)
	core, err := node.NewCore(node.CoreConfig{ID: 2, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: snap.At}); err != nil {
		t.Fatal(err)
	}
	cfg := LayerConfig{Controller: Config{Mode: Steer, Spec: spec, MaxInterventions: 1, Walks: 8, WalkDepth: 20}}
	l, h := newTestLive(t, cfg, core)
	pong := Filter{Kind: FilterMessage, Node: 2, From: 1, Type: "relay.Pong"}
	l.install([]Filter{pong}, snap.At)
	for s := 1; s <= 2; s++ {
		ev := node.Event{Kind: node.EventMessage, From: 1, Msg: relayPong{}, At: snap.At.Add(time.Duration(s) * time.Second)}
		if v, _, _ := l.Gate(ev.At, ev, nil, false); v.Handle {
			t.Fatalf("a pong passed at %d s", s)
		}
	}
	l.Gathered(snap)
	awaitRound(t, l, h)
	if st := l.Status(); st.Escalations != 1 || st.ReleasedForLiveness != 0 || st.Released != 0 {
		t.Fatalf("escalations %d, released for liveness %d, as safe %d; want 1, 0, 0", st.Escalations, st.ReleasedForLiveness, st.Released)
	}
	if fs := l.Filters(); len(fs) != 1 || fs[0] != pong {
		t.Fatalf("filters %v, want the held %v", fs, pong)
	}
}
