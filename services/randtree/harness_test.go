package randtree

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/node"
)

// harness drives a handful of RandTree cores by hand, the way etcd raft's
// interaction tests drive raft nodes: each test-script command is one event
// (or a fault), and its output is what the nodes did in response. Channels
// are per directed pair and FIFO, like the TCP connections Mace uses.
//
// Fault model: a silent reset (the RST is lost) leaves every channel alone,
// so messages already on their way reach the new incarnation — MaceMC's
// liveness bug needs exactly that. A reset with RST breaks every connection
// the node had: the messages queued on them both ways are lost and each
// peer the node ever exchanged a message with gets a transport error.
type harness struct {
	opts    Options
	seed    uint64
	spec    node.Spec
	cores   map[node.ID]*node.Core
	ids     []node.ID // started nodes, ascending
	queues  map[channel][]node.Message
	contact map[channel]bool // pairs with an open connection, both orders
	now     time.Time
}

// channel is a directed pair of nodes.
type channel struct{ from, to node.ID }

func newHarness() *harness {
	return &harness{
		opts:    DefaultOptions(),
		queues:  map[channel][]node.Message{},
		contact: map[channel]bool{},
		now:     time.Unix(1_000_000, 0).UTC(),
	}
}

// View implementation: every started node, as the emulator's global state
// would show it.

func (h *harness) Nodes() []node.ID { return h.ids }

func (h *harness) Service(id node.ID) node.Service {
	if c, ok := h.cores[id]; ok {
		return c.Service()
	}
	return nil
}

func (h *harness) TimerScheduled(id node.ID, name string) bool {
	c, ok := h.cores[id]
	if !ok {
		return false
	}
	_, ok = c.State().TimerAt(name)
	return ok
}

var _ node.View = (*harness)(nil)

// run executes one script command and returns its output.
func (h *harness) run(t *testing.T, d *datadriven.TestData) string {
	t.Helper()
	args := make([]string, len(d.CmdArgs))
	for i, a := range d.CmdArgs {
		args[i] = a.String()
	}
	var out strings.Builder
	var err error
	switch d.Cmd {
	case "options":
		err = h.cmdOptions(args, &out)
	case "start":
		err = h.cmdStart(args, &out)
	case "app":
		err = h.cmdApp(args, &out)
	case "deliver":
		err = h.cmdDeliver(args, &out)
	case "deliver-all":
		err = h.cmdDeliverAll(&out)
	case "drop":
		err = h.cmdDrop(args, &out)
	case "fire":
		err = h.cmdFire(args, &out)
	case "reset":
		err = h.cmdReset(args, &out)
	case "transport-error":
		err = h.cmdTransportError(args, &out)
	case "state":
		err = h.cmdState(args, &out)
	case "pending":
		h.cmdPending(&out)
	case "check":
		err = h.cmdCheck(args, &out)
	default:
		err = fmt.Errorf("unknown command %q", d.Cmd)
	}
	if err != nil {
		d.Fatalf(t, "%s: %v", d.Cmd, err)
	}
	if out.Len() == 0 {
		return "ok\n"
	}
	return out.String()
}

func (h *harness) core(s string) (*node.Core, error) {
	id, err := node.ParseID(s)
	if err != nil {
		return nil, err
	}
	c, ok := h.cores[id]
	if !ok {
		return nil, fmt.Errorf("node %v not started", id)
	}
	return c, nil
}

// cmdOptions: options [fix-NAME ...] [max-children=N] [seed=N]; before start.
func (h *harness) cmdOptions(args []string, out *strings.Builder) error {
	if h.cores != nil {
		return fmt.Errorf("options must come before start")
	}
	for _, a := range args {
		key, val, _ := strings.Cut(a, "=")
		switch key {
		case "max-children":
			n, err := strconv.Atoi(val)
			if err != nil {
				return err
			}
			h.opts.MaxChildren = n
		case "seed":
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil {
				return err
			}
			h.seed = n
		default:
			if err := h.opts.EnableFix(a); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(out, h.opts.withDefaults())
	return nil
}

// cmdStart: start ID... — create and initialise the nodes.
func (h *harness) cmdStart(args []string, out *strings.Builder) error {
	if h.cores == nil {
		h.spec = NewSpec(h.opts)
		h.cores = map[node.ID]*node.Core{}
	}
	for _, a := range args {
		id, err := node.ParseID(a)
		if err != nil {
			return err
		}
		if _, ok := h.cores[id]; ok {
			return fmt.Errorf("%v already started", id)
		}
		c, err := node.NewCore(node.CoreConfig{ID: id, Factory: h.spec.New, Seed: h.seed})
		if err != nil {
			return err
		}
		h.cores[id] = c
		h.ids = append(h.ids, id)
		slices.Sort(h.ids)
		if err := h.step(c, node.Event{Kind: node.EventInit}, out); err != nil {
			return err
		}
	}
	return nil
}

// cmdApp: app ID join TARGET... — the JoinOverlay application call.
func (h *harness) cmdApp(args []string, out *strings.Builder) error {
	if len(args) < 2 || args[1] != "join" {
		return fmt.Errorf("usage: app ID join TARGET...")
	}
	c, err := h.core(args[0])
	if err != nil {
		return err
	}
	var targets []node.ID
	for _, a := range args[2:] {
		id, err := node.ParseID(a)
		if err != nil {
			return err
		}
		targets = append(targets, id)
	}
	return h.step(c, node.Event{Kind: node.EventApp, Msg: JoinOverlay{Targets: targets}}, out)
}

// cmdDeliver: deliver TO FROM — deliver the head of the channel FROM→TO.
func (h *harness) cmdDeliver(args []string, out *strings.Builder) error {
	to, from, err := twoIDs(args, "usage: deliver TO FROM")
	if err != nil {
		return err
	}
	return h.deliver(channel{from: from, to: to}, out)
}

func (h *harness) deliver(ch channel, out *strings.Builder) error {
	q := h.queues[ch]
	if len(q) == 0 {
		return fmt.Errorf("nothing pending from %v to %v", ch.from, ch.to)
	}
	msg := q[0]
	if len(q) == 1 {
		delete(h.queues, ch)
	} else {
		h.queues[ch] = q[1:]
	}
	c, ok := h.cores[ch.to]
	if !ok {
		return fmt.Errorf("node %v not started", ch.to)
	}
	fmt.Fprintf(out, "%v <- %v %v\n", ch.to, ch.from, msg)
	return h.step(c, node.Event{Kind: node.EventMessage, From: ch.from, Msg: msg}, out)
}

// cmdDeliverAll delivers messages until no channel holds any, always taking
// the head of the first non-empty channel in (to, from) order, so the
// interleaving is the same on every run.
func (h *harness) cmdDeliverAll(out *strings.Builder) error {
	for n := 0; ; n++ {
		chs := h.pendingChannels()
		if len(chs) == 0 {
			return nil
		}
		if n >= 1000 {
			return fmt.Errorf("not quiescent after %d deliveries", n)
		}
		if err := h.deliver(chs[0], out); err != nil {
			return err
		}
	}
}

// pendingChannels returns the non-empty channels in (to, from) order.
func (h *harness) pendingChannels() []channel {
	var chs []channel
	for ch, q := range h.queues {
		if len(q) > 0 {
			chs = append(chs, ch)
		}
	}
	slices.SortFunc(chs, func(a, b channel) int {
		if a.to != b.to {
			return cmp.Compare(a.to, b.to)
		}
		return cmp.Compare(a.from, b.from)
	})
	return chs
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

// cmdDrop: drop TO FROM — lose the head of the channel FROM→TO.
func (h *harness) cmdDrop(args []string, out *strings.Builder) error {
	to, from, err := twoIDs(args, "usage: drop TO FROM")
	if err != nil {
		return err
	}
	ch := channel{from: from, to: to}
	q := h.queues[ch]
	if len(q) == 0 {
		return fmt.Errorf("nothing pending from %v to %v", from, to)
	}
	fmt.Fprintf(out, "dropped %v -> %v %v\n", from, to, q[0])
	h.queues[ch] = q[1:]
	return nil
}

// cmdFire: fire ID TIMER — the timer expires now, whatever its deadline.
func (h *harness) cmdFire(args []string, out *strings.Builder) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: fire ID TIMER")
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
func (h *harness) cmdReset(args []string, out *strings.Builder) error {
	if len(args) < 1 || len(args) > 2 || (len(args) == 2 && args[1] != "silent") {
		return fmt.Errorf("usage: reset ID [silent]")
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
	id := c.ID()
	for _, p := range h.ids {
		if p == id || !h.contact[channel{id, p}] {
			continue
		}
		delete(h.contact, channel{id, p})
		delete(h.contact, channel{p, id})
		delete(h.queues, channel{id, p})
		delete(h.queues, channel{p, id})
		if err := h.step(h.cores[p], node.Event{Kind: node.EventTransportError, Peer: id}, out); err != nil {
			return err
		}
	}
	return nil
}

// cmdTransportError: transport-error ID PEER — only the event at ID; the
// channels are left alone.
func (h *harness) cmdTransportError(args []string, out *strings.Builder) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: transport-error ID PEER")
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

// cmdState: state [ID...] — every node when no ID is given.
func (h *harness) cmdState(args []string, out *strings.Builder) error {
	ids := h.ids
	if len(args) > 0 {
		ids = nil
		for _, a := range args {
			c, err := h.core(a)
			if err != nil {
				return err
			}
			ids = append(ids, c.ID())
		}
	}
	for _, id := range ids {
		c := h.cores[id]
		var timers []string
		for _, tm := range c.State().Timers {
			timers = append(timers, tm.Name)
		}
		fmt.Fprintf(out, "%v: %v timers=[%s]\n", id, c.Service(), strings.Join(timers, " "))
	}
	return nil
}

func (h *harness) cmdPending(out *strings.Builder) {
	for _, ch := range h.pendingChannels() {
		for _, m := range h.queues[ch] {
			fmt.Fprintf(out, "%v -> %v %v\n", ch.from, ch.to, m)
		}
	}
}

// cmdCheck: check [safety|liveness] — one line per property.
func (h *harness) cmdCheck(args []string, out *strings.Builder) error {
	props := SafetyProperties()
	if len(args) == 1 && args[0] == "liveness" {
		props = LivenessProperties()
	} else if len(args) > 0 && !(len(args) == 1 && args[0] == "safety") {
		return fmt.Errorf("usage: check [safety|liveness]")
	}
	for _, p := range props {
		if err := p.Check(h); err != nil {
			fmt.Fprintf(out, "%s: %v\n", p.Name, err)
		} else {
			fmt.Fprintf(out, "%s: ok\n", p.Name)
		}
	}
	return nil
}

// step runs ev on c, queues the messages it sent and prints its effects.
func (h *harness) step(c *node.Core, ev node.Event, out *strings.Builder) error {
	h.now = h.now.Add(time.Millisecond)
	ev.At = h.now
	switch ev.Kind {
	case node.EventReset:
		fmt.Fprintf(out, "%v: reset\n", c.ID())
	case node.EventTransportError:
		fmt.Fprintf(out, "%v: transport error from %v\n", c.ID(), ev.Peer)
	}
	fx, err := c.Step(ev)
	if err != nil {
		return err
	}
	if fx.Ignored {
		fmt.Fprintf(out, "%v: %v ignored\n", c.ID(), ev)
	}
	for _, e := range fx.Sends {
		ch := channel{from: e.From, to: e.To}
		h.queues[ch] = append(h.queues[ch], e.Msg)
		h.contact[ch] = true
		h.contact[channel{from: e.To, to: e.From}] = true
		fmt.Fprintf(out, "%v -> %v %v\n", e.From, e.To, e.Msg)
	}
	for _, op := range fx.Timers {
		if op.Cancel {
			fmt.Fprintf(out, "%v: cancel timer %s\n", c.ID(), op.Name)
		} else {
			fmt.Fprintf(out, "%v: set timer %s +%v\n", c.ID(), op.Name, op.At.Sub(h.now))
		}
	}
	return nil
}
