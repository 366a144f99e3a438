package consequence

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/statediff"
)

// ErrNotDeterministic is wrapped by the error a search or a walk returns
// when the actor model's determinism check (DeterminismCheck) finds that
// one node state stepped with one event twice gave two outcomes: the
// service reads something besides its encoded state and the event — the
// wall clock, Go's map iteration order, a global variable, an unexported
// field — or its Clone shares memory with the state it copies. A search
// over such a service explores states a deployment cannot reach and
// misses ones it can, so it stops at the first mismatch. (ErrNondeterministic
// is the checker's own finding, later and vaguer: a path it recorded did
// not replay to the state it had reached.)
var ErrNotDeterministic = errors.New("consequence: the service is not deterministic")

// DefaultVerifyEvery is the sampling rate of the determinism check that
// 'crystalball check' runs by default: one transition in 64. Its cost is
// docs/PERFORMANCE.md's ("The determinism check"): about 2% of a search.
const DefaultVerifyEvery = 64

// DeterminismCheck is the actor model's check that the service is a
// function of its encoded state and the event: on a sample of the
// transitions it explores, the event is stepped a second time on a copy
// of the node state decoded from its checkpoint, and the two outcomes —
// the node state's fingerprint and the messages sent — must agree; the
// node state the transition started from is hashed again after it, and
// must be unchanged (a Clone that shares memory lets the handler write
// into it). The sample is a function of the node state and the event, so
// a search checks the same transitions whatever its workers do.
type DeterminismCheck struct {
	// Every is the sampling rate: about one transition in Every is
	// checked (1: every transition). Zero, the default of ActorOptions,
	// checks none; 'crystalball check' uses DefaultVerifyEvery. Negative
	// is an error.
	Every int
}

// WithDeterminismCheck returns a model with the same start state that
// checks about one transition in every (see DeterminismCheck; 0: none).
func (m *ActorModel) WithDeterminismCheck(every int) (*ActorModel, error) {
	if every < 0 {
		return nil, fmt.Errorf("%w: determinism check every %d transitions: want 0 (none) or more", ErrActorModel, every)
	}
	c := m.WithIntercept(m.opts.Intercept)
	c.opts.Determinism.Every = every
	return c, nil
}

// verifies reports whether the transition of node state old under ev is
// in the determinism check's sample.
func (m *ActorModel) verifies(old *actorNode, ev node.Event) bool {
	every := m.opts.Determinism.Every
	if every <= 0 {
		return false
	}
	key := old.hash.Lo ^ node.Mix64(uint64(ev.Kind)*node.Golden64+uint64(ev.From)<<20+uint64(ev.Peer)<<40+uint64(len(ev.Timer)))
	return node.Mix64(key)%uint64(every) == 0
}

// twinStep is the determinism check's second run of a transition: the
// node state it reached and the digest of what it sent.
type twinStep struct {
	st    node.State
	sends uint64
	// before is the checkpoint the twin was decoded from: what the
	// original node state was before the transition.
	before []byte
}

// stepTwin runs ev on a copy of node i's state old decoded from its
// checkpoint, before the transition itself runs, on the node's own clock
// (off ahead of the virtual one, clockjump.go).
func (m *ActorModel) stepTwin(i int, old *actorNode, ev node.Event, off time.Duration) (twinStep, error) {
	b, err := old.st.AppendCheckpoint(nil)
	if err != nil {
		return twinStep{}, err
	}
	st, err := node.DecodeCheckpoint(b, m.spec.New)
	if err != nil {
		return twinStep{}, err
	}
	if off != 0 {
		// On the node's own clock, as the step it checks (clockjump.go).
		shiftTimers(st.Timers, off)
		ev.At = ev.At.Add(off)
	}
	core := m.cores[i].Get().(*node.Core)
	defer m.cores[i].Put(core)
	core.SetState(st, old.now.Add(off))
	fx, err := stepSafe(core, ev)
	if err != nil {
		return twinStep{}, err
	}
	var dig uint64
	for _, e := range fx.Sends {
		dig = m.digestSend(dig, e)
	}
	tw := twinStep{st: *core.State(), sends: dig, before: b}
	if off != 0 {
		shiftTimers(tw.st.Timers, -off)
	}
	core.SetState(node.State{}, time.Time{})
	return tw, nil
}

// digestSend folds one send into a digest of a step's sends.
func (m *ActorModel) digestSend(dig uint64, e node.Envelope) uint64 {
	h, _ := m.msgHash(e.Msg)
	flags := uint64(0)
	if e.Datagram {
		flags |= 1
	}
	if e.Refusable {
		flags |= 2
	}
	return node.Mix64(dig^uint64(e.To)<<2^flags) ^ h.Lo ^ node.Mix64(h.Hi)
}

// checkTwin compares the transition's outcome (the node state st it
// reached, the digest sends of what it sent) with the twin's, and the
// node state it started from with what it was; a mismatch panics with an
// error wrapping ErrNotDeterministic, which the search returns.
func (m *ActorModel) checkTwin(id node.ID, old *actorNode, ev node.Event, st *node.State, sends uint64, tw twinStep) {
	again := *old
	if err := m.hashNode(&again); err == nil && again.hash != old.hash {
		what := "its state changed"
		if before, err := node.DecodeCheckpoint(tw.before, m.spec.New); err == nil {
			if d, ok := statediff.First(before.Service, old.st.Service); ok {
				what = d.String()
			}
		}
		panic(fmt.Errorf("%w: %v %v: running the handler on a copy of the node's state changed the state it was copied from (%s): its Clone shares memory with the original",
			ErrNotDeterministic, id, ev, what))
	}
	h1, err1 := st.Hash()
	h2, err2 := tw.st.Hash()
	if err := errors.Join(err1, err2); err != nil {
		panic(fmt.Errorf("%w: %v %v: hashing: %w", ErrNotDeterministic, id, ev, err))
	}
	if h1 == h2 && sends == tw.sends {
		return
	}
	what := "the messages it sent differ"
	if h1 != h2 {
		what = "the states reached differ"
		if d, ok := statediff.First(st.Service, tw.st.Service); ok {
			what += ": " + d.String()
		}
	}
	panic(fmt.Errorf("%w: %v %v, run twice from one state (once on a copy decoded from its checkpoint): %s "+
		"(a handler may read only its state, the event and Env: not the wall clock, a map's iteration order, a global variable or an unexported field; nodetest.Conformance names the field)",
		ErrNotDeterministic, id, ev, what))
}
