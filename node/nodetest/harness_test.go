package nodetest_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestScripts runs the pinger scenarios in testdata/scripts through Walk,
// the entry point services use.
func TestScripts(t *testing.T) {
	nodetest.Walk(t, "testdata/scripts", pingerConfig)
}

// fatalRecorder stands in for the test when a command is expected to fail:
// it keeps what d.Fatalf reported instead of ending the test.
type fatalRecorder struct {
	testing.TB
	msg    string
	failed bool
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	r.failed = true
}

// TestErrors runs testdata/errors.txt, where commands that cannot run print
// "fatal: " and the message Run reported through d.Fatalf, without the
// script position that Fatalf puts first.
func TestErrors(t *testing.T) {
	h := newHarness(t)
	datadriven.RunTest(t, "testdata/errors.txt", func(t *testing.T, d *datadriven.TestData) string {
		rec := &fatalRecorder{TB: t}
		out := h.Run(rec, d)
		if !rec.failed {
			return out
		}
		if out != "" {
			t.Errorf("%s: Run returned %q after failing", d.Pos, out)
		}
		msg, ok := strings.CutPrefix(rec.msg, d.Pos+": ")
		if !ok {
			t.Errorf("%s: failure %q does not start with the script position", d.Pos, rec.msg)
		}
		return "fatal: " + msg + "\n"
	})
}

func newHarness(t *testing.T) *nodetest.Harness {
	t.Helper()
	h, err := nodetest.New(pingerConfig())
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// run executes one script line on h and fails the test if it cannot run.
func run(t *testing.T, h *nodetest.Harness, line string) string {
	t.Helper()
	cmd, args, err := datadriven.ParseLine(line)
	if err != nil {
		t.Fatal(err)
	}
	return h.Run(t, &datadriven.TestData{Pos: "line", Cmd: cmd, CmdArgs: args})
}

func TestNewRejectsBadConfig(t *testing.T) {
	noop := func(*nodetest.Harness, []string, io.Writer) error { return nil }
	cases := map[string]nodetest.Config{
		"no spec":     {},
		"shadowing":   {Spec: pingerConfig().Spec, Commands: map[string]nodetest.Command{"deliver": noop}},
		"nil command": {Spec: pingerConfig().Spec, Commands: map[string]nodetest.Command{"x": nil}},
		"limit":       {Spec: pingerConfig().Spec, DeliverAllLimit: -1},
	}
	for name, cfg := range cases {
		if _, err := nodetest.New(cfg); err == nil || !strings.HasPrefix(err.Error(), "nodetest: ") {
			t.Errorf("%s: New = %v, want a nodetest error", name, err)
		}
	}
}

func TestHarnessExposesStateReadOnly(t *testing.T) {
	h := newHarness(t)
	run(t, h, "start n3 n1 n2")
	run(t, h, "app n1 ping n2")
	run(t, h, "app n3 ping n2")

	if got, want := fmt.Sprint(h.Nodes()), "[n1 n2 n3]"; got != want {
		t.Errorf("Nodes = %s, want %s", got, want)
	}
	if h.Service(9) != nil || h.TimerScheduled(9, tickTimer) {
		t.Error("a node that was never started shows in the view")
	}
	if !h.TimerScheduled(1, retryTimer) || h.TimerScheduled(2, retryTimer) {
		t.Error("TimerScheduled disagrees with the pings sent")
	}
	if p := h.Service(1).(*pinger); p.Waiting != 2 || p.Sent != 1 {
		t.Errorf("n1 = %+v, want waiting for n2 after one ping", p)
	}

	pending := h.Pending()
	if got, want := fmt.Sprint(pending), "[{n1 n2 0 Ping(1)} {n3 n2 0 Ping(1)}]"; got != want {
		t.Errorf("Pending = %s, want %s", got, want)
	}
	pending[0].Msg = Pong{Seq: 99} // the caller's copy
	if got := run(t, h, "pending"); got != "n1 -> n2 Ping(1)\nn3 -> n2 Ping(1)\n" {
		t.Errorf("pending after modifying Pending's result:\n%s", got)
	}

	// Stepping a copy of a core must leave the scenario alone.
	cp, err := h.Core(2)
	if err != nil {
		t.Fatal(err)
	}
	before, err := cp.Hash()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cp.Step(node.Event{Kind: node.EventMessage, From: 1, Msg: Ping{Seq: 1}, At: h.Now()}); err != nil {
		t.Fatal(err)
	}
	if c2, _ := h.Core(2); mustHash(t, c2) != before {
		t.Error("stepping the copy from Core changed the harness's node")
	}
	if _, err := h.Core(9); err == nil {
		t.Error("Core of a node that was never started succeeded")
	}
	if len(h.Pending()) != 2 {
		t.Error("stepping a copy changed the pending messages")
	}
}

func mustHash(t *testing.T, c *node.Core) node.Hash {
	t.Helper()
	hash, err := c.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return hash
}

// TestSeedReachesNodes checks that options seed=N, and only it, decides
// the nodes' random streams.
func TestSeedReachesNodes(t *testing.T) {
	draw := func(options string) uint64 {
		h := newHarness(t)
		if options != "" {
			run(t, h, options)
		}
		run(t, h, "start n1")
		c, err := h.Core(1)
		if err != nil {
			t.Fatal(err)
		}
		return c.State().Rand.Uint64()
	}
	if draw("") != draw("options seed=1") {
		t.Error("the default seed is not Config.Seed")
	}
	if draw("options seed=1") == draw("options seed=2") {
		t.Error("seed=2 draws the same numbers as seed=1")
	}
}

// TestMessagesOutsideSpecFailTheStep is nodetest's side of
// node.Registry.CheckMessage: a send or an application call outside
// Spec.Messages fails the step, as it does in every host.
func TestMessagesOutsideSpecFailTheStep(t *testing.T) {
	cfg := pingerConfig()
	full := cfg.Spec
	cfg.Spec = func() node.Spec {
		s := full()
		s.Messages = []node.Message{Ping{}, PingCall{}} // no Pong
		return s
	}
	h, err := nodetest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	run(t, h, "start n1 n2")
	var out strings.Builder
	if err := h.Step(1, node.Event{Kind: node.EventApp, Msg: Pong{Seq: 1}}, &out); !errors.Is(err, node.ErrUnknownMessageType) {
		t.Errorf("application call outside the spec: %v, want node.ErrUnknownMessageType", err)
	}
	run(t, h, "app n1 ping n2")
	// n2 answers the Ping with a Pong, which the spec does not list.
	err = h.Step(2, node.Event{Kind: node.EventMessage, From: 1, Msg: Ping{Seq: 1}}, &out)
	want := `n2: message ping from n1: node: n2 sent to n1: node: unknown message type: "pong" (nodetest_test.Pong) is not in Spec.Messages`
	if !errors.Is(err, node.ErrUnknownMessageType) || err.Error() != want {
		t.Errorf("send outside the spec:\n got %v\nwant %s", err, want)
	}
}

// TestZeroConfigMeansDefault: a Config with only Spec set runs like one
// with DefaultConfig's fields: a deliver-all of fewer deliveries than
// DefaultDeliverAllLimit succeeds, one of more fails.
func TestZeroConfigMeansDefault(t *testing.T) {
	if d := nodetest.DefaultConfig(); d.DeliverAllLimit != nodetest.DefaultDeliverAllLimit || d.Spec != nil || d.Seed != 0 {
		t.Fatalf("DefaultConfig() = %+v", d)
	}
	// Each call queues a Ping and each Ping a Pong: two deliveries a call.
	for _, tc := range []struct {
		calls int
		fail  bool
	}{
		{nodetest.DefaultDeliverAllLimit/2 - 1, false},
		{nodetest.DefaultDeliverAllLimit/2 + 1, true},
	} {
		h, err := nodetest.New(nodetest.Config{Spec: pingerConfig().Spec})
		if err != nil {
			t.Fatal(err)
		}
		run(t, h, "start n1 n2")
		var out strings.Builder
		for range tc.calls {
			if err := h.Step(1, node.Event{Kind: node.EventApp, Msg: PingCall{To: 2}}, &out); err != nil {
				t.Fatal(err)
			}
		}
		rec := &fatalRecorder{TB: t}
		h.Run(rec, &datadriven.TestData{Pos: "line", Cmd: "deliver-all"})
		if rec.failed != tc.fail || (tc.fail && !strings.Contains(rec.msg, fmt.Sprint(nodetest.DefaultDeliverAllLimit))) {
			t.Errorf("%d calls: deliver-all failed=%v (%q), want failed=%v naming the limit", tc.calls, rec.failed, rec.msg, tc.fail)
		}
	}
}

// TestExec: Exec runs a line as Run does and returns a command that cannot
// run as an error instead of failing a test.
func TestExec(t *testing.T) {
	h := newHarness(t)
	if out, err := h.Exec("start n1 n2"); err != nil || out != "n1: set timer tick +10s\nn2: set timer tick +10s\n" {
		t.Fatalf("start: %q, %v", out, err)
	}
	if out, err := h.Exec("app n1 ping n2"); err != nil || out != "n1 -> n2 Ping(1)\nn1: set timer retry +1s\n" {
		t.Errorf("app: %q, %v", out, err)
	}
	if _, err := h.Exec("deliver n3 n1"); err == nil || err.Error() != "nodetest: deliver: nothing pending from n1 to n3" {
		t.Errorf("deliver from an empty channel: %v", err)
	}
	if _, err := h.Exec("frobnicate"); err == nil || err.Error() != "nodetest: frobnicate: unknown command" {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := h.Exec("state x=(1"); err == nil || !strings.HasPrefix(err.Error(), "nodetest: ") {
		t.Errorf("unparsable line: %v", err)
	}
}
