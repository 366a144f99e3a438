package nodetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/statediff"
)

// outcome is what one step of a node did, kept for comparison: its
// effects (copied out of the core's buffers) and the state it reached.
type outcome struct {
	ignored bool
	sends   []node.Envelope
	bodies  [][]byte
	timers  []node.TimerOp
	state   *node.State
	cp      []byte
}

// twins are the outcomes of the event on two cores restored from the
// node's checkpoint and one on its Copy, stepped before the node itself.
type twins struct {
	restored [2]outcome
	copied   outcome
	hasCopy  bool
	// again steps the event on one more restored twin: a mismatch is
	// judged by stepping it again (a map's order agrees by chance).
	again func() (outcome, error)
}

// retries is how many more restored twins a mismatch steps before it is
// blamed on anything but non-determinism.
const retries = 8

// stepTwins steps ev on two cores restored from core's checkpoint (two
// fresh cores of the same seed for an init event) and on core.Copy(),
// before core steps it: a handler whose outcome is not a function of the
// encoded state and the event — it reads the wall clock, iterates a map,
// counts in a global variable, keeps state in an unexported field —
// gives the twins, or the twins and the node, different outcomes.
func (c *conformance) stepTwins(core *node.Core, ev node.Event) (twins, error) {
	var tw twins
	from, err := c.restoredTwin(core, ev)
	if err != nil {
		return tw, err
	}
	tw.again = func() (outcome, error) {
		twin, err := c.restoredTwin(from, ev)
		if err != nil {
			return outcome{}, err
		}
		o, err := c.stepOutcome(twin, ev)
		if err != nil {
			return outcome{}, fmt.Errorf("%v: stepping a copy restored from its checkpoint with %v: %w", core.ID(), ev, err)
		}
		return o, nil
	}
	for k := range tw.restored {
		if tw.restored[k], err = tw.again(); err != nil {
			return tw, err
		}
	}
	if !core.Started() {
		return tw, nil
	}
	cp, err := core.Copy()
	if err != nil {
		return tw, err
	}
	if tw.copied, err = c.stepOutcome(cp, ev); err != nil {
		return tw, fmt.Errorf("%v: stepping a copy with %v: %w", core.ID(), ev, err)
	}
	tw.hasCopy = true
	return tw, nil
}

// restoredTwin is a core in core's state rebuilt from its checkpoint, or
// a fresh core of the same node for an init event. core is only read.
func (c *conformance) restoredTwin(core *node.Core, ev node.Event) (*node.Core, error) {
	twin, err := node.NewCore(node.CoreConfig{ID: core.ID(), Factory: c.spec.New, Seed: c.seed})
	if err != nil {
		return nil, err
	}
	if ev.Kind == node.EventInit && !core.Started() {
		return twin, nil
	}
	b, err := core.Checkpoint()
	if err != nil {
		return nil, err
	}
	if err := twin.Restore(b); err != nil {
		return nil, err
	}
	// The core's clock is the last event's time, which the checkpoint
	// does not hold; every event of the run carries its own.
	return twin, nil
}

// stepOutcome steps core with ev and keeps what it did.
func (c *conformance) stepOutcome(core *node.Core, ev node.Event) (outcome, error) {
	fx, err := core.Step(ev)
	if err != nil {
		return outcome{}, err
	}
	return c.outcomeOf(core, fx)
}

// outcomeOf copies fx and core's state into an outcome.
func (c *conformance) outcomeOf(core *node.Core, fx node.Effects) (outcome, error) {
	o := outcome{ignored: fx.Ignored, sends: append([]node.Envelope(nil), fx.Sends...), timers: append([]node.TimerOp(nil), fx.Timers...), state: core.State()}
	for _, e := range fx.Sends {
		b, err := node.AppendCanonical(nil, e.Msg)
		if err != nil {
			return outcome{}, fmt.Errorf("encoding a sent %T: %w", e.Msg, err)
		}
		o.bodies = append(o.bodies, b)
	}
	cp, err := core.State().AppendCheckpoint(nil)
	if err != nil {
		return outcome{}, err
	}
	o.cp = cp
	return o, nil
}

// checkTwins compares the node's own outcome of ev (fx, its state now)
// with its twins': two restored twins that differ make the handler not
// deterministic; a node that differs from its restored twins keeps state
// outside its encoding; one that differs from its Copy has a Clone that
// misses something.
func (c *conformance) checkTwins(core *node.Core, ev node.Event, fx node.Effects, tw twins) error {
	own, err := c.outcomeOf(core, fx)
	if err != nil {
		return err
	}
	_, ownDiffers := differ(own, tw.restored[0])
	copyDiffers := false
	if tw.hasCopy {
		_, copyDiffers = differ(own, tw.copied)
	}
	d, ok := differ(tw.restored[0], tw.restored[1])
	for k := 0; !ok && (ownDiffers || copyDiffers) && k < retries; k++ {
		o, err := tw.again()
		if err != nil {
			return err
		}
		d, ok = differ(tw.restored[0], o)
	}
	if !ok && permuted(own, tw.restored[0]) {
		// Copies decoded alike lay a small map out alike, so their
		// iterations agree more often than not: the same sends in
		// another order are a map's order, not hidden state.
		d, ok = "the same messages sent in another order ("+orderOf(own)+" vs "+orderOf(tw.restored[0])+"): the handler iterates a map", true
	}
	if !ok && tw.hasCopy && permuted(own, tw.copied) {
		// The same on the Copy: a Clone builds its maps afresh, and the
		// same sends in another order are the map's order, not a Clone
		// that copies wrongly.
		d, ok = "the same messages sent in another order ("+orderOf(own)+" vs "+orderOf(tw.copied)+"): the handler iterates a map", true
	}
	if ok {
		return fmt.Errorf("%v: the service is not deterministic: %v, stepped twice from one state, %s "+
			"(a handler may read only its state, the event and Env: no wall clock, no map iteration order, no global variable, no goroutine)",
			core.ID(), ev, d)
	}
	if d, ok := differ(own, tw.restored[0]); ok {
		return fmt.Errorf("%v: %v on the node and on a copy restored from its checkpoint: %s "+
			"(the handler reads state the checkpoint does not hold: an unexported field, or one tagged `msgpack:\"-\"`, that changes)",
			core.ID(), ev, d)
	}
	if tw.hasCopy {
		if d, ok := differ(own, tw.copied); ok {
			return fmt.Errorf("%v: %v on the node and on its Clone: %s (Clone copies the state wrongly)", core.ID(), ev, d)
		}
	}
	return nil
}

// differ describes the first way two outcomes of one event differ: the
// effects first (a send, in order, then the timers), then the state.
func differ(a, b outcome) (string, bool) {
	if a.ignored != b.ignored {
		return fmt.Sprintf("the event was ignored on one side only (%v vs %v)", a.ignored, b.ignored), true
	}
	for i := range max(len(a.sends), len(b.sends)) {
		if i >= len(a.sends) || i >= len(b.sends) {
			return fmt.Sprintf("sent %d vs %d messages (the first extra: %v)", len(a.sends), len(b.sends), extra(a.sends, b.sends, i)), true
		}
		x, y := a.sends[i], b.sends[i]
		if x.To != y.To || x.Datagram != y.Datagram || x.Refusable != y.Refusable || x.Msg.MessageType() != y.Msg.MessageType() {
			return fmt.Sprintf("send %d: %v vs %v", i+1, x, y), true
		}
		if !bytes.Equal(a.bodies[i], b.bodies[i]) {
			return fmt.Sprintf("send %d (%s to %v): %s", i+1, x.Msg.MessageType(), x.To, fieldDifference(x.Msg, y.Msg, a.bodies[i], b.bodies[i])), true
		}
	}
	if len(a.timers) != len(b.timers) {
		return fmt.Sprintf("%d vs %d timer changes (%v vs %v)", len(a.timers), len(b.timers), a.timers, b.timers), true
	}
	for i := range a.timers {
		if a.timers[i] != b.timers[i] && !(a.timers[i].Name == b.timers[i].Name && a.timers[i].At.Equal(b.timers[i].At) && a.timers[i].Cancel == b.timers[i].Cancel) {
			return fmt.Sprintf("timer change %d: %+v vs %+v", i+1, a.timers[i], b.timers[i]), true
		}
	}
	if !bytes.Equal(a.cp, b.cp) {
		return "the states reached differ: " + stateDifference(a.state, b.state), true
	}
	return "", false
}

// extra renders the i-th send of the longer list.
func extra(a, b []node.Envelope, i int) node.Envelope {
	if i < len(a) {
		return a[i]
	}
	return b[i]
}

// fieldDifference names the first field where two values (of the same
// type) differ, decoded; from their encodings when their Go values show
// none.
func fieldDifference(x, y any, bx, by []byte) string {
	if d, ok := statediff.First(x, y); ok {
		return d.String()
	}
	if d, ok := statediff.Encoded(bx, by); ok {
		return d.String()
	}
	return fmt.Sprintf("the encodings differ:\n%x\n%x", bx, by)
}

// stateDifference names the first difference between two node states:
// a service field, else a timer, else the random source.
func stateDifference(a, b *node.State) string {
	ba, errA := node.AppendCanonical(nil, a.Service)
	bb, errB := node.AppendCanonical(nil, b.Service)
	if errA != nil || errB != nil || !bytes.Equal(ba, bb) {
		return fieldDifference(a.Service, b.Service, ba, bb)
	}
	if len(a.Timers) != len(b.Timers) {
		return fmt.Sprintf("timers %v vs %v", timerNames(a.Timers), timerNames(b.Timers))
	}
	for i := range a.Timers {
		if a.Timers[i].Name != b.Timers[i].Name || !a.Timers[i].At.Equal(b.Timers[i].At) {
			return fmt.Sprintf("timer %d: %s at %v vs %s at %v", i+1, a.Timers[i].Name, a.Timers[i].At, b.Timers[i].Name, b.Timers[i].At)
		}
	}
	return "the random sources differ (a handler drew a different number of values from Env.Rand)"
}

func timerNames(ts []node.Timer) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// permuted reports whether two outcomes reached the same state and sent
// the same messages, in another order.
func permuted(a, b outcome) bool {
	if len(a.sends) != len(b.sends) || !bytes.Equal(a.cp, b.cp) {
		return false
	}
	ka, kb := sendKeys(a), sendKeys(b)
	if slices.Equal(ka, kb) {
		return false
	}
	slices.Sort(ka)
	slices.Sort(kb)
	return slices.Equal(ka, kb)
}

// sendKeys renders each send of o as a comparable key.
func sendKeys(o outcome) []string {
	out := make([]string, len(o.sends))
	for i, e := range o.sends {
		out[i] = fmt.Sprintf("%v|%v|%v|%s|%x", e.To, e.Datagram, e.Refusable, e.Msg.MessageType(), o.bodies[i])
	}
	return out
}

// orderOf lists o's sends' receivers in order.
func orderOf(o outcome) string {
	to := make([]string, len(o.sends))
	for i, e := range o.sends {
		to[i] = e.To.String()
	}
	return strings.Join(to, " ")
}
