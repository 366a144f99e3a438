package consequence

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Fresh is a node that a snapshot does not hold but whose arrival the
// explored future includes (node.Environment): it starts with a fresh
// service value, Init at At, and has run Calls, in order, at At — in the
// start state, what they sent is in flight and the timers they set are
// scheduled. The calls run there rather than wait as pending calls
// because consequence prediction expands a node's local actions only the
// first time it meets the node's local state: every fresh node's initial
// state is met in the start state, so after one fresh node's call the
// other's would never be expanded and two arrivals could never race. What
// the calls sent is delivered in every order the search explores, which
// covers a call made later with its messages on their way.
type Fresh struct {
	// ID is the node's ID: not None, and held by no checkpoint.
	ID node.ID
	// At is the node's clock when it starts; zero means DefaultStart.
	At time.Time
	// Seed seeds its random source (node.CoreConfig.Seed); zero is a seed
	// like any other.
	Seed uint64
	// Calls are the application calls it has run: registered messages,
	// not modified afterwards.
	Calls []node.Message
}

// NewActorModelWithFresh builds the model of a gathered snapshot, as
// NewActorModelFromCheckpoints does, with the fresh nodes beside the
// checkpoints' nodes: each is initialised (Init) at its At with its
// random source seeded from its Seed and has run its calls, and what it
// sent is in flight after the snapshot's envelopes (with a connection
// open to each receiver, as for every message in flight). Errors wrap
// ErrActorModel: an ID that is None or held twice (by two fresh nodes, or
// by a fresh node and a checkpoint), a call or a message outside the
// spec, an Init or a call that panics.
func NewActorModelWithFresh(spec node.Spec, cps []Checkpoint, fresh []Fresh, inFlight []node.Envelope, opts ActorOptions) (*ActorModel, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrActorModel, err)
	}
	inits := make([]nodeInit, 0, len(cps)+len(fresh))
	for _, cp := range cps {
		st, err := node.DecodeCheckpoint(cp.Bytes, spec.New)
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint of %v: %w", ErrActorModel, cp.ID, err)
		}
		inits = append(inits, nodeInit{id: cp.ID, st: st, now: cp.At})
	}
	if len(fresh) > 0 {
		inFlight = append([]node.Envelope(nil), inFlight...)
	}
	for _, f := range fresh {
		in, sends, err := freshInit(spec, f)
		if err != nil {
			return nil, err
		}
		inits = append(inits, in)
		inFlight = append(inFlight, sends...)
	}
	return newActorModel(spec, opts, inits, inFlight, false)
}

// freshInit starts the fresh node f: Init on a new core at f.At, then its
// calls. It returns the node and what they sent.
func freshInit(spec node.Spec, f Fresh) (nodeInit, []node.Envelope, error) {
	if f.ID == node.None {
		return nodeInit{}, nil, fmt.Errorf("%w: fresh node ID is none", ErrActorModel)
	}
	at := f.At
	if at.IsZero() {
		at = DefaultStart
	}
	c, err := node.NewCore(node.CoreConfig{ID: f.ID, Factory: spec.New, Seed: f.Seed})
	if err != nil {
		return nodeInit{}, nil, fmt.Errorf("%w: fresh node %v: %w", ErrActorModel, f.ID, err)
	}
	reg, err := spec.Registry()
	if err != nil {
		return nodeInit{}, nil, fmt.Errorf("%w: %w", ErrActorModel, err)
	}
	var sends []node.Envelope
	events := []node.Event{{Kind: node.EventInit, At: at}}
	for _, call := range f.Calls {
		if err := reg.CheckMessage(call); err != nil {
			return nodeInit{}, nil, fmt.Errorf("%w: application call of fresh node %v: %w", ErrActorModel, f.ID, err)
		}
		events = append(events, node.Event{Kind: node.EventApp, Msg: call, At: at})
	}
	for _, ev := range events {
		fx, err := stepSafe(c, ev)
		if err != nil {
			return nodeInit{}, nil, fmt.Errorf("%w: fresh node %v %v: %w", ErrActorModel, f.ID, ev, err)
		}
		sends = append(sends, fx.Sends...)
	}
	return nodeInit{id: f.ID, st: *c.State(), now: c.Now()}, sends, nil
}
