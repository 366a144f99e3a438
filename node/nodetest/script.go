package nodetest

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/node"
)

// builtin is a command every harness understands.
type builtin func(h *Harness, args []string, out io.Writer) error

var builtins = map[string]builtin{
	"options":         (*Harness).cmdOptions,
	"start":           (*Harness).cmdStart,
	"app":             (*Harness).cmdApp,
	"deliver":         (*Harness).cmdDeliver,
	"deliver-all":     (*Harness).cmdDeliverAll,
	"drop":            (*Harness).cmdDrop,
	"refuse":          (*Harness).cmdRefuse,
	"fire":            (*Harness).cmdFire,
	"reset":           (*Harness).cmdReset,
	"transport-error": (*Harness).cmdTransportError,
	"state":           (*Harness).cmdState,
	"pending":         (*Harness).cmdPending,
	"check":           (*Harness).cmdCheck,
}

// Walk runs every script under dir (see datadriven.Walk), each as a subtest
// on a fresh Harness built from newConfig(), so options set by one script
// never leak into the next.
func Walk(t *testing.T, dir string, newConfig func() Config) {
	t.Helper()
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		h, err := New(newConfig())
		if err != nil {
			t.Fatal(err)
		}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			return h.Run(t, d)
		})
	})
}

// Run executes one script command and returns its output ("ok" when it
// prints nothing). A command that cannot run fails t through d.Fatalf, and
// Run then returns "" should t.Fatalf return.
func (h *Harness) Run(t testing.TB, d *datadriven.TestData) string {
	t.Helper()
	out, err := h.exec(d.Cmd, argStrings(d.CmdArgs))
	if err != nil {
		d.Fatalf(t, "%v", err)
		return ""
	}
	return out
}

// Exec runs one script line, such as "deliver n2 n1", and returns its
// output ("ok\n" when it prints nothing) or, when the command cannot run,
// an error prefixed "nodetest: COMMAND:". It is Run without datadriven: a
// scenario written as a list of lines in Go, an Example or a tool drives a
// harness through it. The line is parsed as datadriven parses a script's
// command line.
func (h *Harness) Exec(line string) (string, error) {
	cmd, cmdArgs, err := datadriven.ParseLine(line)
	if err != nil {
		return "", fmt.Errorf("nodetest: %q: %w", line, err)
	}
	return h.exec(cmd, argStrings(cmdArgs))
}

// argStrings renders each argument as datadriven prints it: "key",
// "key=val" or "key=(v1, v2)".
func argStrings(cmdArgs []datadriven.CmdArg) []string {
	args := make([]string, len(cmdArgs))
	for i, a := range cmdArgs {
		args[i] = a.String()
	}
	return args
}

// exec runs the command cmd with its arguments.
func (h *Harness) exec(cmd string, args []string) (string, error) {
	var out strings.Builder
	var err error
	if run, ok := builtins[cmd]; ok {
		err = run(h, args, &out)
	} else if run, ok := h.cfg.Commands[cmd]; ok {
		err = run(h, args, &out)
	} else {
		err = errors.New("unknown command")
	}
	if err != nil {
		return "", fmt.Errorf("nodetest: %s: %w", cmd, err)
	}
	if out.Len() == 0 {
		return "ok\n", nil
	}
	return out.String(), nil
}

// cmdOptions: options [seed=N] [ARG...].
func (h *Harness) cmdOptions(args []string, out io.Writer) error {
	if h.specSet {
		return errors.New("options must come before the first start or check")
	}
	var rest []string
	for _, a := range args {
		key, val, hasVal := strings.Cut(a, "=")
		if key != "seed" {
			rest = append(rest, a)
			continue
		}
		n, err := strconv.ParseUint(val, 10, 64)
		if !hasVal || err != nil {
			return fmt.Errorf("bad seed %q: want seed=N, N a non-negative integer", a)
		}
		h.seed = n
	}
	if h.cfg.Options == nil {
		if len(rest) > 0 {
			return fmt.Errorf("unknown option %q (the service takes none)", rest[0])
		}
		return nil
	}
	line, err := h.cfg.Options(rest)
	if err != nil {
		return err
	}
	if line != "" {
		fmt.Fprintln(out, line)
	}
	return nil
}

// cmdStart: start ID...
func (h *Harness) cmdStart(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: start ID [ID]")
	}
	for _, a := range args {
		id, err := node.ParseID(a)
		if err != nil {
			return err
		}
		if err := h.start(id, out); err != nil {
			return err
		}
	}
	return nil
}

// cmdApp: app ID ARG...
func (h *Harness) cmdApp(args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: app ID ARG [ARG]")
	}
	if h.cfg.App == nil {
		return errors.New("the service has no application calls (Config.App is nil)")
	}
	c, err := h.core(args[0])
	if err != nil {
		return err
	}
	call, err := h.cfg.App(c.ID(), args[1:])
	if err != nil {
		return err
	}
	if call == nil {
		return fmt.Errorf("Config.App returned no call for %q", args[1:])
	}
	return h.step(c, node.Event{Kind: node.EventApp, Msg: call}, out)
}

// cmdDeliver: deliver TO FROM [N].
func (h *Harness) cmdDeliver(args []string, out io.Writer) error {
	to, from, k, err := channelArgs(args, "usage: deliver TO FROM [N]")
	if err != nil {
		return err
	}
	return h.deliver(channel{from: from, to: to}, k, out)
}

// deliver hands the k-th (from 0) message of ch to its receiver, which
// must be started: a message for a node that does not exist stays queued
// rather than vanish behind the script's back.
func (h *Harness) deliver(ch channel, k int, out io.Writer) error {
	c, ok := h.cores[ch.to]
	if !ok {
		if len(h.queues[ch]) == 0 {
			return fmt.Errorf("nothing pending from %v to %v", ch.from, ch.to)
		}
		return fmt.Errorf("%v -> %v %v: node %v not started", ch.from, ch.to, h.queues[ch][0].msg, ch.to)
	}
	msg, err := h.popAt(ch, k)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%v <- %v %v\n", ch.to, ch.from, msg)
	return h.step(c, node.Event{Kind: node.EventMessage, From: ch.from, Msg: msg}, out)
}

// cmdDeliverAll: deliver-all. Taking the first channel in a fixed order
// makes the interleaving the same on every run.
func (h *Harness) cmdDeliverAll(args []string, out io.Writer) error {
	if len(args) > 0 {
		return errors.New("usage: deliver-all")
	}
	for n := 0; ; n++ {
		chs := h.pendingChannels()
		if len(chs) == 0 {
			return nil
		}
		if n >= h.cfg.DeliverAllLimit {
			return fmt.Errorf("not quiescent after %d deliveries", n)
		}
		if err := h.deliver(chs[0], 0, out); err != nil {
			return err
		}
	}
}

// cmdDrop: drop TO FROM [N].
func (h *Harness) cmdDrop(args []string, out io.Writer) error {
	to, from, k, err := channelArgs(args, "usage: drop TO FROM [N]")
	if err != nil {
		return err
	}
	msg, err := h.popAt(channel{from: from, to: to}, k)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "dropped %v -> %v %v\n", from, to, msg)
	return nil
}

// cmdRefuse: refuse TO FROM [N].
func (h *Harness) cmdRefuse(args []string, out io.Writer) error {
	to, from, k, err := channelArgs(args, "usage: refuse TO FROM [N]")
	if err != nil {
		return err
	}
	ch := channel{from: from, to: to}
	q := h.queues[ch]
	if len(q) == 0 {
		return fmt.Errorf("nothing pending from %v to %v", from, to)
	}
	if k >= len(q) {
		return fmt.Errorf("%d messages pending from %v to %v; no number %d", len(q), from, to, k+1)
	}
	c, ok := h.cores[from]
	switch {
	case !q[k].refusable:
		return fmt.Errorf("message %d from %v to %v (%v) was not sent with TrySend", k+1, from, to, q[k].msg)
	case !ok || q[k].gen != h.gens[from]:
		// The contract refuses a send before the sender's next event; a
		// later refusal is a run no transport makes.
		return fmt.Errorf("message %d from %v to %v (%v) was sent before %v's latest event: too late to refuse", k+1, from, to, q[k].msg, from)
	}
	msg := h.removeAt(ch, k)
	fmt.Fprintf(out, "refused %v ?> %v %v\n", from, to, msg)
	return h.step(c, node.Event{Kind: node.EventSendRefused, Peer: to, Msg: msg}, out)
}

// cmdFire: fire ID TIMER.
func (h *Harness) cmdFire(args []string, out io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: fire ID TIMER")
	}
	c, err := h.core(args[0])
	if err != nil {
		return err
	}
	at, ok := c.State().TimerAt(args[1])
	if !ok {
		fmt.Fprintf(out, "%v: timer %s not scheduled\n", c.ID(), args[1])
		return nil
	}
	if at.After(h.now) {
		h.now = at
	}
	return h.step(c, node.Event{Kind: node.EventTimer, Timer: args[1]}, out)
}

// cmdReset: reset ID [silent].
func (h *Harness) cmdReset(args []string, out io.Writer) error {
	if len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "silent") {
		return errors.New("usage: reset ID [silent]")
	}
	c, err := h.core(args[0])
	if err != nil {
		return err
	}
	if err := h.step(c, node.Event{Kind: node.EventReset}, out); err != nil {
		return err
	}
	if len(args) == 2 {
		return nil
	}
	for _, p := range h.breakConnections(c.ID()) {
		pc, ok := h.cores[p]
		if !ok {
			continue // nobody there to see the RST
		}
		if err := h.step(pc, node.Event{Kind: node.EventTransportError, Peer: c.ID()}, out); err != nil {
			return err
		}
	}
	return nil
}

// cmdTransportError: transport-error ID PEER.
func (h *Harness) cmdTransportError(args []string, out io.Writer) error {
	if len(args) != 2 {
		return errors.New("usage: transport-error ID PEER")
	}
	c, err := h.core(args[0])
	if err != nil {
		return err
	}
	peer, err := node.ParseID(args[1])
	if err != nil {
		return err
	}
	return h.step(c, node.Event{Kind: node.EventTransportError, Peer: peer}, out)
}

// cmdState: state [ID...].
func (h *Harness) cmdState(args []string, out io.Writer) error {
	cores := make([]*node.Core, 0, len(h.ids))
	if len(args) == 0 {
		for _, id := range h.ids {
			cores = append(cores, h.cores[id])
		}
	}
	for _, a := range args {
		c, err := h.core(a)
		if err != nil {
			return err
		}
		cores = append(cores, c)
	}
	for _, c := range cores {
		var timers []string
		for _, tm := range c.State().Timers {
			timers = append(timers, tm.Name)
		}
		fmt.Fprintf(out, "%v: %s timers=[%s]\n", c.ID(), h.describe(c.Service()), strings.Join(timers, " "))
	}
	return nil
}

func (h *Harness) describe(svc node.Service) string {
	if h.cfg.Describe != nil {
		return h.cfg.Describe(svc)
	}
	return fmt.Sprint(svc)
}

// cmdPending: pending.
func (h *Harness) cmdPending(args []string, out io.Writer) error {
	if len(args) > 0 {
		return errors.New("usage: pending")
	}
	for _, e := range h.Pending() {
		fmt.Fprintf(out, "%v %s %v %v\n", e.From, arrow(e), e.To, e.Msg)
	}
	return nil
}

// cmdCheck: check [safety|liveness].
func (h *Harness) cmdCheck(args []string, out io.Writer) error {
	kind := node.Safety
	switch {
	case len(args) == 0 || (len(args) == 1 && args[0] == "safety"):
	case len(args) == 1 && args[0] == "liveness":
		kind = node.Liveness
	default:
		return errors.New("usage: check [safety|liveness]")
	}
	spec, err := h.ensureSpec()
	if err != nil {
		return err
	}
	for _, p := range spec.PropertiesOf(kind) {
		if err := p.Check(h); err != nil {
			fmt.Fprintf(out, "%s: %v\n", p.Name, err)
		} else {
			fmt.Fprintf(out, "%s: ok\n", p.Name)
		}
	}
	return nil
}

// channelArgs parses "TO FROM [N]": a channel and the position (from 1,
// as pending lists the channel) of the message to take, returned from 0;
// the head when N is absent.
func channelArgs(args []string, usage string) (to, from node.ID, k int, err error) {
	if len(args) != 2 && len(args) != 3 {
		return node.None, node.None, 0, errors.New(usage)
	}
	if to, from, err = twoIDs(args[:2], usage); err != nil {
		return node.None, node.None, 0, err
	}
	if len(args) == 3 {
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 1 {
			return node.None, node.None, 0, fmt.Errorf("bad position %q: want N >= 1 (%s)", args[2], usage)
		}
		k = n - 1
	}
	return to, from, k, nil
}

// twoIDs parses a command's two node-ID arguments.
func twoIDs(args []string, usage string) (node.ID, node.ID, error) {
	if len(args) != 2 {
		return node.None, node.None, errors.New(usage)
	}
	a, err := node.ParseID(args[0])
	if err != nil {
		return node.None, node.None, err
	}
	b, err := node.ParseID(args[1])
	return a, b, err
}
