package emulation

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Link is the emulated network path from one node to another, as the
// transport sees it (one TCP-like channel per direction).
type Link struct {
	// Latency is the one-way propagation delay of the path.
	Latency time.Duration
	// Jitter bounds the extra delay of each message, drawn uniformly in
	// [0, Jitter]. It never reorders a channel: a message is never delivered
	// before the one sent ahead of it on the same channel.
	Jitter time.Duration
	// Loss is the per-packet loss probability of the path, in [0, 1). On a
	// live connection a lost packet is retransmitted, so loss adds delay but
	// never loses a message.
	Loss float64
}

// Topology is the emulated wide-area network: the properties of the path
// between any two nodes. The emulator calls Link on every send between
// distinct nodes, with IDs in 1..Config.Nodes, so implementations must be
// deterministic (a pure function of their construction parameters and the
// arguments), cheap and allocation-free. Self-sends never consult the
// topology.
//
// AccessTopology is the first implementation; a power-law INET-like
// generator can replace it without touching the emulator.
type Topology interface {
	Link(from, to node.ID) Link
}

// Defaults of AccessConfig, after the paper's ModelNet setup (§5.1): a mean
// round-trip time of 130 ms and a per-link drop probability drawn uniformly
// from [0.001, 0.005].
const (
	// DefaultMeanRTT is the mean RTT over all pairs of nodes.
	DefaultMeanRTT = 130 * time.Millisecond
	// DefaultAccessSpread is the relative spread of access latencies.
	DefaultAccessSpread = 0.8
	// DefaultLossMin and DefaultLossMax bound per-link loss probabilities.
	DefaultLossMin = 0.001
	DefaultLossMax = 0.005
	// DefaultJitter bounds each message's extra delay.
	DefaultJitter = time.Millisecond
)

// AccessConfig parameterises an AccessTopology. Zero fields take the
// defaults above (LossMin and LossMax default together, when both are zero).
type AccessConfig struct {
	// MeanRTT is the mean round-trip time over all pairs of distinct nodes.
	MeanRTT time.Duration
	// Spread is how much access latencies vary: each is drawn uniformly in
	// mean·[1-Spread, 1+Spread] before the set is rescaled to hit MeanRTT
	// exactly. In [0, 1).
	Spread float64
	// LossMin and LossMax bound the per-link loss probability, drawn
	// uniformly in [LossMin, LossMax] for every pair of nodes.
	LossMin, LossMax float64
	// Jitter is every link's per-message jitter bound (see Link.Jitter).
	Jitter time.Duration
}

// DefaultAccessConfig returns the defaults of an AccessConfig's zero
// fields: the paper's wide-area parameters.
func DefaultAccessConfig() AccessConfig {
	return AccessConfig{MeanRTT: DefaultMeanRTT, Spread: DefaultAccessSpread, LossMin: DefaultLossMin, LossMax: DefaultLossMax, Jitter: DefaultJitter}
}

func (c AccessConfig) withDefaults() AccessConfig {
	d := DefaultAccessConfig()
	if c.MeanRTT == 0 {
		c.MeanRTT = d.MeanRTT
	}
	if c.Spread == 0 {
		c.Spread = d.Spread
	}
	if c.LossMin == 0 && c.LossMax == 0 {
		c.LossMin, c.LossMax = d.LossMin, d.LossMax
	}
	if c.Jitter == 0 {
		c.Jitter = d.Jitter
	}
	return c
}

func (c AccessConfig) validate() error {
	switch {
	case c.MeanRTT < 0:
		return fmt.Errorf("emulation: AccessConfig.MeanRTT must not be negative, got %v", c.MeanRTT)
	case !(c.Spread >= 0 && c.Spread < 1):
		return fmt.Errorf("emulation: AccessConfig.Spread must be in [0, 1), got %v", c.Spread)
	case !(c.LossMin >= 0 && c.LossMin <= c.LossMax && c.LossMax < 1):
		return fmt.Errorf("emulation: AccessConfig loss range must satisfy 0 <= LossMin <= LossMax < 1, got [%v, %v]", c.LossMin, c.LossMax)
	case c.Jitter < 0:
		return fmt.Errorf("emulation: AccessConfig.Jitter must not be negative, got %v", c.Jitter)
	}
	return nil
}

// AccessTopology is the first, simple wide-area model: every node sits
// behind an access link with its own latency, and the core between access
// links is free, so the one-way latency between a and b is
// access(a) + access(b) (symmetric). Access latencies are drawn from the
// seed and rescaled so that the mean RTT over all pairs of distinct nodes is
// exactly MeanRTT. Each unordered pair of nodes gets its own loss
// probability, uniform in [LossMin, LossMax], derived by hashing the pair
// with the seed (O(1) memory, no per-pair table).
//
// It is immutable after construction and safe for concurrent use.
type AccessTopology struct {
	access  []time.Duration // index = node ID; [0] unused
	lossKey uint64
	cfg     AccessConfig
}

var _ Topology = (*AccessTopology)(nil)

// NewAccessTopology builds the topology of nodes 1..n from seed (the
// emulator passes a seed derived from the run seed for its topology stream).
func NewAccessTopology(n int, cfg AccessConfig, seed uint64) (*AccessTopology, error) {
	if n <= 0 {
		return nil, fmt.Errorf("emulation: NewAccessTopology needs a positive node count, got %d", n)
	}
	if n > MaxNodes {
		return nil, fmt.Errorf("emulation: NewAccessTopology supports at most %d nodes, got %d", MaxNodes, n)
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	rng := newStream(seed, streamTopology)
	raw := make([]float64, n+1)
	var sum float64
	for i := 1; i <= n; i++ {
		// Explicit float64 conversions round each product, so no platform
		// fuses a multiply-add and every architecture draws the same values.
		raw[i] = 1 + float64(cfg.Spread*(float64(2*rng.Float64())-1))
		sum += raw[i]
	}
	// Mean RTT over ordered pairs a != b of 2·(acc(a)+acc(b)) is
	// 4·mean(acc), so the target mean access latency is MeanRTT/4.
	scale := float64(cfg.MeanRTT) / 4 / (sum / float64(n))
	t := &AccessTopology{access: make([]time.Duration, n+1), lossKey: rng.Uint64(), cfg: cfg}
	for i := 1; i <= n; i++ {
		t.access[i] = time.Duration(math.Round(raw[i] * scale))
	}
	return t, nil
}

// Nodes returns the number of nodes the topology was built for.
func (t *AccessTopology) Nodes() int { return len(t.access) - 1 }

// Access returns the access-link latency of id. It panics for an ID outside
// 1..Nodes().
func (t *AccessTopology) Access(id node.ID) time.Duration { return t.access[id] }

// Link implements Topology. It panics for an ID outside 1..Nodes().
func (t *AccessTopology) Link(from, to node.ID) Link {
	lo, hi := from, to
	if lo > hi {
		lo, hi = hi, lo
	}
	u := unitFloat(splitmix64(t.lossKey ^ splitmix64(uint64(lo)<<32|uint64(hi))))
	return Link{
		Latency: t.access[from] + t.access[to],
		Jitter:  t.cfg.Jitter,
		Loss:    t.cfg.LossMin + float64((t.cfg.LossMax-t.cfg.LossMin)*u),
	}
}

// MeanRTT returns the mean round-trip time over all ordered pairs of
// distinct nodes (zero for a single node).
func (t *AccessTopology) MeanRTT() time.Duration {
	n := t.Nodes()
	if n < 2 {
		return 0
	}
	var sum time.Duration
	for i := 1; i <= n; i++ {
		sum += t.access[i]
	}
	return 4 * sum / time.Duration(n)
}

// UniformTopology gives every pair of distinct nodes the same Link. It is
// handy for tests and scripted scenarios (exact latencies, no loss).
type UniformTopology struct {
	// L is the link between every pair of distinct nodes.
	L Link
}

var _ Topology = UniformTopology{}

// Link implements Topology.
func (u UniformTopology) Link(from, to node.ID) Link { return u.L }

func validateLink(l Link) error {
	if l.Latency < 0 || l.Jitter < 0 || !(l.Loss >= 0 && l.Loss < 1) {
		return errors.New("emulation: topology link has a negative latency or jitter, or a loss outside [0, 1)")
	}
	return nil
}
