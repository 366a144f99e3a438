package emulation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// traceFrom returns the trace lines written since mark (a length of the
// trace), without their hashes, which depend on the service's encoding.
func traceFrom(trace string, mark int) string {
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(trace[mark:]), "\n") {
		if i := strings.Index(line, " -> hash="); i >= 0 {
			line = line[:i] + line[i+len(" -> hash=")+32:]
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

func wantTrace(t *testing.T, got, want string) {
	t.Helper()
	if got != strings.TrimSpace(want) {
		t.Fatalf("trace:\n%s\nwant:\n%s", got, strings.TrimSpace(want))
	}
}

// TestFirstMessageReachesNewIncarnation pins TCP's SYN semantics: the
// first messages of a connection whose first message has not arrived yet
// are accepted by whichever incarnation of the receiver is up when they
// arrive (MaceMC's RandTree bug needs a JoinReply to reach the node that
// reset after asking for it). Nobody gets a transport error, and the
// connection, bound to the new incarnation, carries later messages.
func TestFirstMessageReachesNewIncarnation(t *testing.T) {
	for _, silent := range []bool{true, false} {
		name, label := "rst", "reset rst"
		if silent {
			name, label = "silent", "reset silent"
		}
		t.Run(name, func(t *testing.T) {
			e, trace := scripted(t, 2, tcfg{}, nil)
			mark := trace.Len()
			app(t, e, 1, SendTo{To: 2, N: 2}) // opens 1→2; arrive at 1.010
			run(t, e, time.Second+lat/2)
			if err := e.Reset(2, silent); err != nil {
				t.Fatal(err)
			}
			// The explorer's start state holds them: the network will
			// deliver them.
			if got := len(e.InFlight()); got != 2 {
				t.Fatalf("%d messages in flight after the reset, want 2", got)
			}
			run(t, e, 2*time.Second)
			app(t, e, 1, SendTo{To: 2, N: 1}) // on the connection, now bound to incarnation 1
			run(t, e, 3*time.Second)
			wantTrace(t, traceFrom(trace.String(), mark), `
00:00:01.000000000 n1 app test.send sends=2
00:00:01.005000000 n2 `+label+` sends=0
00:00:01.010000000 n2 message test.data from n1 sends=0
00:00:01.010000000 n2 message test.data from n1 sends=0
00:00:02.000000000 n1 app test.send sends=1
00:00:02.010000000 n2 message test.data from n1 sends=0
`)
			if s := svc(t, e, 2); s.Got != 3 || s.Disorder != 0 {
				t.Fatalf("n2 got %d messages (%d out of order), want 3 in order", s.Got, s.Disorder)
			}
			wantErrors(t, svc(t, e, 1), nil, nil)
			wantErrors(t, svc(t, e, 2), nil, nil)
		})
	}
}

// TestFirstMessageRefusedByDownNode: a receiver that is down when the
// first message of a connection arrives refuses it, as before; the sender
// gets the RST one-way latency after the arrival, and the messages behind
// it on that connection are dropped even if the receiver comes back.
func TestFirstMessageRefusedByDownNode(t *testing.T) {
	e, trace := scripted(t, 2, tcfg{}, nil)
	mark := trace.Len()
	app(t, e, 1, SendTo{To: 2, N: 2})
	run(t, e, time.Second+lat/2)
	if err := e.Down(2, false); err != nil {
		t.Fatal(err)
	}
	run(t, e, time.Second+lat)
	run(t, e, 2*time.Second)
	wantTrace(t, traceFrom(trace.String(), mark), `
00:00:01.000000000 n1 app test.send sends=2
00:00:01.005000000 n2 down rst
00:00:01.010000000 n2 drop message test.data from n1 (receiver down)
00:00:01.010000000 n2 drop message test.data from n1 (receiver down)
00:00:01.020000000 n1 transport-error n2 sends=0
`)
	wantErrors(t, svc(t, e, 1), []node.ID{2}, []time.Duration{time.Second + 2*lat})
}

// TestFirstMessageRefusedWhenReceiverHoldsAnotherConnection: the receiver
// reset and its new incarnation opened a connection of its own to the
// sender before the old connection's first message arrived; that message
// finds the receiver holding another connection and is dropped with an
// RST, as a message to an incarnation it was not sent to.
func TestFirstMessageRefusedWhenReceiverHoldsAnotherConnection(t *testing.T) {
	e, trace := scripted(t, 2, tcfg{}, nil)
	mark := trace.Len()
	app(t, e, 1, SendTo{To: 2, N: 1}) // arrives at 1.010
	run(t, e, time.Second+lat/5)
	if err := e.Reset(2, true); err != nil {
		t.Fatal(err)
	}
	app(t, e, 2, SendTo{To: 1, N: 1}) // opens 2→1 at 1.002, replacing n1's socket
	run(t, e, 2*time.Second)
	wantTrace(t, traceFrom(trace.String(), mark), `
00:00:01.000000000 n1 app test.send sends=1
00:00:01.002000000 n2 reset silent sends=0
00:00:01.002000000 n2 app test.send sends=1
00:00:01.010000000 n2 drop message test.data from n1 (receiver reset)
00:00:01.012000000 n1 message test.data from n2 sends=0
00:00:01.020000000 n1 transport-error n2 sends=0
`)
	if s := svc(t, e, 2); s.Got != 0 {
		t.Fatalf("n2 got %d messages, want 0", s.Got)
	}
}
