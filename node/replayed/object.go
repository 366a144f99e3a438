package replayed

import (
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Object is existing deterministic code the adapter runs as a service: a
// state machine that cannot be copied or encoded, driven by the handlers
// of a node.Service. See the package documentation for its contract.
type Object[O any] interface {
	// Init runs once per incarnation, right after Config.New built the
	// object (on a first start and after every reset).
	Init(env node.Env)
	// HandleMessage, HandleTimer, HandleApp and HandleTransportError are
	// node.Service's handlers.
	HandleMessage(env node.Env, from node.ID, msg node.Message)
	HandleTimer(env node.Env, name string)
	HandleApp(env node.Env, call node.Message)
	HandleTransportError(env node.Env, peer node.ID)
	// Observe returns what the object exposes: the value properties read,
	// the fingerprint hashes (its canonical msgpack encoding: exported
	// fields) and trace show prints. It must be complete (two objects with
	// equal observations behave alike), deterministic, and must not alias
	// the object's mutable memory.
	Observe() O
}

// DurableObject is an optional method of an Object whose state lives
// partly on stable storage (raft's HardState, entries and snapshot):
// AppendDurable appends those bytes to dst. On a reset the adapter reads
// them from the incarnation that went down and hands them to Config.New
// for the next one, as node.Durable does for a hand-written service.
// Without it a reset loses everything. It must not modify the object.
type DurableObject interface {
	AppendDurable(dst []byte) []byte
}

// Rebaser is an optional method of an Object that can, in some states,
// write an image of itself: bytes from which Config.New builds an object
// that observes the same (and, by Observe's contract, behaves the same).
// AppendImage appends the image to dst and reports whether it could
// write one (a raft follower can — its durable state and its leader's
// ID —, a leader cannot: its view of its followers is not in raft's
// API). Every Config.RebaseEvery logged inputs the adapter asks for an
// image; when New on it observes what the object does, the image becomes
// the value's base and the log is dropped, so replays start from there.
// It must not modify the object.
type Rebaser interface {
	AppendImage(dst []byte) ([]byte, bool)
}

// SendRefusedObject is the optional handler of an Object that sends with
// Env.TrySend (node.SendRefusedHandler).
type SendRefusedObject interface {
	HandleSendRefused(env node.Env, to node.ID, msg node.Message)
}

// Config describes an adapted object to New. New and Messages are
// required; every other field's zero value is its documented default.
type Config[O any] struct {
	// Name names the service in errors and panics.
	Name string
	// New builds the object of node self: durable is nil on a first
	// start, else what the previous incarnation's AppendDurable returned
	// when it reset (the adapter's checkpoints carry it too, so New must
	// reject bytes it cannot read with an error, not a panic). It must be
	// deterministic and return a new object on every call.
	New func(self node.ID, durable []byte) (Object[O], error)
	// Messages are the prototypes of every message and application call
	// the object receives (the service's Spec.Messages): the log encodes
	// them with their registry.
	Messages []node.Message
	// Neighbors, when set, is the node's snapshot neighbourhood read from
	// its observation (node.Neighborer). Nil: the peers the node received
	// messages from since its last durable point.
	Neighbors func(self node.ID, o O) []node.ID
	// KeepEveryInput keeps every input in the log, also those that change
	// neither the observation nor the scheduled timers (default: left
	// out; see the package documentation).
	KeepEveryInput bool
	// CheckEveryInput makes a decoded checkpoint's replay check every
	// input's observation, not only the last one's: it names the first
	// input a replay diverges at (an object that is not deterministic),
	// for an observation encoded per input.
	CheckEveryInput bool
	// RebaseEvery is how many logged inputs pass between two requests for
	// an image of a Rebaser (default DefaultRebaseEvery).
	RebaseEvery int
	// MaxInputs bounds the log a decoded checkpoint may hold (default
	// DefaultMaxInputs): a replay costs a handler call per input.
	MaxInputs int
	// Delivery declares what the library tolerates of the network
	// (node.Spec.Delivery; Adapter.Delivery returns it): raft's messages,
	// say, may be lost, duplicated and reordered. The zero value keeps
	// every message reliable.
	Delivery node.DeliverySpec
}

// Defaults of Config's fields.
const (
	DefaultMaxInputs   = 1 << 20
	DefaultRebaseEvery = 16
)

// ErrConfig is wrapped by New's errors.
var ErrConfig = errors.New("replayed: bad config")

// ErrDiverged is wrapped by the error of a replay that did not reproduce
// what the live object did: an input's observation differs, or a handler
// drew random numbers where the live one did not. It means the object is
// not deterministic (or a checkpoint was forged).
var ErrDiverged = errors.New("replayed: replay diverged")

// Adapter is a configured object type: its Factory is the node.Factory of
// the service (Spec.New), and it counts its replays. It is safe for
// concurrent use; every service value it builds shares it.
type Adapter[O any] struct {
	cfg   Config[O]
	reg   *node.Registry
	stats counters
}

// New checks cfg and returns its adapter.
func New[O any](cfg Config[O]) (*Adapter[O], error) {
	if cfg.New == nil {
		return nil, fmt.Errorf("%w: %s: Config.New is required", ErrConfig, cfg.Name)
	}
	if cfg.MaxInputs < 0 || cfg.RebaseEvery < 0 {
		return nil, fmt.Errorf("%w: %s: Config.MaxInputs %d or RebaseEvery %d is negative", ErrConfig, cfg.Name, cfg.MaxInputs, cfg.RebaseEvery)
	}
	if cfg.RebaseEvery == 0 {
		cfg.RebaseEvery = DefaultRebaseEvery
	}
	if cfg.MaxInputs == 0 {
		cfg.MaxInputs = DefaultMaxInputs
	}
	reg, err := node.NewRegistry(cfg.Messages...)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, cfg.Name, err)
	}
	return &Adapter[O]{cfg: cfg, reg: reg}, nil
}

// Factory returns the node.Factory of the adapted service: a fresh,
// unstarted Service on every call.
func (a *Adapter[O]) Factory() node.Factory {
	return func() node.Service { return &Service[O]{ad: a, slot: new(slot[O])} }
}

// Observed returns the observation of a service value an Adapter built
// (what properties read from node.View.Service), and false for any other
// value or one not started.
func Observed[O any](svc node.Service) (O, bool) {
	s, ok := svc.(*Service[O])
	if !ok || !s.started {
		var zero O
		return zero, false
	}
	return s.obs, true
}

// ObservedRef is Observed without the copy, for properties that read
// large observations in every explored state: the pointer is to the
// value's own observation. The caller must only read it, and only while
// it judges the view: a handler step of the value replaces it.
func ObservedRef[O any](svc node.Service) (*O, bool) {
	s, ok := svc.(*Service[O])
	if !ok || !s.started {
		return nil, false
	}
	return &s.obs, true
}
