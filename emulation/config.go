package emulation

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// MaxNodes bounds Config.Nodes (node IDs are packed into 32 bits in places).
const MaxNodes = 1 << 20

// Defaults applied by New to zero-valued fields.
const (
	// DefaultStartSpread is the default window in which nodes start.
	DefaultStartSpread = 10 * time.Second
	// DefaultDowntime is the default mean time a churned node stays down.
	DefaultDowntime = 30 * time.Second
	// DefaultSilentFraction is the default probability that a churn leave
	// loses its RST (a silent reset).
	DefaultSilentFraction = 0.5
	// DefaultMinRTO is the default lower bound of the retransmission
	// timeout.
	DefaultMinRTO = 200 * time.Millisecond
	// DefaultSelfDelay is the default delivery delay of a message a node
	// sends to itself.
	DefaultSelfDelay = 10 * time.Microsecond
)

// Config describes an emulated experiment. The zero value of every optional
// field selects its documented default; New validates the rest.
type Config struct {
	// Spec is the service under test: Spec.New builds each node's service,
	// Spec.Properties are observed. Required (New calls Spec.Validate).
	Spec node.Spec
	// Nodes is the number of nodes, with IDs 1..Nodes. Required, positive.
	Nodes int
	// Seed is the one seed of the run. Every random choice (topology, start
	// times, churn, per-node random sources, message jitter and loss) is
	// derived from it, per subsystem.
	Seed uint64
	// Duration is how much virtual time Run emulates, from Epoch. Run
	// requires it to be positive; step-wise use (Step, RunUntil) ignores it.
	Duration time.Duration
	// StartSpread is the window [0, StartSpread] in which node start times
	// are drawn uniformly. Zero means DefaultStartSpread.
	StartSpread time.Duration
	// Workload returns the application calls a node receives right after it
	// starts (restart=false) and after every restart (restart=true), e.g.
	// RandTree's JoinOverlay. Nil means no application calls.
	Workload func(id node.ID, restart bool) []node.Message
	// Topology is the emulated network. Nil means an AccessTopology with
	// the default AccessConfig, built from the seed's topology stream.
	Topology Topology
	// Network tunes the transport model.
	Network NetworkConfig
	// Churn schedules random leaves and rejoins. The zero value means no
	// churn.
	Churn ChurnConfig
	// Breaks schedules random connection breaks between live nodes, beside
	// churn. The zero value means none.
	Breaks BreakConfig
	// Delivery sets the rates at which the messages the service declares
	// unreliable (node.Spec.Delivery) are lost, duplicated and held back
	// (see DeliveryConfig). The zero value does nothing.
	Delivery DeliveryConfig
	// Nemesis schedules the lasting faults — crash-stops, partitions,
	// clock jumps, timer skew, a fault schedule — beside churn and
	// breaks. The zero value means none.
	Nemesis NemesisConfig
	// Observers see the run from outside the nodes: its trace, its
	// violations, its steps and its network.
	Observers
	// Snapshots, when non-nil, runs a snapshot.Layer in every node's
	// pipeline, before steering:
	// checkpoint numbers on every message, checkpoints, and neighbourhood
	// snapshots gathered over the emulated network.
	Snapshots *SnapshotConfig
	// Steering, when non-nil, runs a steering.Layer beside every node, in
	// its layer.Pipeline: rounds of prediction from its gathered
	// snapshots, event filters and the immediate safety check.
	Steering *SteeringConfig
	// Layers, when non-nil, returns node id's own layers, run in its
	// layer.Pipeline after the snapshot, fault and steering layers, as
	// live.RuntimeConfig.Layers runs them live: called once per node by
	// New, and each layer must be new (a layer belongs to one pipeline).
	// A layer.Durable among them gets its last durable state back
	// after every reset of its node (layer.Pipeline restores it), as a live
	// node gets it back from its store after a restart; the layer object
	// survives the reset.
	Layers func(id node.ID) []layer.Layer
	// Timed sets how often the observer judges the liveness properties
	// over time (availability and outages; see TimedConfig).
	Timed TimedConfig
	// WallClock reads the wall clock for the two measurements a Result
	// reports, Result.WallTime and SteeringResult.ExplorationSeconds; it
	// never feeds the loop. Nil means time.Now, the one wall-clock
	// reading of the package.
	WallClock func() time.Time
}

// Observers see an emulated run from outside its nodes. Each runs inside
// the emulator's loop, on its goroutine: none may call the Emulator, and
// none may change the services it is shown. All are optional.
type Observers struct {
	// Trace, when non-nil, receives one line per processed event (see the
	// package documentation). It is written synchronously, one Write per
	// line: wrap a file in a bufio.Writer and flush it after Run.
	Trace io.Writer
	// TraceCauses, with Trace, adds to each core step's line what it
	// caused: the messages and datagrams it sent (" to=n2:T,n3~T", "~"
	// for a datagram) and the timers it set (" set=name,name"), so a
	// reader can draw the event graph (crystalball trace show --graph).
	// Off (the default), the lines are as before.
	TraceCauses bool
	// OnViolation, when non-nil, is called for every post-event state that
	// violates a safety property, once per violated property, in spec
	// order, and once per outage of a bounded property (node.Within),
	// when its bound passes (its Err a *node.OverdueError). It runs inside
	// the loop: it must not call the Emulator.
	OnViolation func(Violation)
	// OnStep, when non-nil, sees every event a node's handler ran, after
	// the step (experiments measure protocol milestones with it, such as
	// join times). It runs inside the loop: it must not call the Emulator,
	// and must treat the service as read-only.
	OnStep func(Step)
	// OnNetwork, when non-nil, sees every message sent, delivered and
	// dropped, in processing order (an omniscient observer for checkers).
	// It runs inside the loop: it must not call the Emulator.
	OnNetwork func(NetworkEvent)
	// Logger is handed to the services through Env.Logger. Nil means no
	// logging.
	Logger *slog.Logger
}

// DefaultConfig returns the defaults New gives a Config's zero optional
// fields (Spec and Nodes have none; no churn, no breaks, no snapshots, no
// steering).
func DefaultConfig() Config {
	return Config{
		StartSpread: DefaultStartSpread,
		Network:     DefaultNetworkConfig(),
		Churn:       DefaultChurnConfig(),
		WallClock:   time.Now,
	}
}

// DefaultChurnConfig returns the defaults of a ChurnConfig's zero fields
// (Rate has none: zero is no churn).
func DefaultChurnConfig() ChurnConfig {
	return ChurnConfig{Downtime: DefaultDowntime, SilentFraction: Fraction(DefaultSilentFraction)}
}

// DefaultNetworkConfig returns the defaults of a NetworkConfig's zero
// fields.
func DefaultNetworkConfig() NetworkConfig {
	return NetworkConfig{MinRTO: DefaultMinRTO, SelfDelay: DefaultSelfDelay, SendQueueBytes: DefaultSendQueueBytes}
}

// NetworkConfig tunes the transport model. Zero fields take the defaults.
type NetworkConfig struct {
	// MinRTO is the lower bound of the retransmission timeout: a lost packet
	// is resent after max(MinRTO, 2·RTT), doubling on each further loss of
	// the same packet. Zero means DefaultMinRTO.
	MinRTO time.Duration
	// SelfDelay is the delivery delay of a message a node sends to itself.
	// Zero means DefaultSelfDelay.
	SelfDelay time.Duration
	// Uplink is every node's uplink capacity in bits per second: a
	// message or datagram waits FIFO at its sender's uplink and takes
	// size·8/Uplink to leave it (see the package documentation,
	// "Bandwidth and send queues"). Zero means unlimited (no bandwidth
	// model, the default); INETUplink is the paper's figure. Must not be
	// negative.
	Uplink int64
	// Downlink is every node's downlink capacity in bits per second, the
	// same at the receiving end. Zero means unlimited (the default);
	// INETDownlink is the paper's figure. Must not be negative.
	Downlink int64
	// SendQueueBytes bounds a connection's send queue (the bytes of its
	// accepted messages still waiting for, or being serialised on, the
	// sender's uplink): a TrySend that would take the queue beyond it is
	// refused, unless the queue is empty. It only matters with a finite
	// Uplink. Zero means DefaultSendQueueBytes; must not be negative.
	SendQueueBytes int
}

// validateLinks rejects negative link capacities and queue bounds.
func (n NetworkConfig) validateLinks() error {
	if n.Uplink < 0 {
		return fmt.Errorf("emulation: Config.Network.Uplink must not be negative (bits/s; 0 = unlimited), got %d", n.Uplink)
	}
	if n.Downlink < 0 {
		return fmt.Errorf("emulation: Config.Network.Downlink must not be negative (bits/s; 0 = unlimited), got %d", n.Downlink)
	}
	if n.SendQueueBytes < 0 {
		return fmt.Errorf("emulation: Config.Network.SendQueueBytes must not be negative (0 = %d), got %d", DefaultSendQueueBytes, n.SendQueueBytes)
	}
	return nil
}

// ChurnConfig schedules churn: nodes leaving (a reset whose process stays
// down) and rejoining with a fresh state. Leaves form a Poisson process.
type ChurnConfig struct {
	// Rate is the mean number of leave-and-rejoin events per minute of
	// virtual time (the paper's RandTree experiment uses 1). Zero disables
	// churn.
	Rate float64
	// Downtime is the mean time a node stays down; downtimes are drawn from
	// an exponential distribution with this mean. Zero means
	// DefaultDowntime.
	Downtime time.Duration
	// SilentFraction is the probability that a leave is silent (its RST is
	// lost, so peers keep stale connections). Nil means
	// DefaultSilentFraction; it must be in [0, 1].
	SilentFraction *float64
	// After delays churn: the first leave is drawn after this offset from
	// Epoch (e.g. to let the system form first). Zero starts at Epoch.
	After time.Duration
	// Until ends churn: no leave happens at or after this offset from
	// Epoch, while nodes that are down still come back. A run that goes on
	// past Until is a safety phase followed by a heal-and-converge phase,
	// at whose end liveness properties should hold. Zero means churn never
	// ends; otherwise it must be greater than After.
	Until time.Duration
}

// Fraction returns a pointer to f, for ChurnConfig.SilentFraction.
func Fraction(f float64) *float64 { return &f }

// settings is a validated Config with defaults applied.
// Step is an event a node's handler ran, for Config.OnStep.
type Step struct {
	At    time.Duration
	Node  node.ID
	Event node.Event
	// Service is the node's service state after the step: read-only, and
	// valid only during the call.
	Service node.Service
}

type settings struct {
	Config
	silent float64
}

func (c Config) validate() (settings, error) {
	s := settings{Config: c}
	if c.Nodes <= 0 {
		return s, fmt.Errorf("emulation: Config.Nodes must be positive, got %d", c.Nodes)
	}
	if c.Nodes > MaxNodes {
		return s, fmt.Errorf("emulation: Config.Nodes must be at most %d, got %d", MaxNodes, c.Nodes)
	}
	if c.Spec.New == nil {
		return s, errors.New("emulation: Config.Spec.New (the service factory) is required")
	}
	if err := c.Spec.Validate(); err != nil {
		return s, fmt.Errorf("emulation: invalid Config.Spec: %w", err)
	}
	durations := []struct {
		name string
		d    time.Duration
	}{
		{"Duration", c.Duration},
		{"StartSpread", c.StartSpread},
		{"Network.MinRTO", c.Network.MinRTO},
		{"Network.SelfDelay", c.Network.SelfDelay},
		{"Churn.Downtime", c.Churn.Downtime},
		{"Churn.After", c.Churn.After},
		{"Churn.Until", c.Churn.Until},
		{"Timed.Every", c.Timed.Every},
	}
	for _, d := range durations {
		if d.d < 0 {
			return s, fmt.Errorf("emulation: Config.%s must not be negative, got %v", d.name, d.d)
		}
	}
	if math.IsNaN(c.Churn.Rate) || math.IsInf(c.Churn.Rate, 0) || c.Churn.Rate < 0 {
		return s, fmt.Errorf("emulation: Config.Churn.Rate must be a finite, non-negative number of events per minute, got %v", c.Churn.Rate)
	}
	if c.Churn.Until > 0 && c.Churn.Until <= c.Churn.After {
		return s, fmt.Errorf("emulation: Config.Churn.Until (%v) must be greater than Churn.After (%v)", c.Churn.Until, c.Churn.After)
	}
	if err := c.Breaks.validate(); err != nil {
		return s, err
	}
	if err := c.Delivery.validate(); err != nil {
		return s, err
	}
	if err := c.Nemesis.validate(c.Nodes); err != nil {
		return s, err
	}
	if err := c.Network.validateLinks(); err != nil {
		return s, err
	}
	s.silent = DefaultSilentFraction
	if f := c.Churn.SilentFraction; f != nil {
		if !(*f >= 0 && *f <= 1) {
			return s, fmt.Errorf("emulation: Config.Churn.SilentFraction must be in [0, 1], got %v", *f)
		}
		s.silent = *f
	}
	if s.StartSpread == 0 {
		s.StartSpread = DefaultStartSpread
	}
	if s.Network.MinRTO == 0 {
		s.Network.MinRTO = DefaultMinRTO
	}
	if s.Network.SelfDelay == 0 {
		s.Network.SelfDelay = DefaultSelfDelay
	}
	if s.Network.SendQueueBytes == 0 {
		s.Network.SendQueueBytes = DefaultSendQueueBytes
	}
	if s.Churn.Downtime == 0 {
		s.Churn.Downtime = DefaultDowntime
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.WallClock == nil {
		s.WallClock = time.Now
	}
	return s, nil
}
