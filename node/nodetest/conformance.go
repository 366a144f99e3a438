package nodetest

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// ConformanceOption configures Conformance.
type ConformanceOption func(*conformance)

// ConformanceNodes sets how many nodes the random run drives (default 3).
func ConformanceNodes(n int) ConformanceOption {
	return func(c *conformance) { c.nodes = n }
}

// ConformanceSteps sets how many events the random run takes (default 300).
func ConformanceSteps(n int) ConformanceOption {
	return func(c *conformance) { c.steps = n }
}

// ConformanceSeed seeds the random run (default 1); a seed gives one run.
func ConformanceSeed(seed uint64) ConformanceOption {
	return func(c *conformance) { c.seed = seed }
}

// ConformanceCalls supplies the application calls the run may make at a
// node: calls(self, nodes) returns candidates, of which the run picks one
// at random. Without it the run makes none, and reaches only the states
// timers and messages lead to from Init.
func ConformanceCalls(calls func(self node.ID, nodes []node.ID) []node.Message) ConformanceOption {
	return func(c *conformance) { c.calls = calls }
}

// Conformance checks that spec's service keeps the contracts every
// runtime relies on, on the states a seeded random run of its handlers
// reaches (deliveries in FIFO order per channel, timers, application
// calls, resets with their transport errors):
//
//   - the spec validates, and every message and call used in the run —
//     and every client operation and result it marks (node.Invoke,
//     node.Respond) — is registered (Registry.CheckMessage) and survives an encode, decode,
//     encode round trip byte for byte, as does every registered prototype;
//   - clone independence: a Cloner's copy encodes like the original and
//     shares no mutable memory with it (no slice, map or pointer in the
//     exported state), and a copy stepped alone leaves the original's
//     checkpoint unchanged;
//   - the checkpoint round trip restores the same hash and canonical bytes;
//   - hash coverage: changing any exported state field (one not tagged
//     `msgpack:"-"`) changes the hash, unless the service is a
//     node.Fingerprinter, which says itself what it hashes.
//
// It reports the first violation through t.Fatal, naming the step and the
// field. It is deterministic for a given spec and options, starts no
// goroutine and reads no clock.
func Conformance(t testing.TB, spec node.Spec, opts ...ConformanceOption) {
	t.Helper()
	if err := checkConformance(spec, opts...); err != nil {
		t.Fatal(err)
	}
}

type conformance struct {
	spec  node.Spec
	reg   *node.Registry
	nodes int
	steps int
	seed  uint64
	calls func(self node.ID, nodes []node.ID) []node.Message

	ids    []node.ID
	cores  map[node.ID]*node.Core
	queues map[[2]node.ID][]node.Message
	rng    node.Rand
	now    time.Time
}

// checkConformance is Conformance returning its finding as an error.
func checkConformance(spec node.Spec, opts ...ConformanceOption) error {
	c := &conformance{spec: spec, nodes: 3, steps: 300, seed: 1}
	for _, o := range opts {
		o(c)
	}
	if c.nodes < 1 || c.steps < 0 {
		return fmt.Errorf("nodetest: conformance: %d nodes and %d steps: want at least one node", c.nodes, c.steps)
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("nodetest: conformance: %w", err)
	}
	reg, err := spec.Registry()
	if err != nil {
		return fmt.Errorf("nodetest: conformance: %w", err)
	}
	c.reg = reg
	for _, m := range spec.Messages {
		if err := c.checkMessage(m); err != nil {
			return fmt.Errorf("nodetest: conformance: prototype: %w", err)
		}
	}
	if err := c.run(); err != nil {
		return fmt.Errorf("nodetest: conformance of %q (seed %d): %w", spec.Name, c.seed, err)
	}
	return nil
}

// checkMessage holds m to the registry and to a byte-exact round trip.
func (c *conformance) checkMessage(m node.Message) error {
	b, err := c.reg.EncodeMessage(m)
	if err != nil {
		return err
	}
	back, err := c.reg.DecodeMessage(m.MessageType(), b)
	if err != nil {
		return fmt.Errorf("%T: %w", m, err)
	}
	b2, err := c.reg.EncodeMessage(back)
	if err != nil {
		return fmt.Errorf("%T: re-encoding: %w", m, err)
	}
	if !bytes.Equal(b, b2) {
		return fmt.Errorf("%T: encoding changed across a round trip: %s", m, fieldDifference(m, back, b, b2))
	}
	return nil
}

func (c *conformance) run() error {
	c.cores = make(map[node.ID]*node.Core, c.nodes)
	c.queues = make(map[[2]node.ID][]node.Message)
	c.rng = node.NewRand(c.seed, 0)
	c.now = time.Unix(1_000_000, 0).UTC()
	for i := range c.nodes {
		id := node.ID(i + 1)
		core, err := node.NewCore(node.CoreConfig{ID: id, Factory: c.spec.New, Seed: c.seed})
		if err != nil {
			return err
		}
		c.ids = append(c.ids, id)
		c.cores[id] = core
		if err := c.step(core, node.Event{Kind: node.EventInit}); err != nil {
			return err
		}
	}
	for i := range c.steps {
		if err := c.randomStep(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

// randomStep takes one event: mostly deliveries, then timers, calls and
// the odd reset.
func (c *conformance) randomStep() error {
	id := c.ids[c.rng.IntN(len(c.ids))]
	core := c.cores[id]
	switch k := c.rng.IntN(20); {
	case k < 12:
		if ch, ok := c.pickChannel(); ok {
			msg := c.queues[ch][0]
			c.queues[ch] = c.queues[ch][1:]
			return c.step(c.cores[ch[1]], node.Event{Kind: node.EventMessage, From: ch[0], Msg: msg})
		}
		fallthrough
	case k < 16:
		if ts := core.State().Timers; len(ts) > 0 {
			return c.step(core, node.Event{Kind: node.EventTimer, Timer: ts[c.rng.IntN(len(ts))].Name})
		}
		fallthrough
	case k < 19:
		if c.calls == nil {
			return nil
		}
		calls := c.calls(id, append([]node.ID(nil), c.ids...))
		if len(calls) == 0 {
			return nil
		}
		return c.step(core, node.Event{Kind: node.EventApp, Msg: calls[c.rng.IntN(len(calls))]})
	default:
		return c.reset(id)
	}
}

// pickChannel picks a non-empty channel, scanning in node order so the
// choice does not depend on map iteration.
func (c *conformance) pickChannel() ([2]node.ID, bool) {
	var full [][2]node.ID
	for _, from := range c.ids {
		for _, to := range c.ids {
			if ch := [2]node.ID{from, to}; len(c.queues[ch]) > 0 {
				full = append(full, ch)
			}
		}
	}
	if len(full) == 0 {
		return [2]node.ID{}, false
	}
	return full[c.rng.IntN(len(full))], true
}

// reset restarts id, drops its channels and tells its peers.
func (c *conformance) reset(id node.ID) error {
	if err := c.step(c.cores[id], node.Event{Kind: node.EventReset}); err != nil {
		return err
	}
	for _, p := range c.ids {
		if p == id {
			continue
		}
		delete(c.queues, [2]node.ID{id, p})
		delete(c.queues, [2]node.ID{p, id})
		if err := c.step(c.cores[p], node.Event{Kind: node.EventTransportError, Peer: id}); err != nil {
			return err
		}
	}
	return nil
}

// step checks that a copy stepped alone leaves core alone, steps core,
// checks what it sent and then the state it reached.
func (c *conformance) step(core *node.Core, ev node.Event) error {
	c.now = c.now.Add(time.Second)
	ev.At = c.now
	if ev.Kind == node.EventApp {
		if err := c.reg.CheckMessage(ev.Msg); err != nil {
			return fmt.Errorf("%v: application call: %w", core.ID(), err)
		}
	}
	if core.Started() && ev.Kind != node.EventInit {
		if err := c.checkCopyStep(core, ev); err != nil {
			return err
		}
	}
	tw, err := c.stepTwins(core, ev)
	if err != nil {
		return err
	}
	fx, err := core.Step(ev)
	if err != nil {
		return fmt.Errorf("%v: %v: %w", core.ID(), ev, err)
	}
	if err := c.reg.CheckSends(fx.Sends); err != nil {
		return fmt.Errorf("%v: %v: %w", core.ID(), ev, err)
	}
	for _, mk := range fx.History {
		for _, m := range []node.Message{mk.Op, mk.Result} {
			if m == nil {
				continue
			}
			if err := c.checkMessage(m); err != nil {
				return fmt.Errorf("%v: %v mark: %w", core.ID(), mk.Kind, err)
			}
		}
	}
	for _, e := range fx.Sends {
		if err := c.checkMessage(e.Msg); err != nil {
			return fmt.Errorf("%v: sent: %w", core.ID(), err)
		}
		if _, known := c.cores[e.To]; known && e.To != e.From {
			ch := [2]node.ID{e.From, e.To}
			c.queues[ch] = append(c.queues[ch], e.Msg)
		}
	}
	if err := c.checkState(core.State()); err != nil {
		return fmt.Errorf("%v after %v: %w", core.ID(), ev, err)
	}
	return c.checkTwins(core, ev, fx, tw)
}

// checkCopyStep steps a copy of core with ev and requires core's
// checkpoint to be what it was.
func (c *conformance) checkCopyStep(core *node.Core, ev node.Event) error {
	before, err := core.Checkpoint()
	if err != nil {
		return err
	}
	cp, err := core.Copy()
	if err != nil {
		return err
	}
	if _, err := cp.Step(ev); err != nil {
		return fmt.Errorf("%v: stepping a copy: %w", core.ID(), err)
	}
	after, err := core.Checkpoint()
	if err != nil {
		return err
	}
	if !bytes.Equal(before, after) {
		return fmt.Errorf("%v: stepping a copy with %v changed the original: the clone shares state", core.ID(), ev)
	}
	return nil
}

// checkState runs the state checks on st.
func (c *conformance) checkState(st *node.State) error {
	if err := checkClone(st.Service); err != nil {
		return err
	}
	cp, err := c.checkRoundTrip(st)
	if err != nil {
		return err
	}
	if _, ok := st.Service.(node.Fingerprinter); ok {
		return nil
	}
	return c.checkHashCoverage(st, cp)
}

// checkClone compares a Cloner's copy with its original.
func checkClone(svc node.Service) error {
	cl, ok := svc.(node.Cloner)
	if !ok {
		return nil
	}
	dup := cl.Clone()
	a, err := node.AppendCanonical(nil, svc)
	if err != nil {
		return fmt.Errorf("encoding state: %w", err)
	}
	b, err := node.AppendCanonical(nil, dup)
	if err != nil {
		return fmt.Errorf("encoding clone: %w", err)
	}
	if !bytes.Equal(a, b) {
		return fmt.Errorf("the clone differs from the original: %s", fieldDifference(svc, dup, a, b))
	}
	if path := sharedMemory(svc, dup); path != "" {
		return fmt.Errorf("the clone shares mutable memory with the original at %s", path)
	}
	return nil
}

// checkRoundTrip decodes st's checkpoint and requires the same hash and
// bytes back; it returns the checkpoint.
func (c *conformance) checkRoundTrip(st *node.State) ([]byte, error) {
	cp, err := st.AppendCheckpoint(nil)
	if err != nil {
		return nil, err
	}
	back, err := node.DecodeCheckpoint(cp, c.spec.New)
	if err != nil {
		return nil, fmt.Errorf("checkpoint round trip: %w", err)
	}
	cp2, err := back.AppendCheckpoint(nil)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(cp, cp2) {
		return nil, fmt.Errorf("checkpoint changed across a round trip: %s", stateDifference(st, &back))
	}
	h1, err1 := st.Hash()
	h2, err2 := back.Hash()
	if err := errors.Join(err1, err2); err != nil {
		return nil, err
	}
	if h1 != h2 {
		return nil, fmt.Errorf("hash changed across a checkpoint round trip: %v, %v", h1, h2)
	}
	return cp, nil
}

// checkHashCoverage perturbs each exported state field of a decoded copy
// of st and requires the hash to change.
func (c *conformance) checkHashCoverage(st *node.State, cp []byte) error {
	h0, err := st.Hash()
	if err != nil {
		return err
	}
	for _, field := range stateFields(st.Service) {
		mutant, err := node.DecodeCheckpoint(cp, c.spec.New)
		if err != nil {
			return err
		}
		if !perturbField(mutant.Service, field) {
			continue
		}
		h, err := mutant.Hash()
		if err != nil {
			return fmt.Errorf("hash after changing %s: %w", field, err)
		}
		if h == h0 {
			return fmt.Errorf("changing field %s leaves the hash unchanged", field)
		}
	}
	return nil
}
