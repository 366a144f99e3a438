package emulation_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

const lat = 10 * time.Millisecond // one-way latency of the scripted topology

// scripted returns a two-or-more-node emulator on an exact network (10 ms
// one way, no jitter, no loss) with every node started at Epoch, run to 1s.
func scripted(t *testing.T, nodes int, cfg tcfg, workload func(node.ID, bool) []node.Message) (*emulation.Emulator, *bytes.Buffer) {
	t.Helper()
	cfg.nodes = nodes
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec:        testSpec(cfg),
		Nodes:       nodes,
		Seed:        1,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Workload:    workload,
		Observers:   emulation.Observers{Trace: &trace},
	})
	run(t, e, time.Second)
	return e, &trace
}

func run(t *testing.T, e *emulation.Emulator, until time.Duration) {
	t.Helper()
	if err := e.RunUntil(at(until)); err != nil {
		t.Fatal(err)
	}
}

func app(t *testing.T, e *emulation.Emulator, id node.ID, m node.Message) {
	t.Helper()
	if err := e.AppCall(id, m); err != nil {
		t.Fatal(err)
	}
}

func wantErrors(t *testing.T, s *tsvc, peers []node.ID, times []time.Duration) {
	t.Helper()
	if !slices.Equal(s.Errors, peers) {
		t.Fatalf("transport errors about %v, want %v", s.Errors, peers)
	}
	var want []int64
	for _, d := range times {
		want = append(want, ns(d))
	}
	if !slices.Equal(s.ErrorAt, want) {
		t.Fatalf("transport errors at %v ns, want %v", s.ErrorAt, want)
	}
}

func TestMessageDeliveredAfterLatency(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 2*time.Second)
	if got := svc(t, e, 2).RecvAt; !slices.Equal(got, []int64{ns(time.Second + lat)}) {
		t.Fatalf("n2 received at %v, want [%d]", got, ns(time.Second+lat))
	}
}

func TestResetWithRSTNotifiesPeers(t *testing.T) {
	e, trace := scripted(t, 3, tcfg{}, nil)
	app(t, e, 1, SendTo{To: 2, N: 1}) // opens 1–2
	run(t, e, 1500*time.Millisecond)
	if err := e.Reset(2, false); err != nil {
		t.Fatal(err)
	}
	if e.Incarnation(2) != 1 {
		t.Fatalf("incarnation of n2 = %d, want 1", e.Incarnation(2))
	}
	if s := svc(t, e, 2); s.Got != 0 {
		t.Fatalf("n2 kept its state across a reset: Got=%d", s.Got)
	}
	run(t, e, 2*time.Second)
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{1500*time.Millisecond + lat})
	wantErrors(t, svc(t, e, 3), nil, nil) // n3 had no connection to n2
	if !strings.Contains(trace.String(), "n2 reset rst") {
		t.Fatalf("trace lacks the reset line:\n%s", trace)
	}
	// The error removed the connection: the next send opens a new one.
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 3*time.Second)
	if s := svc(t, e, 2); s.Got != 1 {
		t.Fatalf("n2 got %d messages after reconnecting, want 1", s.Got)
	}
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{1500*time.Millisecond + lat})
}

func TestSilentResetStaleConnectionDiscoveredOnWrite(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 1500*time.Millisecond)
	if err := e.Reset(2, true); err != nil {
		t.Fatal(err)
	}
	run(t, e, 2*time.Second)
	wantErrors(t, svc(t, e, 1), nil, nil) // the RST was lost: n1 knows nothing
	// Three writes on the stale connection: all dropped, one error, one
	// RTT after the first write.
	app(t, e, 1, SendTo{To: 2, N: 3})
	run(t, e, 3*time.Second)
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{2*time.Second + 2*lat})
	if s := svc(t, e, 2); s.Got != 0 {
		t.Fatalf("n2 got %d messages over a stale connection, want 0", s.Got)
	}
	r := e.Result()
	if r.Messages.Dropped != 3 || r.Messages.Delivered != 1 {
		t.Fatalf("messages %+v, want 3 dropped and 1 delivered", r.Messages)
	}
	// A new connection works.
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 4*time.Second)
	if s := svc(t, e, 2); s.Got != 1 {
		t.Fatalf("n2 got %d messages after reconnecting, want 1", s.Got)
	}
}

func TestInFlightToResetNodeDroppedAndSenderNotified(t *testing.T) {
	for _, silent := range []bool{true, false} {
		name := "rst"
		if silent {
			name = "silent"
		}
		t.Run(name, func(t *testing.T) {
			e, trace := scripted(t, 2, tcfg{}, nil)
			// An established connection: its first message has arrived
			// (a connection whose first message is still on its way is
			// TestFirstMessageReachesNewIncarnation's).
			app(t, e, 1, SendTo{To: 2, N: 1})
			run(t, e, 1500*time.Millisecond)
			app(t, e, 1, SendTo{To: 2, N: 2}) // arrive at 1.510
			run(t, e, 1500*time.Millisecond+lat/2)
			if err := e.Reset(2, silent); err != nil {
				t.Fatal(err)
			}
			run(t, e, 2*time.Second)
			if s := svc(t, e, 2); s.Got != 0 {
				t.Fatalf("n2 got %d in-flight messages of its old incarnation", s.Got)
			}
			// Silent: the first dropped message's RST returns at
			// arrival+latency. RST: the reset's own RST arrives first
			// (reset+latency) and the drops are not reported again.
			when := 1500*time.Millisecond + 2*lat
			if !silent {
				when = 1500*time.Millisecond + lat/2 + lat
			}
			wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{when})
			if got := strings.Count(trace.String(), "drop message test.data from n1 (receiver reset)"); got != 2 {
				t.Fatalf("%d drop lines, want 2:\n%s", got, trace)
			}
		})
	}
}

func TestDownNodeRefusesConnectionsUntilUp(t *testing.T) {
	workload := func(id node.ID, restart bool) []node.Message {
		if restart {
			return []node.Message{Inc{}, Inc{}}
		}
		return nil
	}
	e, trace := scripted(t, 2, tcfg{}, workload)
	if err := e.Down(2, false); err != nil {
		t.Fatal(err)
	}
	if e.Live(2) || !slices.Equal(e.View().Nodes(), []node.ID{1}) || e.View().Service(2) != nil {
		t.Fatalf("n2 still in the view after Down: %v", e.View().Nodes())
	}
	app(t, e, 1, SendTo{To: 2, N: 2})
	run(t, e, 2*time.Second)
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{time.Second + 2*lat})
	if err := e.AppCall(2, Inc{}); err == nil {
		t.Fatal("AppCall on a down node succeeded")
	}
	if err := e.Up(2); err != nil {
		t.Fatal(err)
	}
	if err := e.Up(2); err == nil {
		t.Fatal("Up on a live node succeeded")
	}
	run(t, e, 2*time.Second) // the restart workload runs at the same instant
	if s := svc(t, e, 2); s.Apps != 2 {
		t.Fatalf("restart workload: n2 ran %d app calls, want 2", s.Apps)
	}
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 3*time.Second)
	if s := svc(t, e, 2); s.Got != 1 {
		t.Fatalf("n2 got %d messages after Up, want 1", s.Got)
	}
	out := trace.String()
	for _, line := range []string{"n2 down rst", "n2 up -> hash=", "n2 app test.inc"} {
		if !strings.Contains(out, line) {
			t.Fatalf("trace lacks %q:\n%s", line, out)
		}
	}
}

func TestRestartedNodeReplacesStaleConnectionSilently(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	app(t, e, 1, SendTo{To: 2, N: 1}) // n1 opens 1–2
	run(t, e, 1500*time.Millisecond)
	if err := e.Reset(2, true); err != nil {
		t.Fatal(err)
	}
	app(t, e, 2, SendTo{To: 1, N: 1}) // the new n2 opens a new connection
	run(t, e, 2*time.Second)
	if s := svc(t, e, 1); s.Got != 1 {
		t.Fatalf("n1 got %d messages from the restarted n2, want 1", s.Got)
	}
	app(t, e, 1, SendTo{To: 2, N: 1}) // over the new connection
	run(t, e, 3*time.Second)
	if s := svc(t, e, 2); s.Got != 1 {
		t.Fatalf("n2 got %d messages over the new connection, want 1", s.Got)
	}
	wantErrors(t, svc(t, e, 1), nil, nil)
	wantErrors(t, svc(t, e, 2), nil, nil)
}

func TestBreakConnection(t *testing.T) {
	e, trace := scripted(t, 2, tcfg{}, nil)
	if err := e.BreakConnection(1, 2); err == nil {
		t.Fatal("BreakConnection without a connection succeeded")
	}
	app(t, e, 1, SendTo{To: 2, N: 1})
	app(t, e, 2, SendTo{To: 1, N: 1})
	if err := e.BreakConnection(1, 2); err != nil {
		t.Fatal(err)
	}
	run(t, e, 2*time.Second)
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{time.Second})
	wantErrors(t, svc(t, e, 2), []node.ID{1}, []time.Duration{time.Second + lat})
	if a, b := svc(t, e, 1).Got, svc(t, e, 2).Got; a != 0 || b != 0 {
		t.Fatalf("in-flight messages survived the break: n1 got %d, n2 got %d", a, b)
	}
	if !strings.Contains(trace.String(), "n1 break n2") {
		t.Fatalf("trace lacks the break:\n%s", trace)
	}
	app(t, e, 1, SendTo{To: 2, N: 1})
	run(t, e, 3*time.Second)
	if s := svc(t, e, 2); s.Got != 1 {
		t.Fatalf("n2 got %d after the break, want 1", s.Got)
	}
}

func TestSendToUnknownNodeIsRefused(t *testing.T) {
	e, _ := scripted(t, 2, tcfg{}, nil)
	app(t, e, 1, SendTo{To: 99, N: 2})
	run(t, e, 2*time.Second)
	wantErrors(t, svc(t, e, 1), []node.ID{99}, []time.Duration{time.Second + emulation.DefaultMinRTO})
}

func TestResetDropsTimersOfOldIncarnation(t *testing.T) {
	e, trace := scripted(t, 2, tcfg{period: time.Second, fanout: 0}, nil)
	run(t, e, 2500*time.Millisecond) // n2 ticked at 1s and 2s
	if err := e.Reset(2, true); err != nil {
		t.Fatal(err)
	}
	run(t, e, 5*time.Second)
	var ticks []string
	for _, line := range strings.Split(trace.String(), "\n") {
		if strings.Contains(line, " n2 timer tick") {
			ticks = append(ticks, line[:strings.IndexByte(line, ' ')])
		}
	}
	want := []string{"00:00:01.000000000", "00:00:02.000000000", "00:00:03.500000000", "00:00:04.500000000"}
	if !slices.Equal(ticks, want) {
		t.Fatalf("n2 ticked at %v, want %v (the old 3s tick must be lost)", ticks, want)
	}
	if s := svc(t, e, 2); s.Ticks != 2 {
		t.Fatalf("n2 counted %d ticks since its reset, want 2", s.Ticks)
	}
}

func TestDownNodeTimersAndQueuedAppCallsAreLost(t *testing.T) {
	workload := func(id node.ID, restart bool) []node.Message { return []node.Message{Inc{}} }
	e, trace := scripted(t, 2, tcfg{period: time.Second}, workload)
	run(t, e, 1500*time.Millisecond)
	if err := e.Down(2, true); err != nil {
		t.Fatal(err)
	}
	run(t, e, 5*time.Second)
	out := trace.String()
	if strings.Contains(out, "00:00:02.000000000 n2 timer") {
		t.Fatalf("a down node's timer fired:\n%s", out)
	}
	if err := e.Down(2, true); err == nil {
		t.Fatal("Down on a down node succeeded")
	}
	// Up queues the restart call; going down before it runs loses it.
	if err := e.Up(2); err != nil {
		t.Fatal(err)
	}
	if err := e.Down(2, true); err != nil {
		t.Fatal(err)
	}
	run(t, e, 6*time.Second)
	if !strings.Contains(trace.String(), "00:00:05.000000000 n2 drop app test.inc (node reset or down)") {
		t.Fatalf("the app call queued for a node that went down was not dropped:\n%s", trace)
	}
}
