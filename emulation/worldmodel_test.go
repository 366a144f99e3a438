package emulation_test

import (
	"bytes"
	"fmt"
	mrand "math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// The world-model test: the explorer (consequence.ActorModel) and the
// emulator agree on what a reset — with and without RST —, a broken
// connection and a message in flight mean. An emulated run with random
// resets of both kinds and random breaks is replayed step by step in the
// explorer, from a state taken from the emulator mid-run: every event the
// emulator runs must be an enabled action of the explorer, lead to the
// same node state, and leave the same messages in flight.

// Gossip is the world-model service's message: a sequence number per
// sender and incarnation (Inc), so that receivers notice loss and reorder.
type Gossip struct {
	Inc int
	Seq int
}

func (Gossip) MessageType() string { return "wm.gossip" }

// Hello is the application call a node gets when it starts and after each
// reset: it greets every other node.
type Hello struct{}

func (Hello) MessageType() string { return "wm.hello" }

// wmNodes is the size of the world-model system.
const wmNodes = 4

// wmsvc greets everyone, then gossips to a random peer every 20–60 ms; it
// records what it receives and which transport errors it gets. Its state
// holds no time, so the explorer's clocks (which advance only with
// timers) and the emulator's agree on it.
type wmsvc struct {
	Inc    int             // incarnations of this node's service (resets)
	Next   map[node.ID]int // next sequence number per peer
	Last   map[node.ID]Gossip
	Got    int
	Errors []node.ID
}

func (s *wmsvc) Init(env node.Env) {
	s.Next = map[node.ID]int{}
	s.Last = map[node.ID]Gossip{}
	s.arm(env)
}

func (s *wmsvc) arm(env node.Env) {
	env.SetTimer("gossip", 20*time.Millisecond+time.Duration(env.Rand().IntN(40))*time.Millisecond)
}

func (s *wmsvc) send(env node.Env, to node.ID) {
	env.Send(to, Gossip{Inc: s.Inc, Seq: s.Next[to]})
	s.Next[to]++
}

func (s *wmsvc) HandleMessage(_ node.Env, from node.ID, msg node.Message) {
	s.Last[from] = msg.(Gossip)
	s.Got++
}

func (s *wmsvc) HandleTimer(env node.Env, _ string) {
	to := node.ID(1 + env.Rand().IntN(wmNodes))
	if to != env.Self() {
		s.send(env, to)
	}
	s.arm(env)
}

func (s *wmsvc) HandleApp(env node.Env, _ node.Message) {
	for p := node.ID(1); p <= wmNodes; p++ {
		if p != env.Self() {
			s.send(env, p)
		}
	}
}

func (s *wmsvc) HandleTransportError(_ node.Env, peer node.ID) {
	s.Errors = append(s.Errors, peer)
}

// Neighbors tells the explorer that every pair is connected at the start
// (the greetings connected them in the emulator).
func (s *wmsvc) Neighbors(self node.ID) []node.ID {
	var out []node.ID
	for p := node.ID(1); p <= wmNodes; p++ {
		if p != self {
			out = append(out, p)
		}
	}
	return out
}

func wmSpec() node.Spec {
	return node.Spec{Name: "wm", New: func() node.Service { return &wmsvc{} }, Messages: []node.Message{Gossip{}, Hello{}}}
}

func wmWorkload(node.ID, bool) []node.Message { return []node.Message{Hello{}} }

// replay is the explorer's side of a replayed run.
type replay struct {
	t     *testing.T
	trace *bytes.Buffer
	e     *emulation.Emulator
	m     *consequence.ActorModel
	g     *consequence.GlobalState
	n     int // events replayed
}

// apply runs the explorer action that matches want (kind, node, peer,
// timer, reset kind, message), failing if none is enabled, and checks the
// node's state and the messages in flight against the emulator's.
func (r *replay) apply(want consequence.ActorAction, what string) {
	r.t.Helper()
	var found *consequence.ActorAction
	acts := r.m.Actions(r.g, nil)
	for i := range acts {
		a := &acts[i].Act
		if a.Kind == want.Kind && a.Node == want.Node && a.Peer == want.Peer && a.Timer == want.Timer &&
			a.Silent == want.Silent && a.Pending == want.Pending && reflect.DeepEqual(a.Msg, want.Msg) {
			found = a
			break
		}
	}
	if found == nil {
		var names []string
		for _, a := range acts {
			names = append(names, a.Act.String())
		}
		r.t.Fatalf("event %d (%s): the emulator ran %q, which the explorer does not enable here; enabled: %q\nexplorer state:\n%v%s",
			r.n, what, want.String(), names, r.g, r.tail())
	}
	next, ok := r.m.Next(r.g, *found)
	if !ok {
		r.t.Fatalf("event %d: %v has no successor", r.n, found)
	}
	r.g = next
	r.n++
	r.check(want.Node, what)
}

// tail returns the end of the emulator's trace, for failures.
func (r *replay) tail() string {
	lines := strings.Split(strings.TrimSpace(r.trace.String()), "\n")
	return "\nemulator trace, last lines:\n" + strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// check compares node id's state and every channel's messages in flight.
func (r *replay) check(id node.ID, what string) {
	r.t.Helper()
	st, _, _ := r.g.NodeState(id)
	hx, err := st.Hash()
	if err != nil {
		r.t.Fatal(err)
	}
	he, err := r.e.Core(id).Hash()
	if err != nil {
		r.t.Fatal(err)
	}
	if hx != he {
		r.t.Fatalf("event %d (%s): %v is %+v in the explorer, %+v in the emulator", r.n, what, id, st.Service, r.e.Core(id).Service())
	}
	emu := map[[2]node.ID][]node.Message{}
	for _, env := range r.e.InFlight() {
		k := [2]node.ID{env.From, env.To}
		emu[k] = append(emu[k], env.Msg)
	}
	for a := node.ID(1); a <= wmNodes; a++ {
		for b := node.ID(1); b <= wmNodes; b++ {
			var exp []node.Message
			for _, env := range r.g.InFlight(a, b) {
				if env.Msg != nil { // a transport error is no message
					exp = append(exp, env.Msg)
				}
			}
			if !reflect.DeepEqual(exp, emu[[2]node.ID{a, b}]) {
				r.t.Fatalf("event %d (%s): %v → %v carries %v in the explorer, %v in the emulator\nexplorer state:\n%v%s",
					r.n, what, a, b, exp, emu[[2]node.ID{a, b}], r.g, r.tail())
			}
		}
	}
}

// step maps an event the emulator's handler ran to the explorer's action.
func (r *replay) step(s emulation.Step) {
	r.t.Helper()
	ev := s.Event
	a := consequence.ActorAction{Node: s.Node}
	switch ev.Kind {
	case node.EventMessage:
		a.Kind, a.Peer, a.Msg = consequence.ActDeliver, ev.From, ev.Msg
	case node.EventTransportError:
		a.Kind, a.Peer = consequence.ActDeliver, ev.Peer
	case node.EventTimer:
		a.Kind, a.Timer = consequence.ActTimer, ev.Timer
	case node.EventApp:
		a.Kind, a.Msg, a.Pending = consequence.ActApp, ev.Msg, true
	case node.EventReset:
		return // replayed with the fault that caused it (fault)
	default:
		r.t.Fatalf("event %d: unexpected emulator event %v", r.n, ev)
	}
	r.apply(a, fmt.Sprintf("at %v", s.At))
}

// TestWorldModelReplay runs the emulator with random resets (silent and
// with RST) and breaks and replays it in the explorer. It fails if either
// side changes what a fault does to messages in flight, connections or
// transport errors.
func TestWorldModelReplay(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
			logSeedOnFailure(t, seed)
			replayRun(t, seed, 2*time.Second)
		})
	}
}

// faultGap is the least time between two faults: three one-way
// latencies, so that every message a fault concerns has arrived (or been
// refused) before the next fault. Two faults on the same connection within
// one round trip are where the emulator's model departs from TCP — it
// keeps one socket per pair of nodes, so a connection opened by a node's
// new incarnation replaces, at its peer, one its old incarnation had
// opened, and whichever first message arrives first wins — and the
// explorer does not follow it there.
const faultGap = 3 * lat

func replayRun(t *testing.T, seed uint64, d time.Duration) {
	var steps []emulation.Step
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{

		Spec: wmSpec(), Nodes: wmNodes, Seed: seed, StartSpread: time.Nanosecond,
		Topology:  emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Workload:  wmWorkload,
		Observers: emulation.Observers{Trace: &trace, OnStep: func(s emulation.Step) { steps = append(steps, s) }},
	})
	// Every greeting has arrived, no gossip has left yet: every pair holds
	// an established connection, as the explorer assumes of a start state.
	run(t, e, 15*time.Millisecond)
	if n := len(e.InFlight()); n != 0 {
		t.Fatalf("%d messages in flight at the start", n)
	}
	m, err := consequence.NewActorModelFromLive(wmSpec(), e, consequence.ActorOptions{Workload: wmWorkload,
		Faults: consequence.Faults{Resets: 1 << 20, Breaks: 1 << 20, ResetKinds: consequence.ResetBoth, StaleConnections: true}})
	if err != nil {
		t.Fatal(err)
	}
	r := &replay{t: t, trace: &trace, e: e, m: m, g: m.Start()}
	steps = nil
	faults := mrand.New(mrand.NewPCG(seed, 13))
	nextFault := e.Elapsed() + time.Duration(faults.IntN(100))*time.Millisecond
	var resets, silent, breaks int
	for e.Elapsed() < d {
		if e.Elapsed() >= nextFault {
			switch id := node.ID(1 + faults.IntN(wmNodes)); faults.IntN(3) {
			case 0, 1:
				s := faults.IntN(2) == 0
				if err := e.Reset(id, s); err != nil {
					t.Fatal(err)
				}
				steps = nil
				r.apply(consequence.ActorAction{Kind: consequence.ActReset, Node: id, Silent: s}, "reset")
				resets++
				if s {
					silent++
				}
			default:
				p := node.ID(1 + faults.IntN(wmNodes))
				if p == id || !r.g.Connected(id, p) {
					break
				}
				if err := e.BreakConnection(id, p); err != nil {
					t.Fatalf("event %d: the explorer holds %v–%v open: %v", r.n, id, p, err)
				}
				r.apply(consequence.ActorAction{Kind: consequence.ActBreak, Node: id, Peer: p}, "break")
				breaks++
			}
			nextFault = e.Elapsed() + faultGap + time.Duration(faults.IntN(100))*time.Millisecond
		}
		if !e.Step() {
			break
		}
		for _, s := range steps {
			r.step(s)
		}
		steps = steps[:0]
	}
	if err := e.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("replayed %d events: %d resets (%d silent), %d breaks", r.n, resets, silent, breaks)
	if silent == 0 || silent == resets || breaks == 0 {
		t.Fatalf("the run lacks a kind of fault: %d resets (%d silent), %d breaks", resets, silent, breaks)
	}
}
