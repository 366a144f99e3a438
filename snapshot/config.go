package snapshot

import (
	"cmp"
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
	// DefaultGatherSettle is how long after a start or a change of the
	// neighbourhood a node with periodic gathers gathers by default
	// (Config.GatherSettle): long enough for a join's reply to arrive on
	// a wide-area link (a few round trips of 50–150 ms), short against the
	// 300 ms to seconds that a join or a restart leaves a race open.
	DefaultGatherSettle = 500 * time.Millisecond
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
	// DefaultCNWindow is how far above its own checkpoint number a peer's
	// number may be for the node to adopt it (see Config.CNWindow). Honest
	// numbers grow only by increments: at most one per node per Interval
	// and MaxRounds per gather, which every node repeats and spreads by
	// adoption. Even a thousand nodes each gathering every second through
	// all four rounds, beside their periodic increments, add about 4,100 a
	// second, so two nodes that hear from each other within four minutes
	// (far beyond GatherTimeout, RecordTimeout and resetQuiet) stay within
	// 2^20 of each other; at the default Interval, a thousand nodes each
	// gathering once per Interval in one round take an hour and a half to
	// add as much. A hostile
	// peer, pushing the number by at most the window per message, needs
	// 2^42 messages to exhaust the number space (MaxCN). A node restarted
	// from number 0 further behind than that catches up through two
	// distinct peers (see Config.CNWindow).
	DefaultCNWindow = 1 << 20
)

// Wire bounds checked by DecodeResponse and the request handler before
// anything is allocated from a peer's numbers.
const (
	// MaxMembers bounds a neighbourhood (and a request's member list).
	MaxMembers = 1024
	// MaxRecordedPeers caps the peers a checkpoint answer names
	// (NodeCheckpoint.Peers): the most recent ones when a node has more.
	MaxRecordedPeers = 64
	// MaxRecorded bounds the in-flight messages one channel record carries.
	MaxRecorded = 4096
	// MaxCN bounds checkpoint numbers: a number above it in a peer's
	// envelope or request is hostile and is ignored (counted in
	// Stats.BadMessages too), and a node's own number stops at it, so
	// numbers never wrap. Config.CNWindow keeps a peer from pushing a
	// node there.
	MaxCN = 1 << 62
)

// Config configures a Manager: its service and checkpoint period at the
// top, then one group per concern (gathers, bandwidth, limits), each with
// its own validation and defaults. The groups are embedded, so their
// fields read as the Config's own (c.GatherInterval is
// c.GatherConfig.GatherInterval). The zero value of every optional field
// takes its documented default; DefaultConfig returns them all.
type Config struct {
	// Registry encodes and decodes the service's messages (recorded
	// in-flight messages travel encoded). Required.
	Registry *node.Registry
	// Interval is the period of checkpoint-number increments, each with a
	// checkpoint. Zero means DefaultInterval.
	Interval time.Duration
	// Quota is the storage quota in bytes for stored checkpoints and the
	// in-flight message log; the oldest checkpoints go first (the newest is
	// always kept). Zero means DefaultQuota.
	Quota int
	// RecentWindow and MaxRecentPeers shape the traffic-derived
	// neighbourhood. Zero means DefaultRecentWindow and
	// DefaultMaxRecentPeers.
	RecentWindow   time.Duration
	MaxRecentPeers int
	// GatherConfig is when and how widely the manager gathers.
	GatherConfig
	// BandwidthConfig caps and compresses the checkpoints it sends.
	BandwidthConfig
	// LimitsConfig bounds what one peer may make the manager hold or adopt.
	LimitsConfig
}

// GatherConfig is when a manager gathers its neighbourhood, how widely,
// and how long a gather may take.
type GatherConfig struct {
	// GatherInterval, when positive, makes the manager start a gather of its
	// neighbourhood every GatherInterval (the first one GatherInterval after
	// Start). Zero means gathers happen only when Gather is called.
	GatherInterval time.Duration
	// GatherOnChange makes a change of the neighbourhood since the last
	// gather start a new gather at once (checked after every core step; a
	// change during a gather always starts a new round).
	GatherOnChange bool
	// SecondHop, when positive, widens every gather to the neighbours'
	// neighbours: besides the neighbourhood (and Include's peers), up to
	// SecondHop of the peers that the last snapshot's first-hop members
	// recorded (NodeCheckpoint.Peers), those named by the most members
	// first, then by ascending ID. A property about nodes that never
	// exchange messages with each other (a quorum's replicas, seen from
	// one replica or from a client whose traffic has gone quiet; the
	// members of a 2PC seen from one participant) cannot be judged from a
	// one-hop neighbourhood; with the second hop it can. The set is taken
	// from each completed snapshot and reaches no further: the second
	// hop's own peers are not followed. A change of the set starts a
	// gather as a change of the neighbourhood does. Zero (the default)
	// keeps the paper's one-hop neighbourhood; negative is an error.
	SecondHop int
	// GatherSettle is the no-blind-start rule of periodic gathers (a
	// positive GatherInterval): the first gather comes GatherSettle after
	// Start (and after a Reset), not a whole GatherInterval later, and a
	// change of the neighbourhood since the last gather (a join, a new
	// child, a member gone) starts one GatherSettle after it was first
	// seen; changes within that time coalesce into one gather, so a
	// neighbourhood in flux gathers at most once per GatherSettle for its
	// changes. A node that waited a whole period could neither predict nor
	// check anything that happened before its first snapshot, and the
	// first moments after a start, a join or a neighbour's reset are when
	// the races steering is for happen. A gather for any reason restarts
	// the period. Zero means DefaultGatherSettle; negative turns the rule
	// off (the first gather a GatherInterval after Start, none on a change
	// unless GatherOnChange). Without a GatherInterval it does nothing.
	GatherSettle time.Duration
	// GatherTimeout bounds one gather round. Zero means
	// DefaultGatherTimeout.
	GatherTimeout time.Duration
	// RecordTimeout bounds how long an answer waits for its channels to
	// close. Zero means DefaultRecordTimeout.
	RecordTimeout time.Duration
	// MaxRounds bounds the rounds of a gather. Zero means DefaultMaxRounds.
	MaxRounds int
	// FinishLastRound makes a change of the neighbourhood during the last
	// of MaxRounds rounds no reason to give the gather up: that round
	// finishes with the members it asked, a consistent cut of them that
	// misses only the newest neighbours. It is for neighbourhoods that
	// change faster than a round lasts (Bullet′'s peering, where every
	// protocol message waits seconds behind blocks at a 1 Mb/s uplink),
	// which would otherwise fail nearly every gather. False (the default)
	// gives the gather up.
	FinishLastRound bool
}

// BandwidthConfig caps and compresses the checkpoint answers a manager
// sends.
type BandwidthConfig struct {
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
}

// LimitsConfig bounds what one peer may make a manager hold or adopt.
type LimitsConfig struct {
	// MaxCheckpointSize caps a checkpoint (raw) in either direction. Zero
	// means DefaultMaxCheckpointSize.
	MaxCheckpointSize int
	// MaxPendingAnswers caps concurrently recorded answers. Zero means
	// DefaultMaxPendingAnswers.
	MaxPendingAnswers int
	// CNWindow bounds how far a checkpoint number carried by a peer (its
	// envelope's CN, a Request's cut, a Negative's number) may lie above
	// this node's number for the node to adopt it. A number beyond the
	// window is never adopted from one peer: the message is still handled
	// (a service message still reaches the service: dropping it would let
	// one bad number silence a peer, and refusing its number is what
	// protects the cluster), as if it carried this node's own number, and
	// counted in Stats.CNRejected; a protocol message that asks for a cut
	// beyond it is ignored. Only when two distinct peers both carry numbers
	// beyond the window (a node restarted from 0 far behind its cluster)
	// does the node catch up, to the smaller of the two largest such
	// numbers, and count it in Stats.CNCaughtUp; one hostile peer alone
	// cannot move it. Peers are distinct when their witnesses are: a
	// Source that is a WitnessHost vouches for peers (the live runtime's
	// layer host does), and a peer it does not vouch for claims nothing
	// (counted in Stats.CNUnvouched); any other Source vouches for every
	// peer by its ID (the emulator, where IDs are not forged). Within
	// the window, what the node adopts from one witness (and from all the
	// peers without one together) is rate-limited to CNWindow numbers
	// per Interval; a number past that limit is handled at it
	// (Stats.CNLimited). A Request for a cut beyond the window (or the
	// limit) is refused with a Negative (ReasonWindow) carrying the
	// node's number, and a gatherer whose answering members all refuse
	// so, each more than a window below its cut, rebases: it moves its
	// number back to theirs (Stats.Rebased), as a restarted process
	// would, so that a node pushed ahead recovers without a restart.
	// Zero means DefaultCNWindow; negative is an error.
	CNWindow int64
}

// DefaultConfig returns the values New gives a Config's zero fields (no
// Registry: it is required; no gathers of its own, no bandwidth cap).
func DefaultConfig() Config {
	c, err := Config{}.groupDefaults()
	if err != nil {
		panic(fmt.Sprintf("snapshot: the zero Config's groups are invalid: %v", err)) // a broken invariant of this package
	}
	return c
}

func (c Config) withDefaults() (Config, error) {
	if c.Registry == nil {
		return c, errors.New("snapshot: Config.Registry is required")
	}
	return c.groupDefaults()
}

// groupDefaults validates every field but the Registry and fills in the
// defaults.
func (c Config) groupDefaults() (Config, error) {
	if err := nonNegative(duration{"Interval", c.Interval}, duration{"RecentWindow", c.RecentWindow}); err != nil {
		return c, err
	}
	if c.Quota < 0 || c.MaxRecentPeers < 0 {
		return c, fmt.Errorf("snapshot: Config.Quota (%d) and MaxRecentPeers (%d) must not be negative", c.Quota, c.MaxRecentPeers)
	}
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.Quota = cmp.Or(c.Quota, DefaultQuota)
	c.RecentWindow = cmp.Or(c.RecentWindow, DefaultRecentWindow)
	c.MaxRecentPeers = cmp.Or(c.MaxRecentPeers, DefaultMaxRecentPeers)
	var err error
	if c.GatherConfig, err = c.GatherConfig.withDefaults(); err != nil {
		return c, err
	}
	if c.BandwidthConfig, err = c.BandwidthConfig.withDefaults(); err != nil {
		return c, err
	}
	c.LimitsConfig, err = c.LimitsConfig.withDefaults()
	return c, err
}

func (g GatherConfig) withDefaults() (GatherConfig, error) {
	if err := nonNegative(duration{"GatherInterval", g.GatherInterval}, duration{"GatherTimeout", g.GatherTimeout}, duration{"RecordTimeout", g.RecordTimeout}); err != nil {
		return g, err
	}
	if g.MaxRounds < 0 || g.SecondHop < 0 {
		return g, fmt.Errorf("snapshot: Config.MaxRounds (%d) and SecondHop (%d) must not be negative", g.MaxRounds, g.SecondHop)
	}
	g.GatherTimeout = cmp.Or(g.GatherTimeout, DefaultGatherTimeout)
	g.RecordTimeout = cmp.Or(g.RecordTimeout, DefaultRecordTimeout)
	g.MaxRounds = cmp.Or(g.MaxRounds, DefaultMaxRounds)
	g.GatherSettle = cmp.Or(g.GatherSettle, DefaultGatherSettle)
	return g, nil
}

func (b BandwidthConfig) withDefaults() (BandwidthConfig, error) {
	if err := nonNegative(duration{"Burst", b.Burst}); err != nil {
		return b, err
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"BandwidthBits", b.BandwidthBits}, {"BandwidthFraction", b.BandwidthFraction}} {
		if !(f.v >= 0 && f.v <= math.MaxFloat64) { // NaN fails both
			return b, fmt.Errorf("snapshot: Config.%s must be a finite non-negative number, got %v", f.name, f.v)
		}
	}
	b.Burst = cmp.Or(b.Burst, DefaultBurst)
	return b, nil
}

func (l LimitsConfig) withDefaults() (LimitsConfig, error) {
	if l.MaxCheckpointSize < 0 || l.MaxPendingAnswers < 0 {
		return l, fmt.Errorf("snapshot: Config.MaxCheckpointSize (%d) and MaxPendingAnswers (%d) must not be negative", l.MaxCheckpointSize, l.MaxPendingAnswers)
	}
	if l.CNWindow < 0 {
		return l, fmt.Errorf("snapshot: Config.CNWindow must not be negative, got %d", l.CNWindow)
	}
	l.MaxCheckpointSize = cmp.Or(l.MaxCheckpointSize, DefaultMaxCheckpointSize)
	l.MaxPendingAnswers = cmp.Or(l.MaxPendingAnswers, DefaultMaxPendingAnswers)
	l.CNWindow = cmp.Or(l.CNWindow, DefaultCNWindow)
	return l, nil
}

// duration is a duration field of Config, by name, for nonNegative.
type duration struct {
	name string
	v    time.Duration
}

// nonNegative is an error for the first negative one of ds.
func nonNegative(ds ...duration) error {
	for _, d := range ds {
		if d.v < 0 {
			return fmt.Errorf("snapshot: Config.%s must not be negative, got %v", d.name, d.v)
		}
	}
	return nil
}
