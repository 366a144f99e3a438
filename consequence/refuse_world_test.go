package consequence_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// burstNote is burster's message: a sequence number per sender, and a
// payload that makes three of them more than the send queue takes.
type burstNote struct {
	Seq int
	Pad []byte
}

func (burstNote) MessageType() string { return "test.Burst" }

// burstNodes is the size of the burst world.
const burstNodes = 3

// burster sends a burst of three notes with TrySend to a random peer
// every 20–60 ms, and counts what arrives and what the transport refused.
// Its state holds no time, so the explorer's clocks and the emulator's
// agree on it.
type burster struct {
	Seq, Got, Refused int
}

func (b *burster) Init(env node.Env) { b.arm(env) }

func (b *burster) arm(env node.Env) {
	env.SetTimer("burst", 20*time.Millisecond+time.Duration(env.Rand().IntN(40))*time.Millisecond)
}

func (b *burster) HandleTimer(env node.Env, _ string) {
	to := node.ID(1 + env.Rand().IntN(burstNodes))
	if to != env.Self() {
		for range 3 {
			b.Seq++
			env.TrySend(to, burstNote{Seq: b.Seq, Pad: make([]byte, 200)})
		}
	}
	b.arm(env)
}

func (b *burster) HandleMessage(node.Env, node.ID, node.Message)     { b.Got++ }
func (b *burster) HandleSendRefused(node.Env, node.ID, node.Message) { b.Refused++ }
func (b *burster) HandleApp(node.Env, node.Message)                  {}
func (b *burster) HandleTransportError(node.Env, node.ID)            {}

func burstSpec() node.Spec {
	return node.Spec{Name: "burst", New: func() node.Service { return &burster{} }, Messages: []node.Message{burstNote{}}}
}

// TestRefusalsAgreeWithTheEmulator: an emulated run whose send queues
// refuse TrySends (a 100 kbit/s uplink, 500-byte queues: of a burst of
// three 200-byte notes the third is refused while the first two wait) is
// replayed step by step in the explorer, refusals as ActRefuse: every
// event the emulator runs must be enabled in the explorer — each refusal
// a message of the sender's window —, lead to the same node state, and
// leave the same messages in flight. It fails if the explorer's window
// rule ever forbids what the emulator does — as it did when a refusal
// closed the window: a queue that still holds the last burst refuses two
// of the next one, one after the other.
func TestRefusalsAgreeWithTheEmulator(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			var steps []emulation.Step
			e, err := emulation.New(emulation.Config{
				Spec: burstSpec(), Nodes: burstNodes, Seed: seed, StartSpread: time.Nanosecond,
				Topology:  emulation.UniformTopology{L: emulation.Link{Latency: 5 * time.Millisecond}},
				Network:   emulation.NetworkConfig{Uplink: 100_000, SendQueueBytes: 500},
				Observers: emulation.Observers{OnStep: func(s emulation.Step) { steps = append(steps, s) }},
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := e.RunUntil(emulation.Epoch.Add(time.Millisecond)); err != nil {
				t.Fatal(err)
			}
			m, err := consequence.NewActorModelFromLive(burstSpec(), e, consequence.ActorOptions{Faults: consequence.Faults{Refusals: 1 << 20}})
			if err != nil {
				t.Fatal(err)
			}
			g, n, refusals, chained := m.Start(), 0, 0, 0
			steps = nil
			for e.Elapsed() < 2*time.Second && e.Step() {
				for k, s := range steps {
					want := consequence.ActorAction{Node: s.Node}
					switch ev := s.Event; ev.Kind {
					case node.EventTimer:
						want.Kind, want.Timer = consequence.ActTimer, ev.Timer
					case node.EventMessage:
						want.Kind, want.Peer, want.Msg = consequence.ActDeliver, ev.From, ev.Msg
					case node.EventSendRefused:
						want.Kind, want.Peer, want.Msg = consequence.ActRefuse, ev.Peer, ev.Msg
						refusals++
						if k > 0 && steps[k-1].Event.Kind == node.EventSendRefused {
							chained++ // a second refusal of one step's sends
						}
					default:
						t.Fatalf("seed %d event %d: unexpected %v", seed, n, ev)
					}
					g = applyWorld(t, m, g, want, n)
					n++
				}
				// The emulator runs a refusal within the step of the send
				// it refuses: compare once both sides have run them all.
				for _, s := range steps {
					checkWorld(t, e, g, s.Node, n)
				}
				steps = steps[:0]
			}
			if err := e.Err(); err != nil {
				t.Fatal(err)
			}
			t.Logf("seed %d: replayed %d events, %d refusals (%d after another of the same step)", seed, n, refusals, chained)
			if refusals == 0 || chained == 0 {
				t.Fatalf("seed %d: %d refusals, %d after another of the same step: want both", seed, refusals, chained)
			}
		})
	}
}

// applyWorld takes the action of g equal to want, failing if none is
// enabled.
func applyWorld(t *testing.T, m *consequence.ActorModel, g *consequence.GlobalState, want consequence.ActorAction, n int) *consequence.GlobalState {
	t.Helper()
	var names []string
	for _, a := range m.Actions(g, nil) {
		if a.Act.Kind == want.Kind && a.Act.Node == want.Node && a.Act.Peer == want.Peer && a.Act.Timer == want.Timer && reflect.DeepEqual(a.Act.Msg, want.Msg) {
			next, ok := m.Next(g, a.Act)
			if !ok {
				t.Fatalf("event %d: %v has no successor", n, a.Act)
			}
			return next
		}
		names = append(names, a.Act.String())
	}
	t.Fatalf("event %d: the emulator ran %v (%v), which the explorer does not enable; enabled: %q\nexplorer state:\n%v", n, want, want.Msg, names, g)
	return nil
}

// checkWorld compares node id's state and every channel's messages in
// flight in g with the emulator's.
func checkWorld(t *testing.T, e *emulation.Emulator, g *consequence.GlobalState, id node.ID, n int) {
	t.Helper()
	st, _, _ := g.NodeState(id)
	hx, err := st.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if he, err := e.Core(id).Hash(); err != nil || hx != he {
		t.Fatalf("event %d: %v is %+v in the explorer, %+v in the emulator (%v)", n, id, st.Service, e.Core(id).Service(), err)
	}
	emu := map[[2]node.ID][]node.Message{}
	for _, env := range e.InFlight() {
		emu[[2]node.ID{env.From, env.To}] = append(emu[[2]node.ID{env.From, env.To}], env.Msg)
	}
	for a := node.ID(1); a <= burstNodes; a++ {
		for b := node.ID(1); b <= burstNodes; b++ {
			var exp []node.Message
			for _, env := range g.InFlight(a, b) {
				exp = append(exp, env.Msg)
			}
			if !reflect.DeepEqual(exp, emu[[2]node.ID{a, b}]) {
				t.Fatalf("event %d: %v → %v carries %v in the explorer, %v in the emulator", n, a, b, exp, emu[[2]node.ID{a, b}])
			}
		}
	}
}
