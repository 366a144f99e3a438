package emulation_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// A partition loses what is in flight between the two nodes, breaks their
// connection (both ends hear of it one RTT later), loses every send across
// it (one transport error per connection attempt) and leaves other links
// alone; after Heal the next send opens a new connection.
func TestPartitionLosesMessagesUntilHeal(t *testing.T) {
	e, trace := scripted(t, 3, tcfg{}, nil)
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 2*time.Second) // n1–n2 connected, one message delivered
	app(t, e, 1, SendTo{To: 2, N: 2})
	must(t, e.Partition(1, 2))
	if !e.Partitioned(2, 1) || e.Partitioned(1, 3) {
		t.Fatalf("Partitioned(2, 1)=%v Partitioned(1, 3)=%v, want true, false", e.Partitioned(2, 1), e.Partitioned(1, 3))
	}
	run(t, e, 3*time.Second)
	if got := svc(t, e, 2).Got; got != 1 {
		t.Fatalf("n2 got %d messages, want only the one sent before the partition", got)
	}
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{2*time.Second + 2*lat})
	wantErrors(t, svc(t, e, 2), []node.ID{1}, []time.Duration{2*time.Second + 2*lat})

	// Sends across the cut are lost, each attempt answered by one error;
	// other links work.
	app(t, e, 2, SendTo{To: 1, N: 3})
	app(t, e, 1, SendTo{To: 3, N: 1})
	run(t, e, 4*time.Second)
	if got := svc(t, e, 1).Got; got != 0 {
		t.Fatalf("n1 got %d messages across the partition", got)
	}
	if got := svc(t, e, 3).Got; got != 1 {
		t.Fatalf("n3 got %d messages from n1, want 1", got)
	}
	wantErrors(t, svc(t, e, 2), []node.ID{1, 1}, []time.Duration{2*time.Second + 2*lat, 3*time.Second + 2*lat})

	must(t, e.Heal(2, 1))
	app(t, e, 2, SendTo{To: 1, N: 1})
	run(t, e, 5*time.Second)
	if s := svc(t, e, 1); s.Got != 1 || s.Expect[2] != 4 {
		t.Fatalf("after Heal n1 got %d (next seq expected %d), want 1: seq 3, after the 3 lost", s.Got, s.Expect[2])
	}
	for _, line := range []string{"n1 partition n2", "n2 heal n1"} {
		if !strings.Contains(trace.String(), line) {
			t.Errorf("trace lacks %q:\n%s", line, trace)
		}
	}
	r := e.Result()
	if r.Messages.InFlight != 0 {
		t.Errorf("messages unaccounted for: %+v", r.Messages)
	}
}

// A node's reset does not heal its cuts: after the restart its sends are
// still lost.
func TestPartitionSurvivesReset(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	must(t, e.Partition(1, 2))
	must(t, e.Reset(1, false))
	app(t, e, 1, SendTo{To: 2, N: 1})
	must(t, e.Down(2, true))
	must(t, e.Up(2))
	app(t, e, 2, SendTo{To: 1, N: 1})
	run(t, e, 2*time.Second)
	if a, b := svc(t, e, 1).Got, svc(t, e, 2).Got; a != 0 || b != 0 {
		t.Fatalf("messages crossed the partition after restarts: n1 got %d, n2 got %d", a, b)
	}
}

// Isolate cuts one node from all others, Reconnect heals it.
func TestIsolateAndReconnect(t *testing.T) {
	e, _ := scripted(t, 3, tcfg{}, nil)
	must(t, e.Isolate(3))
	app(t, e, 1, SendTo{To: 3, N: 1})
	app(t, e, 3, SendTo{To: 2, N: 1})
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 2*time.Second)
	if a, b, c := svc(t, e, 1).Got, svc(t, e, 2).Got, svc(t, e, 3).Got; a != 0 || b != 1 || c != 0 {
		t.Fatalf("n1 got %d, n2 %d, n3 %d; want 0, 1 (from n1), 0", a, b, c)
	}
	must(t, e.Reconnect(3))
	if e.Partitioned(3, 1) || e.Partitioned(2, 3) {
		t.Fatal("Reconnect left a cut link")
	}
	app(t, e, 1, SendTo{To: 3, N: 1})
	app(t, e, 3, SendTo{To: 2, N: 1})
	run(t, e, 3*time.Second)
	if b, c := svc(t, e, 2).Got, svc(t, e, 3).Got; b != 2 || c != 1 {
		t.Fatalf("after Reconnect n2 got %d, n3 %d; want 2, 1", b, c)
	}
}

// DropNext discards exactly the next matching message on arrival: the
// ones before and after it on the channel arrive, nobody gets a transport
// error, and the drop is counted and traced.
func TestDropNextDropsOneMessage(t *testing.T) {
	e, trace := scripted(t, 3, tcfg{}, nil)
	must(t, e.DropNext(1, 2, Data{}.MessageType()))
	if e.PendingDrops() != 1 {
		t.Fatalf("PendingDrops = %d, want 1", e.PendingDrops())
	}
	app(t, e, 1, SendTo{To: 3, N: 1}) // another channel: untouched
	app(t, e, 1, SendTo{To: 2, N: 3})
	run(t, e, 2*time.Second)
	s2 := svc(t, e, 2)
	if s2.Got != 2 || s2.Expect[1] != 3 || s2.Disorder != 1 {
		t.Fatalf("n2 got %d, expects seq %d, disorder %d; want 2 (seq 1 and 2), 3, 1", s2.Got, s2.Expect[1], s2.Disorder)
	}
	if got := svc(t, e, 3).Got; got != 1 {
		t.Fatalf("n3 got %d, want 1", got)
	}
	if len(svc(t, e, 1).Errors) != 0 {
		t.Fatalf("n1 got transport errors %v", svc(t, e, 1).Errors)
	}
	if e.PendingDrops() != 0 {
		t.Fatalf("PendingDrops = %d after the drop, want 0", e.PendingDrops())
	}
	r := e.Result()
	if r.Messages.Dropped != 1 || r.Messages.InFlight != 0 {
		t.Fatalf("messages %+v, want 1 dropped and none in flight", r.Messages)
	}
	if !strings.Contains(trace.String(), "n2 drop message test.data from n1 (fault)") {
		t.Fatalf("trace lacks the drop:\n%s", trace)
	}
}

// A message that does not match (wrong sender, receiver or type) does not
// consume the rule.
func TestDropNextMatchesExactly(t *testing.T) {
	e, _ := scripted(t, 3, tcfg{}, nil)
	must(t, e.DropNext(1, 2, "test.other"))
	must(t, e.DropNext(3, 2, Data{}.MessageType()))
	app(t, e, 1, SendTo{To: 2, N: 2})
	app(t, e, 2, SendTo{To: 3, N: 1})
	run(t, e, 2*time.Second)
	if a, b := svc(t, e, 2).Got, svc(t, e, 3).Got; a != 2 || b != 1 {
		t.Fatalf("n2 got %d, n3 %d; want 2, 1", a, b)
	}
	if e.PendingDrops() != 2 {
		t.Fatalf("PendingDrops = %d, want 2", e.PendingDrops())
	}
}

func TestFaultArgumentsValidated(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	for name, err := range map[string]error{
		"Partition self":    e.Partition(1, 1),
		"Partition unknown": e.Partition(1, 9),
		"Heal unknown":      e.Heal(0, 1),
		"Isolate unknown":   e.Isolate(9),
		"Reconnect unknown": e.Reconnect(9),
		"DropNext unknown":  e.DropNext(1, 9, "test.data"),
		"DropNext no type":  e.DropNext(1, 2, ""),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "emulation: ") {
			t.Errorf("%s: err = %v, want an emulation: error", name, err)
		}
	}
	must(t, e.Heal(1, 2)) // not cut: nothing to do
	must(t, e.Partition(1, 2))
	must(t, e.Partition(2, 1)) // already cut: nothing to do
}

// A run with scripted faults is a pure function of its seed and script:
// gossip on the default wide-area network with snapshots, a node isolated
// and reconnected, a pair partitioned and a message dropped.
func TestFaultsAreDeterministic(t *testing.T) {
	const seed = 7
	logSeedOnFailure(t, seed)
	runOnce := func() (string, emulation.Result) {
		var trace bytes.Buffer
		cfg := gossipConfig(seed, 6, 0, &trace)
		cfg.Duration = 20 * time.Second
		cfg.Snapshots = &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: 2 * time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: 3 * time.Second}}}
		e := mustNew(t, cfg)
		for _, step := range []struct {
			at time.Duration
			do func() error
		}{
			{2 * time.Second, func() error { return e.Isolate(3) }},
			{3 * time.Second, func() error { return e.DropNext(1, 2, Data{}.MessageType()) }},
			{5 * time.Second, func() error { return e.Partition(4, 5) }},
			{8 * time.Second, func() error { return e.Reconnect(3) }},
			{12 * time.Second, func() error { return e.Heal(5, 4) }},
		} {
			must(t, e.RunUntil(at(step.at)))
			must(t, step.do())
		}
		r, err := e.Run(context.Background())
		must(t, err)
		return trace.String(), r
	}
	t1, r1 := runOnce()
	t2, r2 := runOnce()
	if t1 != t2 {
		t.Fatal("two runs with the same seed and script traced differently")
	}
	if r1.Messages != r2.Messages || r1.TransportErrors != r2.TransportErrors {
		t.Fatalf("results differ: %+v vs %+v", r1.Messages, r2.Messages)
	}
	if !strings.Contains(t1, "partition") || r1.Messages.Dropped == 0 {
		t.Fatalf("the script did not act: dropped %d", r1.Messages.Dropped)
	}
}

// Submit queues the call: it runs on the next step, after what is due now,
// and not at all if the node resets first.
func TestSubmitQueuesAnApplicationCall(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	must(t, e.Submit(1, Inc{}))
	if got := svc(t, e, 1).Apps; got != 0 {
		t.Fatalf("Submit ran the call at once (%d calls)", got)
	}
	run(t, e, time.Second)
	if got := svc(t, e, 1).Apps; got != 1 {
		t.Fatalf("n1 handled %d calls, want 1", got)
	}
	must(t, e.Submit(2, Inc{}))
	must(t, e.Reset(2, false))
	run(t, e, 2*time.Second)
	if got := svc(t, e, 2).Apps; got != 0 {
		t.Fatalf("a call queued before a reset reached the new incarnation (%d calls)", got)
	}
	if err := e.Submit(1, nil); err == nil {
		t.Fatal("Submit(nil) succeeded")
	}
	must(t, e.Down(1, false))
	if err := e.Submit(1, Inc{}); err == nil {
		t.Fatal("Submit to a down node succeeded")
	}
}

// A message DropNext discards has reached the node's snapshot layer (the
// first layer of its pipeline): a larger checkpoint number it carries
// forces the receiver's checkpoint, observed before the delivery, while
// the handler never sees the message. (n1's gather then goes on with n2,
// a new neighbour, at cut 2: the Data message is observed sent before
// n1's checkpoint for it.)
func TestDropNextStillForcesTheCheckpoint(t *testing.T) {
	const seed = 5
	logSeedOnFailure(t, seed)
	var cps []emulation.CheckpointEvent
	var net []emulation.NetworkEvent
	cfg := emulation.Config{Spec: testSpec(tcfg{nodes: 2}), Nodes: 2, Seed: seed,
		Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{Interval: time.Hour},
			OnCheckpoint: func(c emulation.CheckpointEvent) { cps = append(cps, c) }},
		Observers: emulation.Observers{OnNetwork: func(ev emulation.NetworkEvent) { net = append(net, ev) }},
	}
	e := mustNew(t, cfg)
	run(t, e, 20*time.Second)
	must(t, e.Gather(1)) // alone: n1 checkpoints at 1 and the gather completes
	if cn := e.Snapshots(1).Status(e.Now()).CN; cn != 1 {
		t.Fatalf("n1's number after its gather: %d", cn)
	}
	must(t, e.DropNext(1, 2, Data{}.MessageType()))
	must(t, e.AppCall(1, SendTo{To: 2, N: 1}))
	run(t, e, 25*time.Second)
	if got := svc(t, e, 2).Got; got != 0 || e.PendingDrops() != 0 {
		t.Fatalf("n2 handled %d messages, %d drops pending", got, e.PendingDrops())
	}
	var forced *emulation.CheckpointEvent
	for i := range cps {
		if cps[i].Node == 2 && cps[i].Reason == snapshot.CheckpointForced && cps[i].CN == 1 {
			forced = &cps[i]
		}
	}
	var delivered *emulation.NetworkEvent
	for i := range net {
		if net[i].Kind == emulation.NetDeliver && net[i].To == 2 && net[i].Msg == (Data{Seq: 0}) {
			delivered = &net[i]
		}
	}
	if forced == nil || delivered == nil || forced.Seq >= delivered.Seq || delivered.CN != 1 {
		t.Fatalf("forced checkpoint %+v, delivery %+v: want the checkpoint observed first", forced, delivered)
	}
	var sent, cut2 uint64
	for _, ev := range net {
		if ev.Kind == emulation.NetSend && ev.ID == delivered.ID {
			sent = ev.Seq
		}
	}
	for _, c := range cps {
		if c.Node == 1 && c.CN == 2 {
			cut2 = c.Seq
		}
	}
	if sent == 0 || cut2 == 0 || sent >= cut2 {
		t.Errorf("n1's Data send observed at %d, its checkpoint 2 at %d: want the send first", sent, cut2)
	}
}
