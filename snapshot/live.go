package snapshot

import (
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Live runs a Manager inside a live node.Runtime: it is the node.Layer that
// puts the checkpoint manager on the runtime's core goroutine. Put it in
// node.RuntimeConfig.Layers; the runtime then registers the protocol's
// messages (Messages) beside the service's, so they travel on its framed
// connections, and drives the Manager around every core step exactly as
// the emulator does: Deliver before a message is handled (protocol
// messages are consumed), Sent for every service send, AfterStep,
// TransportError, Tick at NextTick, Start after the core's Init.
//
// A live process has no Reset: a crash is a new process with a new Live,
// whose checkpoint number starts at 0 (nothing is persisted). The protocol
// tolerates that: the restarted node adopts its peers' larger numbers on
// the first message it receives (checkpointing first, as for any larger
// number), so its checkpoints still lie on consistent cuts; the channels
// from it recorded by peers whose checkpoint predates its crash are marked
// lossy (the peer saw the broken connection), and messages its previous
// incarnation sent are neither in its state nor recorded in flight: the
// snapshot shows it as a node that crashed and restarted, which it is.
// Peers forget the delta base they kept for it when the connection
// breaks, and a gatherer that cannot decode a delta says so (Ack with hash
// 0), so a restarted gatherer gets full checkpoints again.
//
// Concurrency: the node.Layer methods run on the runtime's core goroutine
// (see node.Layer); Gather must run there too (through node.Runtime.Do).
// Status and Last are safe from any goroutine at any time. OnSnapshot's
// function is called on the core goroutine.
type Live struct {
	cfg Config
	log *slog.Logger

	// mu guards everything below against Status and Last; the hooks hold it
	// while they call the Manager.
	mu      sync.Mutex
	m       *Manager
	started bool
	last    *Snapshot
	failure *Failure
	failAt  time.Time
	// onSnap and fresh: see OnSnapshot.
	onSnap func(*Snapshot)
	fresh  []*Snapshot
}

var _ node.Layer = (*Live)(nil)

// Live errors.
var (
	// ErrAttached: the Live is already attached to a runtime.
	ErrAttached = errors.New("snapshot: Live is already attached to a runtime")
	// ErrNotAttached: the Live has not been attached to a runtime.
	ErrNotAttached = errors.New("snapshot: Live is not attached to a runtime")
)

// NewLive validates cfg (see Config; Registry is the service's registry,
// Spec.Registry, which recorded in-flight messages are encoded with) and
// returns a Live for one runtime. logger (nil: no-op) gets a line per
// gathered (debug) or failed (info) snapshot.
func NewLive(cfg Config, logger *slog.Logger) (*Live, error) {
	if _, err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Live{cfg: cfg, log: logger}, nil
}

// Messages returns the protocol's messages (node.Layer).
func (l *Live) Messages() []node.Message { return Messages() }

// Attach builds the Manager for host, checkpointing it (node.Layer).
func (l *Live) Attach(host node.Host) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m != nil {
		return ErrAttached
	}
	m, err := New(l.cfg, host.ID(), host)
	if err != nil {
		return err
	}
	l.m = m
	return nil
}

// Start starts the Manager (node.Layer).
func (l *Live) Start(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil
	}
	l.started = true
	return l.apply(l.m.Start(now))
}

// Before hands received envelopes to Manager.Deliver (which checkpoints
// first when the envelope's number is larger, and consumes protocol
// messages) and transport errors to Manager.TransportError (node.Layer).
// An EventReset (which the live runtime does not produce) resets the
// Manager.
func (l *Live) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return !(ev.Kind == node.EventMessage && IsProtocol(ev.Msg)), nil, nil
	}
	switch ev.Kind {
	case node.EventMessage:
		env := node.Envelope{From: ev.From, Msg: ev.Msg, To: l.m.self}
		if in != nil {
			env = *in
		}
		deliver, fx, err := l.m.Deliver(now, env)
		return deliver, l.apply(fx), err
	case node.EventTransportError:
		return true, l.apply(l.m.TransportError(now, ev.Peer)), nil
	case node.EventReset:
		return true, l.apply(l.m.Reset(now)), nil
	}
	return true, nil, nil
}

// Sending stamps env with the checkpoint number and accounts it
// (Manager.Sent) (node.Layer). The message is sized (encoded once more)
// only when Config.BandwidthFraction needs its size.
func (l *Live) Sending(now time.Time, env *node.Envelope) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		return
	}
	size := 0
	if l.cfg.BandwidthFraction > 0 && env.To != l.m.self {
		if body, err := l.cfg.Registry.EncodeMessage(env.Msg); err == nil {
			size = len(body) + len(env.Msg.MessageType()) + node.FrameHeaderLen + 8
		}
	}
	l.m.Sent(now, env, size)
}

// After runs Manager.AfterStep (node.Layer).
func (l *Live) After(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil
	}
	return l.apply(l.m.AfterStep(now))
}

// Tick runs Manager.Tick (node.Layer).
func (l *Live) Tick(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil, nil
	}
	fx, err := l.m.Tick(now)
	return l.apply(fx), err
}

// NextTick returns the Manager's NextTick once started (node.Layer).
func (l *Live) NextTick() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil || !l.started {
		return time.Time{}
	}
	return l.m.NextTick()
}

// Gather starts gathering a snapshot of the neighbourhood now
// (Manager.Gather) and returns the requests to send. It must run on the
// runtime's core goroutine:
//
//	var gerr error
//	err := rt.Do(ctx, func(now time.Time) []node.Envelope {
//		out, err := live.Gather(now)
//		gerr = err
//		return out
//	})
//
// The snapshot arrives later (Last). Errors: ErrNotAttached,
// ErrNotStarted, ErrGatherInProgress.
func (l *Live) Gather(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	defer l.unlockAndNotify()
	if l.m == nil {
		return nil, ErrNotAttached
	}
	fx, err := l.m.Gather(now)
	return l.apply(fx), err
}

// OnSnapshot registers fn to see every snapshot this node gathers (the
// snapshots Last returns, in order): a steering controller starts its
// rounds from them. fn is called on the runtime's core goroutine by the
// hook (or Gather) that completed the gather, after the Live's lock is
// released, so it may call Last and Status; it must not block (every event
// of the node waits) nor call the Live's node.Layer methods or Gather. The
// Snapshot is immutable and shared. Register before the runtime starts; a
// second call replaces fn, nil unregisters.
func (l *Live) OnSnapshot(fn func(*Snapshot)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onSnap = fn
}

// unlockAndNotify releases mu, then hands the snapshots gathered while it
// was held to the OnSnapshot function.
func (l *Live) unlockAndNotify() {
	fresh, fn := l.fresh, l.onSnap
	l.fresh = nil
	l.mu.Unlock()
	if fn != nil {
		for _, s := range fresh {
			fn(s)
		}
	}
}

// apply records the gathers and failures in fx and returns its sends.
// Called with mu held.
func (l *Live) apply(fx Effects) []node.Envelope {
	for _, s := range fx.Snapshots {
		l.last = s
		if l.onSnap != nil {
			l.fresh = append(l.fresh, s)
		}
		l.log.Debug("snapshot: gathered", slog.Uint64("cut", s.CN), slog.Int("nodes", len(s.Nodes)),
			slog.Any("dead", s.Dead), slog.Int("excluded", len(s.Excluded)), slog.Int("rounds", s.Rounds),
			slog.Duration("took", s.At.Sub(s.Started)))
	}
	for i := range fx.Failures {
		f := fx.Failures[i]
		l.failure, l.failAt = &f, l.m.now
		l.log.Info("snapshot: gather given up", slog.Int("rounds", f.Rounds), slog.String("reason", f.Reason))
	}
	return fx.Sends
}

// Last returns the most recently gathered snapshot, or nil. The Snapshot
// is immutable and shared: read it, do not modify it. Safe from any
// goroutine.
func (l *Live) Last() *Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// LiveStatus is a JSON-friendly picture of a Live (the "snapshots" object
// of crystalball node's /status).
type LiveStatus struct {
	// IntervalSeconds and GatherIntervalSeconds are the configured periods
	// of checkpoint-number increments and automatic gathers (0: gathers
	// only on request).
	IntervalSeconds       float64 `json:"interval_seconds"`
	GatherIntervalSeconds float64 `json:"gather_interval_seconds"`
	// CN is the node's current checkpoint number.
	CN uint64 `json:"cn"`
	// CheckpointsStored is the number of stored checkpoints; StoredBytes
	// their cost against Config.Quota (the in-flight message log included).
	CheckpointsStored int `json:"checkpoints_stored"`
	StoredBytes       int `json:"stored_bytes"`
	// Gathering is set while a gather is in progress.
	Gathering bool `json:"gathering"`
	// Stats are the Manager's counters (checkpoints by reason, requests
	// answered, response bytes, gathers, ...).
	Stats Stats `json:"stats"`
	// Last summarises the most recently gathered snapshot (absent before
	// the first).
	Last *SnapshotSummary `json:"last,omitempty"`
	// LastFailure is the most recent gather given up (absent if none).
	LastFailure *FailureSummary `json:"last_failure,omitempty"`
}

// SnapshotSummary describes a gathered snapshot.
type SnapshotSummary struct {
	// Gather identifies the gather at its gatherer; CN is its cut.
	Gather uint64 `json:"gather"`
	CN     uint64 `json:"cn"`
	// Started and At are when the gather began and completed; AgeSeconds
	// is the time from At to the status.
	Started    time.Time `json:"started"`
	At         time.Time `json:"at"`
	AgeSeconds float64   `json:"age_seconds"`
	Rounds     int       `json:"rounds"`
	// SizeBytes is the total raw size of its checkpoints; InFlight the
	// number of recorded in-flight messages.
	SizeBytes int `json:"size_bytes"`
	InFlight  int `json:"in_flight"`
	// Members are the included nodes (gatherer included), Dead the members
	// left out after a transport error or a timeout, Excluded those left
	// out for another reason. All ascending.
	Members  []node.ID       `json:"members"`
	Dead     []node.ID       `json:"dead"`
	Excluded []ExclusionJSON `json:"excluded"`
}

// ExclusionJSON is an Exclusion with JSON field names.
type ExclusionJSON struct {
	Node   node.ID `json:"node"`
	Reason string  `json:"reason"`
}

// FailureSummary describes a gather given up.
type FailureSummary struct {
	At     time.Time `json:"at"`
	Rounds int       `json:"rounds"`
	Reason string    `json:"reason"`
}

// Summarize describes s; now sets AgeSeconds.
func (s *Snapshot) Summarize(now time.Time) SnapshotSummary {
	sum := SnapshotSummary{Gather: s.Gather, CN: s.CN, Started: s.Started.Round(0), At: s.At.Round(0),
		AgeSeconds: now.Sub(s.At).Seconds(), Rounds: s.Rounds,
		Members: make([]node.ID, 0, len(s.Nodes)), Dead: slices.Clone(s.Dead), Excluded: []ExclusionJSON{}}
	if sum.Dead == nil {
		sum.Dead = []node.ID{}
	}
	for _, n := range s.Nodes {
		sum.Members = append(sum.Members, n.Node)
		sum.SizeBytes += len(n.State)
	}
	for _, c := range s.Channels {
		sum.InFlight += len(c.Messages)
	}
	for _, e := range s.Excluded {
		sum.Excluded = append(sum.Excluded, ExclusionJSON{Node: e.Node, Reason: e.Reason})
	}
	return sum
}

// Status returns the Live's status; now sets the last snapshot's age. Safe
// from any goroutine; before Attach it has only the configuration.
func (l *Live) Status(now time.Time) LiveStatus {
	c, _ := l.cfg.withDefaults()
	st := LiveStatus{IntervalSeconds: c.Interval.Seconds(), GatherIntervalSeconds: c.GatherInterval.Seconds()}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		return st
	}
	st.Stats = l.m.Stats()
	st.CN, st.CheckpointsStored, st.StoredBytes = st.Stats.CN, st.Stats.Stored, st.Stats.StoredBytes
	st.Gathering = l.m.Gathering()
	if l.last != nil {
		sum := l.last.Summarize(now)
		st.Last = &sum
	}
	if f := l.failure; f != nil {
		st.LastFailure = &FailureSummary{At: l.failAt.Round(0), Rounds: f.Rounds, Reason: f.Reason}
	}
	return st
}
