package snapshot

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Defaults applied by New to zero-valued Config fields.
const (
	// DefaultInterval is the period of checkpoint-number increments (the
	// paper's 10 s checkpointing interval).
	DefaultInterval = 10 * time.Second
	// DefaultGatherTimeout bounds one gather round: members that have not
	// answered by then are dead for this snapshot.
	DefaultGatherTimeout = 5 * time.Second
	// DefaultRecordTimeout bounds how long an answer waits for the channels
	// it records to close before it is sent with the open ones marked
	// incomplete.
	DefaultRecordTimeout = 2 * time.Second
	// DefaultMaxRounds bounds the rounds of one gather (retries after
	// negative answers and restarts after neighbourhood changes).
	DefaultMaxRounds = 4
	// DefaultQuota is the default checkpoint storage quota in bytes.
	DefaultQuota = 64 << 10
	// DefaultRecentWindow is how recent traffic must be for a peer to count
	// as a neighbour when the service does not implement node.Neighborer.
	DefaultRecentWindow = 30 * time.Second
	// DefaultMaxRecentPeers caps that traffic-derived neighbourhood.
	DefaultMaxRecentPeers = 16
	// DefaultBurst is how many seconds of allowance a bandwidth bucket can
	// save up.
	DefaultBurst = 10 * time.Second
	// DefaultMaxCheckpointSize caps a decompressed checkpoint (and the
	// decoder's memory): larger ones are refused.
	DefaultMaxCheckpointSize = 1 << 20
	// DefaultMaxPendingAnswers caps the answers a node records at once;
	// further requests get a negative answer.
	DefaultMaxPendingAnswers = 64
)

// Wire bounds checked by DecodeResponse and the request handler before
// anything is allocated from a peer's numbers.
const (
	// MaxMembers bounds a neighbourhood (and a request's member list).
	MaxMembers = 1024
	// MaxRecorded bounds the in-flight messages one channel record carries.
	MaxRecorded = 4096
	// MaxCN bounds checkpoint numbers: a number above it in a peer's
	// envelope or request is hostile (it would exhaust the number space)
	// and is ignored, so numbers never wrap.
	MaxCN = 1 << 62
)

// Config configures a Manager. The zero value of every optional field takes
// its documented default.
type Config struct {
	// Registry encodes and decodes the service's messages (recorded
	// in-flight messages travel encoded). Required.
	Registry *node.Registry
	// Interval is the period of checkpoint-number increments, each with a
	// checkpoint. Zero means DefaultInterval.
	Interval time.Duration
	// GatherInterval, when positive, makes the manager start a gather of its
	// neighbourhood every GatherInterval (the first one GatherInterval after
	// Start). Zero means gathers happen only when Gather is called.
	GatherInterval time.Duration
	// GatherOnChange makes a change of the neighbourhood since the last
	// gather start a new gather at once (checked after every core step; a
	// change during a gather always starts a new round).
	GatherOnChange bool
	// GatherTimeout bounds one gather round. Zero means
	// DefaultGatherTimeout.
	GatherTimeout time.Duration
	// RecordTimeout bounds how long an answer waits for its channels to
	// close. Zero means DefaultRecordTimeout.
	RecordTimeout time.Duration
	// MaxRounds bounds the rounds of a gather. Zero means DefaultMaxRounds.
	MaxRounds int
	// Quota is the storage quota in bytes for stored checkpoints and the
	// in-flight message log; the oldest checkpoints go first (the newest is
	// always kept). Zero means DefaultQuota.
	Quota int
	// RecentWindow and MaxRecentPeers shape the traffic-derived
	// neighbourhood. Zero means the defaults.
	RecentWindow   time.Duration
	MaxRecentPeers int
	// BandwidthBits, when positive, caps checkpoint answers at that many
	// bits per second (token bucket, Burst deep). Exceeding it gives a
	// negative answer.
	BandwidthBits float64
	// BandwidthFraction, when positive, caps checkpoint answer bytes at this
	// fraction of the service bytes the node sent (as reported to Sent);
	// the allowance saves up for at most Burst of the absolute cap or
	// 64 KiB, whichever is larger.
	BandwidthFraction float64
	// Burst is the depth of the bandwidth buckets. Zero means DefaultBurst.
	Burst time.Duration
	// DisableCompression sends checkpoints raw; DisableDelta compresses
	// without the per-peer base dictionary.
	DisableCompression bool
	DisableDelta       bool
	// MaxCheckpointSize caps a checkpoint (raw) in either direction. Zero
	// means DefaultMaxCheckpointSize.
	MaxCheckpointSize int
	// MaxPendingAnswers caps concurrently recorded answers. Zero means
	// DefaultMaxPendingAnswers.
	MaxPendingAnswers int
}

// DefaultConfig returns the values New gives a Config's zero fields (no
// Registry: it is required; no gathers of its own, no bandwidth cap).
func DefaultConfig() Config {
	return Config{
		Interval:          DefaultInterval,
		GatherTimeout:     DefaultGatherTimeout,
		RecordTimeout:     DefaultRecordTimeout,
		MaxRounds:         DefaultMaxRounds,
		Quota:             DefaultQuota,
		RecentWindow:      DefaultRecentWindow,
		MaxRecentPeers:    DefaultMaxRecentPeers,
		Burst:             DefaultBurst,
		MaxCheckpointSize: DefaultMaxCheckpointSize,
		MaxPendingAnswers: DefaultMaxPendingAnswers,
	}
}

func (c Config) withDefaults() (Config, error) {
	if c.Registry == nil {
		return c, errors.New("snapshot: Config.Registry is required")
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"Interval", c.Interval}, {"GatherInterval", c.GatherInterval}, {"GatherTimeout", c.GatherTimeout},
		{"RecordTimeout", c.RecordTimeout}, {"RecentWindow", c.RecentWindow}, {"Burst", c.Burst}} {
		if d.v < 0 {
			return c, fmt.Errorf("snapshot: Config.%s must not be negative, got %v", d.name, d.v)
		}
	}
	if c.MaxRounds < 0 || c.Quota < 0 || c.MaxRecentPeers < 0 || c.MaxCheckpointSize < 0 || c.MaxPendingAnswers < 0 {
		return c, errors.New("snapshot: Config counts and sizes must not be negative")
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"BandwidthBits", c.BandwidthBits}, {"BandwidthFraction", c.BandwidthFraction}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			return c, fmt.Errorf("snapshot: Config.%s must be a finite non-negative number, got %v", f.name, f.v)
		}
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.GatherTimeout == 0 {
		c.GatherTimeout = DefaultGatherTimeout
	}
	if c.RecordTimeout == 0 {
		c.RecordTimeout = DefaultRecordTimeout
	}
	if c.MaxRounds == 0 {
		c.MaxRounds = DefaultMaxRounds
	}
	if c.Quota == 0 {
		c.Quota = DefaultQuota
	}
	if c.RecentWindow == 0 {
		c.RecentWindow = DefaultRecentWindow
	}
	if c.MaxRecentPeers == 0 {
		c.MaxRecentPeers = DefaultMaxRecentPeers
	}
	if c.Burst == 0 {
		c.Burst = DefaultBurst
	}
	if c.MaxCheckpointSize == 0 {
		c.MaxCheckpointSize = DefaultMaxCheckpointSize
	}
	if c.MaxPendingAnswers == 0 {
		c.MaxPendingAnswers = DefaultMaxPendingAnswers
	}
	return c, nil
}
