package emulation_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Dg is the datagram (or, with Burst.Message, message) of dsvc.
type Dg struct{ Seq int }

func (Dg) MessageType() string { return "test.dg" }

// Burst is dsvc's application call: send N numbered Dgs to To, as
// datagrams, or as messages when Message is set.
type Burst struct {
	To      node.ID
	N       int
	Message bool
}

func (Burst) MessageType() string { return "test.burst" }

// dsvc records the sequence numbers it receives, datagrams and messages
// apart (by sender), with their arrival times, and its transport errors.
type dsvc struct {
	Next      int
	Datagrams map[node.ID][]int
	Messages  map[node.ID][]int
	MsgAt     []int64
	Errors    []node.ID
	// mark tells datagrams from messages at the receiver: the sender
	// numbers datagrams from 1000.
}

func (s *dsvc) Init(node.Env) {
	s.Datagrams, s.Messages = map[node.ID][]int{}, map[node.ID][]int{}
}
func (s *dsvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	seq := msg.(Dg).Seq
	if seq >= 1000 {
		s.Datagrams[from] = append(s.Datagrams[from], seq-1000)
		return
	}
	s.Messages[from] = append(s.Messages[from], seq)
	s.MsgAt = append(s.MsgAt, env.Now().Sub(emulation.Epoch).Nanoseconds())
}
func (s *dsvc) HandleTimer(node.Env, string) {}
func (s *dsvc) HandleApp(env node.Env, call node.Message) {
	b := call.(Burst)
	for i := 0; i < b.N; i++ {
		if b.Message {
			env.Send(b.To, Dg{Seq: s.Next})
		} else {
			env.SendDatagram(b.To, Dg{Seq: 1000 + s.Next})
		}
		s.Next++
	}
}
func (s *dsvc) HandleTransportError(env node.Env, peer node.ID) { s.Errors = append(s.Errors, peer) }

var dspec = node.Spec{Name: "dgrams", New: func() node.Service { return &dsvc{} }, Messages: []node.Message{Dg{}, Burst{}}}

func dsvcOf(t testing.TB, e *emulation.Emulator, id node.ID) *dsvc {
	t.Helper()
	return e.Core(id).Service().(*dsvc)
}

// dgramRun sends, at 1s, n1's burst (datagrams, then as many messages when
// msgs is set) to n2 over a jittery, lossy link and runs to 10s.
func dgramRun(t *testing.T, seed uint64, n int, msgs bool) (*emulation.Emulator, string, emulation.Result) {
	t.Helper()
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec: dspec, Nodes: 2, Seed: seed, StartSpread: time.Nanosecond, Duration: 10 * time.Second,
		Topology:  emulation.UniformTopology{L: emulation.Link{Latency: 10 * time.Millisecond, Jitter: 50 * time.Millisecond, Loss: 0.2}},
		Observers: emulation.Observers{Trace: &trace},
	})
	run(t, e, time.Second)
	if msgs {
		app(t, e, 1, Burst{To: 2, N: n, Message: true})
	}
	app(t, e, 1, Burst{To: 2, N: n})
	if msgs {
		app(t, e, 1, Burst{To: 2, N: n, Message: true})
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return e, trace.String(), r
}

// TestDatagramsReorderAndLose: datagrams between one pair each take their
// own jittered latency, so they overtake each other, and the link's loss
// loses some for good; nothing is duplicated, no transport error is
// reported, and the run is a pure function of its seed.
func TestDatagramsReorderAndLose(t *testing.T) {
	const seed, n = 3, 200
	logSeedOnFailure(t, seed)
	e, trace, r := dgramRun(t, seed, n, false)
	got := dsvcOf(t, e, 2).Datagrams[1]
	if slices.IsSorted(got) {
		t.Errorf("%d datagrams arrived in send order: no reordering", len(got))
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(got) {
		t.Errorf("a datagram arrived twice: %v", got)
	}
	d := r.Messages.Datagrams
	if d == nil || d.Sent != n || d.Delivered != int64(len(got)) || d.Lost != n-d.Delivered || d.Dropped != 0 || d.InFlight != 0 {
		t.Fatalf("datagram counts %+v, n2 got %d of %d", d, len(got), n)
	}
	if d.Lost < n/10 || d.Lost > n/3 { // 20% loss
		t.Errorf("%d of %d lost at 20%% loss", d.Lost, n)
	}
	if m := r.Messages; m.Sent != 0 || m.Delivered != 0 || m.Dropped != 0 || r.TransportErrors != 0 || len(dsvcOf(t, e, 1).Errors) != 0 {
		t.Errorf("messages %+v, transport errors %d", m, r.TransportErrors)
	}
	if got := r.EventsByKind["message"] + r.EventsByKind["drop"]; got != n {
		t.Errorf("%d message and drop events for %d datagrams", got, n)
	}
	for _, want := range []string{"n2 datagram test.dg from n1 -> hash=", "n2 drop datagram test.dg from n1 (lost)"} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %q", want)
		}
	}
	if strings.Contains(trace, "message test.dg") {
		t.Error("a datagram is traced as a message")
	}
	// Same seed, same run; another seed, another order.
	e2, trace2, _ := dgramRun(t, seed, n, false)
	if trace2 != trace || !slices.Equal(dsvcOf(t, e2, 2).Datagrams[1], got) {
		t.Error("the same seed gave another run")
	}
	e3, _, _ := dgramRun(t, seed+1, n, false)
	if slices.Equal(dsvcOf(t, e3, 2).Datagrams[1], got) {
		t.Error("another seed gave the same arrivals")
	}
}

// TestDatagramsLeaveMessagesAlone: messages sent around a burst of
// datagrams on the same pair arrive exactly as they do without the
// datagrams — in order, none lost, at the same times — since datagrams draw
// from streams of their own and use no connection.
func TestDatagramsLeaveMessagesAlone(t *testing.T) {
	const seed = 5
	logSeedOnFailure(t, seed)
	e, _, r := dgramRun(t, seed, 50, true)
	s := dsvcOf(t, e, 2)
	want := make([]int, 100)
	for i := range want {
		want[i] = i
		if i >= 50 {
			want[i] = i + 50 // the datagrams took 50..99
		}
	}
	if !slices.Equal(s.Messages[1], want) {
		t.Fatalf("messages arrived as %v, want %v", s.Messages[1], want)
	}
	if r.Messages.Sent != 100 || r.Messages.Delivered != 100 || r.Messages.Retransmissions == 0 || r.Messages.Datagrams.Sent != 50 {
		t.Fatalf("counts %+v", r.Messages)
	}
	// The same messages without the datagrams: the same arrival times.
	var trace bytes.Buffer
	alone := mustNew(t, emulation.Config{
		Spec: dspec, Nodes: 2, Seed: seed, StartSpread: time.Nanosecond, Duration: 10 * time.Second,
		Topology:  emulation.UniformTopology{L: emulation.Link{Latency: 10 * time.Millisecond, Jitter: 50 * time.Millisecond, Loss: 0.2}},
		Observers: emulation.Observers{Trace: &trace},
	})
	run(t, alone, time.Second)
	app(t, alone, 1, Burst{To: 2, N: 100, Message: true})
	ra, err := alone.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := dsvcOf(t, alone, 2).MsgAt; !slices.Equal(got, s.MsgAt) {
		t.Errorf("message arrival times changed by datagrams:\n%v\n%v", got, s.MsgAt)
	}
	if ra.Messages.Datagrams != nil || strings.Contains(trace.String(), "datagram") {
		t.Errorf("a run without datagrams reports some: %+v", ra.Messages.Datagrams)
	}
}

// TestDatagramsToUnreachableNodes: a datagram to a node that is down, that
// resets before the arrival, that is partitioned away, or that does not
// exist is dropped silently — no transport error — whereas a message to
// the down node is refused with one.
func TestDatagramsToUnreachableNodes(t *testing.T) {
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec: dspec, Nodes: 3, Seed: 1, StartSpread: time.Nanosecond,
		Topology:  emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Observers: emulation.Observers{Trace: &trace},
	})
	run(t, e, time.Second)
	if err := e.Down(2, false); err != nil {
		t.Fatal(err)
	}
	app(t, e, 1, Burst{To: 2, N: 1})  // receiver down
	app(t, e, 1, Burst{To: 99, N: 1}) // no such node
	app(t, e, 1, Burst{To: 3, N: 1})  // reset before the arrival
	if err := e.Reset(3, false); err != nil {
		t.Fatal(err)
	}
	run(t, e, 1500*time.Millisecond)
	if err := e.Partition(1, 3); err != nil {
		t.Fatal(err)
	}
	app(t, e, 1, Burst{To: 3, N: 1}) // partitioned at the send
	if err := e.Heal(1, 3); err != nil {
		t.Fatal(err)
	}
	app(t, e, 3, Burst{To: 1, N: 1}) // partitioned while in flight
	if err := e.Partition(1, 3); err != nil {
		t.Fatal(err)
	}
	run(t, e, 2*time.Second)
	if err := e.Heal(1, 3); err != nil {
		t.Fatal(err)
	}
	if err := e.Up(2); err != nil {
		t.Fatal(err)
	}
	run(t, e, 3*time.Second)
	for id := node.ID(1); id <= 3; id++ {
		s := dsvcOf(t, e, id)
		if len(s.Errors) != 0 || len(s.Datagrams) != 0 {
			t.Errorf("n%d: transport errors %v, datagrams %v", id, s.Errors, s.Datagrams)
		}
	}
	r := e.Result()
	if d := r.Messages.Datagrams; d.Sent != 5 || d.Dropped != 5 || d.Delivered != 0 || d.InFlight != 0 || r.TransportErrors != 0 {
		t.Fatalf("datagrams %+v, transport errors %d", d, r.TransportErrors)
	}
	for _, want := range []string{
		"n2 drop datagram test.dg from n1 (receiver down)",
		"n3 drop datagram test.dg from n1 (receiver reset)",
		"n3 drop datagram test.dg from n1 (partitioned)",
		"n1 drop datagram test.dg from n3 (partitioned)",
	} {
		if !strings.Contains(trace.String(), want) {
			t.Errorf("trace lacks %q:\n%s", want, trace.String())
		}
	}
	// A message to the same down node is refused, with a transport error.
	if err := e.Down(2, false); err != nil {
		t.Fatal(err)
	}
	app(t, e, 1, Burst{To: 2, N: 1, Message: true})
	run(t, e, 4*time.Second)
	if errs := dsvcOf(t, e, 1).Errors; !slices.Equal(errs, []node.ID{2}) {
		t.Errorf("a message to the down node: transport errors %v", errs)
	}
}

// TestDatagramsInFlightAndSnapshots: the datagrams in flight are part of
// InFlight (flagged), so the explorer's start state from the live
// emulation holds them as a multiset; with snapshot managers, a datagram
// carries its sender's checkpoint number and forces the receiver's
// checkpoint.
func TestDatagramsInFlightAndSnapshots(t *testing.T) {
	topo := emulation.UniformTopology{L: emulation.Link{Latency: time.Second, Jitter: time.Second}}
	e := mustNew(t, emulation.Config{Spec: dspec, Nodes: 2, Seed: 1, StartSpread: time.Nanosecond, Topology: topo})
	run(t, e, time.Second)
	app(t, e, 1, Burst{To: 2, N: 3})
	app(t, e, 1, Burst{To: 2, N: 1, Message: true})
	run(t, e, 1500*time.Millisecond) // before any arrival (latency 1s)
	in := e.InFlight()
	if len(in) != 4 || in[0].Datagram || !in[1].Datagram || !in[3].Datagram {
		t.Fatalf("in flight %v: want the message (due first) and the three datagrams", in)
	}
	m, err := consequence.NewActorModelFromLive(dspec, e, consequence.ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := m.Start(); len(g.Datagrams(1, 2)) != 3 || len(g.InFlight(1, 2)) != 1 {
		t.Fatalf("explorer start: datagrams %v, messages %v", g.Datagrams(1, 2), g.InFlight(1, 2))
	}

	var checkpoints []emulation.CheckpointEvent
	var net []emulation.NetworkEvent
	e = mustNew(t, emulation.Config{
		Spec: dspec, Nodes: 2, Seed: 1, StartSpread: time.Nanosecond, Topology: topo,
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: time.Hour}, OnCheckpoint: func(c emulation.CheckpointEvent) { checkpoints = append(checkpoints, c) }},
		Observers: emulation.Observers{OnNetwork: func(ev emulation.NetworkEvent) {
			if !ev.Protocol {
				net = append(net, ev)
			}
		}},
	})
	run(t, e, time.Second)
	if err := e.Gather(1); err != nil { // n1's number goes up
		t.Fatal(err)
	}
	cn1 := e.Snapshots(1).Status(e.Now()).CN // the burst carries it (the gather then moves on: n2 is a new neighbour)
	app(t, e, 1, Burst{To: 2, N: 3})
	run(t, e, 1500*time.Millisecond)
	for _, env := range e.InFlight() {
		if env.Datagram && env.CN != cn1 {
			t.Errorf("datagram %v in flight, want CN %d", env, cn1)
		}
	}
	cn2 := e.Snapshots(2).Status(e.Now()).CN
	run(t, e, 5*time.Second)
	if got := dsvcOf(t, e, 2).Datagrams[1]; len(got) != 3 {
		t.Fatalf("n2 got %v", got)
	}
	if e.Snapshots(2).Status(e.Now()).CN <= cn2 {
		t.Errorf("n2's number %d did not adopt the datagrams' %d", e.Snapshots(2).Status(e.Now()).CN, cn1)
	}
	forced := false
	for _, c := range checkpoints {
		forced = forced || (c.Node == 2 && c.Reason == snapshot.CheckpointForced)
	}
	if !forced {
		t.Errorf("no forced checkpoint at n2: %+v", checkpoints)
	}
	if len(net) != 6 {
		t.Errorf("%d network events for 3 datagrams: %+v", len(net), net)
	}
	for _, ev := range net {
		if !ev.Datagram {
			t.Errorf("network event %+v of a datagram not flagged", ev)
		}
	}
}

// poisonDg is a three-node service after steering's rot test, with a
// datagram: n3's timer sends n2 a Poison datagram, which makes n2 bad.
type poisonDg struct{ Bad bool }

type poisonMsg struct{}

func (poisonMsg) MessageType() string { return "dg.Poison" }

func (s *poisonDg) Init(env node.Env) {
	if env.Self() == 3 {
		env.SetTimer("send", time.Second)
	}
}
func (s *poisonDg) HandleMessage(node.Env, node.ID, node.Message) { s.Bad = true }
func (s *poisonDg) HandleApp(node.Env, node.Message)              {}
func (s *poisonDg) HandleTransportError(node.Env, node.ID)        {}
func (s *poisonDg) HandleTimer(env node.Env, _ string)            { env.SendDatagram(2, poisonMsg{}) }

var poisonSpec = node.Spec{
	Name:     "poison-datagram",
	New:      func() node.Service { return &poisonDg{} },
	Messages: []node.Message{poisonMsg{}},
	Properties: []node.Property{node.Always("NoneBad", func(v node.View) error {
		for _, id := range v.Nodes() {
			if s, _ := v.Service(id).(*poisonDg); s != nil && s.Bad {
				return fmt.Errorf("%v is bad", id)
			}
		}
		return nil
	})},
}

// TestSteeringFiltersDatagrams: a steering round at n2 predicts the
// violation through the delivery of n3's datagram, proposes the message
// filter for its type and sender, and its check — exploring with the
// filter in place — finds that the filter stops the datagram too, so it is
// installed.
func TestSteeringFiltersDatagrams(t *testing.T) {
	m, err := consequence.NewActorModel(poisonSpec, consequence.ActorOptions{N: 3})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(100, 0)
	s := &snapshot.Snapshot{Gatherer: 2, CN: 100, At: at}
	for _, id := range m.Nodes() {
		st, _, _ := m.Start().NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: id, CN: s.CN, State: b})
	}
	c, err := steering.New(steering.Config{Mode: steering.Steer, Spec: poisonSpec}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Round(context.Background(), s)
	if err != nil {
		t.Fatal(err)
	}
	want := steering.Filter{Kind: steering.FilterMessage, Node: 2, From: 3, Type: "dg.Poison"}
	if len(rep.Predictions) == 0 || rep.Predictions[0].Filter == nil || *rep.Predictions[0].Filter != want {
		t.Fatalf("predictions %+v, want one with filter %v", rep.Predictions, want)
	}
	if p := rep.Predictions[0].Report.Path; len(p) != 2 || p[1].Kind != "deliver-datagram" {
		t.Fatalf("predicted path %+v", p)
	}
	if !slices.Equal(rep.Installed, []steering.Filter{want}) || rep.Unhelpful != 0 {
		t.Fatalf("installed %v, unhelpful %d; want [%v]", rep.Installed, rep.Unhelpful, want)
	}
}
