package kv

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Options configure the store. DefaultOptions is the configuration etcd's
// server runs raft with; start from it. In the zero value every numeric
// field takes its default and every switch is off (raft.Config's own
// zero: no PreVote, no CheckQuorum, reads through the log).
type Options struct {
	// Nodes is how many nodes run the store (default 3): voters 1..Nodes
	// from the start, but for the joiners (Membership).
	Nodes int
	// ApplyCommitted corrects the planted bug: apply entries once they
	// are committed (Ready.CommittedEntries), not when they are appended
	// (Ready.Entries). It is off in DefaultOptions: the example ships its
	// bug.
	ApplyCommitted bool
	// Raft is the library's own configuration.
	Raft RaftOptions
	// Client is the node's client: its reads, writes and retries.
	Client ClientOptions
	// Snapshots is when the store compacts raft's log into a snapshot.
	Snapshots SnapshotOptions
	// Membership is the membership changes the cluster makes.
	Membership MembershipOptions
}

// RaftOptions are raft.Config's fields a deployment chooses, with the
// values etcd's server gives them. Every node ticks its RawNode on its own
// clock, one tick a Tick from the moment it starts, as etcd's raftNode
// does with its ticker.
type RaftOptions struct {
	// Tick is the time of one raft tick (default 100 ms, etcd's
	// --heartbeat-interval).
	Tick time.Duration
	// ElectionTick is raft's election timeout in ticks: a follower that
	// hears from no leader for a timeout drawn afresh from [ElectionTick,
	// 2×ElectionTick) ticks campaigns (default 10: etcd's
	// --election-timeout of 1 s). The draw comes from the node's Env.Rand,
	// not from crypto/rand as in the library (see raftInternals).
	ElectionTick int
	// HeartbeatTick is the leader's heartbeat interval in ticks (default 1).
	HeartbeatTick int
	// PreVote runs a pre-election before a node increments its term, so
	// that a node rejoining after a partition does not disrupt the
	// cluster (etcd: on).
	PreVote bool
	// CheckQuorum makes a leader step down when it has not heard from a
	// quorum within an election timeout, and a follower that heard from
	// its leader within one ignore vote requests (etcd: on).
	CheckQuorum bool
	// MaxSizePerMsg bounds the entries of one append message, in bytes
	// (default 1 MiB, etcd's maxSizePerMsg).
	MaxSizePerMsg uint64
	// MaxInflightMsgs bounds the append messages in flight to a follower
	// (default 512, etcd's maxInflightMsgs).
	MaxInflightMsgs int
	// MaxInflightBytes bounds the bytes of entries in flight to a
	// follower (default 0: no bound, as etcd).
	MaxInflightBytes uint64
	// MaxUncommittedEntriesSize bounds the leader's uncommitted entries,
	// in bytes (default 1 GiB, etcd's value).
	MaxUncommittedEntriesSize uint64
}

// ReadMode is how a node answers a Get.
type ReadMode int

const (
	// ReadsThroughLog proposes a Get as an entry and answers it when it
	// applies: linearizable, one log entry a read (the zero value).
	ReadsThroughLog ReadMode = iota
	// ReadIndex answers a Get after raft's ReadIndex has confirmed the
	// leader's commit index with a quorum and the node has applied up to
	// it (raft.ReadOnlySafe): etcd's linearizable reads.
	ReadIndex
	// ReadsLocal answers a Get from the node's applied map at once, as
	// etcd's serializable reads do: fast, and stale on a follower that is
	// behind or cut off from its leader (the history is then not
	// linearizable).
	ReadsLocal
)

// ClientOptions are the node's client.
type ClientOptions struct {
	// Reads is how a Get is answered (DefaultOptions: ReadIndex).
	Reads ReadMode
	// Retry is how often a node proposes again the write or read it has
	// not completed (default 1 s).
	Retry time.Duration
	// WriteEvery and Writes are the node's writer: once the node's calls
	// have all completed, it writes its key again WriteEvery later
	// (default 2 s), until it has made Writes calls in all (default 30;
	// the workload's Put and the application's Puts and Gets count). A
	// negative value of either: only the application's calls.
	WriteEvery time.Duration
	Writes     int
	// ReadsPerWrite is how many Gets the writer makes after each of its
	// Puts, each of another node's key in turn (default 0: the writer
	// only writes). Reads of keys other clients write are what a
	// linearizability check needs to see a stale read; each counts
	// against Writes.
	ReadsPerWrite int
}

// SnapshotOptions are when the store snapshots its map into raft's log
// and compacts the entries before it, as etcd's server does.
type SnapshotOptions struct {
	// Every snapshots once that many entries have applied since the last
	// snapshot (default 10,000, etcd's --snapshot-count; negative:
	// never).
	Every int
	// CatchUpEntries is how many entries before the snapshot the log
	// keeps, so that a follower slightly behind catches up from the log
	// rather than from a snapshot (default 5,000, etcd's
	// SnapshotCatchUpEntries; negative: none).
	CatchUpEntries int
}

// MembershipOptions are the membership changes the cluster makes, as an
// etcd operator does with `member add --learner` and `member promote`:
// ConfChangeV2 entries a leader proposes, one single change at a time.
type MembershipOptions struct {
	// Joiners is how many of the Nodes start outside the cluster: the
	// highest IDs, Nodes-Joiners+1..Nodes. A joiner starts with an empty
	// log and no configuration and takes no part until a leader adds it.
	// A leader adds the lowest joiner not yet a member as a learner once
	// it has applied JoinAt entries, and promotes it to voter once the
	// learner's log has caught up with the leader's commit index (raft's
	// Progress.Match); then the next joiner. Default 0: every node a
	// voter from the start; at most Nodes-1.
	Joiners int
	// JoinAt is the applied index from which a leader adds joiners
	// (default 8: after the first writes, so that a joiner catches up
	// through appends, or through a snapshot once the log is compacted).
	JoinAt uint64
}

// The defaults, each written once: DefaultOptions and withDefaults read
// them.
const (
	defaultNodes                     = 3
	defaultTick                      = 100 * time.Millisecond
	defaultElectionTick              = 10
	defaultHeartbeatTick             = 1
	defaultMaxSizePerMsg             = 1 << 20
	defaultMaxInflightMsgs           = 512
	defaultMaxUncommittedEntriesSize = 1 << 30
	defaultRetry                     = time.Second
	defaultWriteEvery                = 2 * time.Second
	defaultWrites                    = 30
	defaultSnapshotEvery             = 10_000
	defaultSnapshotCatchUp           = 5_000
	defaultJoinAt                    = 8
)

// DefaultOptions is the store as etcd's server runs raft: PreVote and
// CheckQuorum on, linearizable reads through ReadIndex, and the planted
// bug.
func DefaultOptions() Options {
	o, _ := Options{Raft: RaftOptions{PreVote: true, CheckQuorum: true}, Client: ClientOptions{Reads: ReadIndex}}.withDefaults()
	return o
}

// ErrOptions is what withDefaults wraps for options out of range.
var ErrOptions = errors.New("etcdkv: invalid options")

// withDefaults fills o's zero fields and checks it.
func (o Options) withDefaults() (Options, error) {
	setDefault(&o.Nodes, defaultNodes)
	r := &o.Raft
	setDefault(&r.Tick, defaultTick)
	setDefault(&r.ElectionTick, defaultElectionTick)
	setDefault(&r.HeartbeatTick, defaultHeartbeatTick)
	setDefault(&r.MaxSizePerMsg, defaultMaxSizePerMsg)
	setDefault(&r.MaxInflightMsgs, defaultMaxInflightMsgs)
	setDefault(&r.MaxUncommittedEntriesSize, defaultMaxUncommittedEntriesSize)
	c := &o.Client
	setDefault(&c.Retry, defaultRetry)
	setDefault(&c.WriteEvery, defaultWriteEvery)
	setDefault(&c.Writes, defaultWrites)
	setDefault(&o.Snapshots.Every, defaultSnapshotEvery)
	setDefault(&o.Snapshots.CatchUpEntries, defaultSnapshotCatchUp)
	setDefault(&o.Membership.JoinAt, defaultJoinAt)
	switch {
	case c.ReadsPerWrite < 0:
		return o, fmt.Errorf("%w: %d reads per write (want 0 or more)", ErrOptions, c.ReadsPerWrite)
	case o.Nodes < 1 || o.Nodes > 64:
		return o, fmt.Errorf("%w: %d nodes (want 1..64)", ErrOptions, o.Nodes)
	case r.Tick <= 0 || r.ElectionTick <= 0 || r.HeartbeatTick <= 0 || r.MaxInflightMsgs <= 0:
		return o, fmt.Errorf("%w: raft options must be positive: %+v", ErrOptions, *r)
	case r.HeartbeatTick >= r.ElectionTick:
		return o, fmt.Errorf("%w: HeartbeatTick %d must be below ElectionTick %d (raft's rule)", ErrOptions, r.HeartbeatTick, r.ElectionTick)
	case c.Retry <= 0:
		return o, fmt.Errorf("%w: Client.Retry %v must be positive", ErrOptions, c.Retry)
	case c.Reads < ReadsThroughLog || c.Reads > ReadsLocal:
		return o, fmt.Errorf("%w: unknown read mode %d", ErrOptions, c.Reads)
	case o.Membership.Joiners < 0 || o.Membership.Joiners >= o.Nodes:
		return o, fmt.Errorf("%w: %d joiners of %d nodes (want 0..%d: one voter at least starts the cluster)", ErrOptions, o.Membership.Joiners, o.Nodes, o.Nodes-1)
	}
	return o, nil
}

// setDefault sets a zero *v to d.
func setDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// initialVoters is how many nodes the cluster starts with: 1..that.
func (o Options) initialVoters() int { return o.Nodes - o.Membership.Joiners }

// electionTimeout is raft's election timeout as a duration.
func (o Options) electionTimeout() time.Duration {
	return time.Duration(o.Raft.ElectionTick) * o.Raft.Tick
}

// LeaderBound is the bound of the property LeaderWithin for the store
// configured with o: three election rounds of the longest randomized
// timeout, 3 × 2 × ElectionTick × Tick (6 s by default). A round starts
// at the latest when a follower's timer fires, under 2 × ElectionTick
// ticks after it last heard from a leader or granted a vote; a candidate
// whose log is as up to date as a quorum's wins it within a round trip
// of its (pre-)vote requests (milliseconds to a few hundred, against a
// timeout of a second). A round fails when its candidate's log is behind
// (it is refused, and a refuser's own timer, which the refusal did not
// restart, starts the next) or when two candidates time out within a
// message delay of each other and split the vote: the bound allows both
// in a row before the round that elects. Options that fail to validate
// are taken with their zero fields at the defaults.
func (o Options) LeaderBound() time.Duration {
	o, _ = o.withDefaults()
	return 3 * 2 * o.electionTimeout()
}

// MaxDelay is the longest one-way message delay the bounded properties
// assume: a quarter of the election timeout (ElectionTick × Tick / 4,
// 250 ms by default), so that a (pre-)vote round trip takes at most half
// the shortest randomized timeout. Raft's liveness rests on its broadcast
// time being well below the election timeout (the raft paper, section
// 5.6); with delays near the timeout elections can fail one after
// another and no bound holds. The explorer holds its timers for a
// message in flight longer than this (consequence.TimelyOptions), so a
// safety bug that needs a message held longer across timer firings is
// out of its reach.
func (o Options) MaxDelay() time.Duration {
	o, _ = o.withDefaults()
	return o.electionTimeout() / 4
}

// AppliedBound is the bound of the property WritesApplied: a write a
// client was told succeeded is applied by every member up within one
// LeaderBound (a member that was down or cut off catches up from the new
// leader's appends or snapshot once it hears from one) plus the client's
// retry period.
func (o Options) AppliedBound() time.Duration {
	o, _ = o.withDefaults()
	return o.LeaderBound() + o.Client.Retry
}

// Fixes are the store's corrections (what --fix selects).
var Fixes = node.Fixes[Options]{Service: "etcdkv", List: []node.Fix[Options]{
	{Name: "apply-committed", Field: func(o *Options) *bool { return &o.ApplyCommitted }},
}}

// String names the options in reports.
func (o Options) String() string {
	bug := "bug: apply-appended"
	if o.ApplyCommitted {
		bug = "apply-committed"
	}
	s := fmt.Sprintf("%s, prevote=%t, checkquorum=%t, reads=%s", bug, o.Raft.PreVote, o.Raft.CheckQuorum, o.Client.Reads)
	if o.Membership.Joiners > 0 {
		s += fmt.Sprintf(", joiners=%d", o.Membership.Joiners)
	}
	return s
}

// String names the read mode.
func (m ReadMode) String() string {
	switch m {
	case ReadIndex:
		return "readindex"
	case ReadsThroughLog:
		return "log"
	case ReadsLocal:
		return "local"
	}
	return fmt.Sprintf("ReadMode(%d)", int(m))
}
