package kv

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Options configure the store. The zero value is the default (with the
// planted bug); Fixes names the correction.
type Options struct {
	// Nodes is the cluster's size: members 1..Nodes (default 3).
	Nodes int
	// ApplyCommitted corrects the planted bug: apply entries once they
	// are committed (Ready.CommittedEntries), not when they are appended
	// (Ready.Entries).
	ApplyCommitted bool
	// Heartbeat is the leader's tick, one heartbeat per tick (default
	// 100 ms).
	Heartbeat time.Duration
	// ElectionTimeout is how long a follower waits without hearing from a
	// leader before it campaigns, plus a jitter (default 1 s).
	ElectionTimeout time.Duration
	// ElectionJitter bounds the random part of the election timeout: a
	// node waits ElectionTimeout plus a jitter in [0, ElectionJitter],
	// whole milliseconds drawn from Env.Rand afresh each time it arms the
	// timer (default ElectionTimeout). Negative: none. The jitter is what
	// keeps candidates apart (the Raft paper, section 5.2): without it,
	// nodes that time out within a message delay of each other split the
	// vote in every term, and no leader is elected.
	ElectionJitter time.Duration
	// Retry is how often a node proposes again what it proposed and has
	// not applied (default 1 s).
	Retry time.Duration
	// WriteEvery and Writes are the node's client: once the node's calls
	// have all applied, it writes its key again WriteEvery later (default
	// 2 s), until it has made Writes calls through the log in all
	// (default 30; the workload's Put and the application's Puts and Gets
	// count). A negative value of either: only the application's calls.
	WriteEvery time.Duration
	Writes     int
	// CompactEvery compacts raft's log into a snapshot of the store every
	// that many applied entries (default 0: never).
	CompactEvery int
	// LocalReads answers a Get from the node's applied state at once, as
	// etcd's serializable reads do, instead of through the log (default
	// false). Such a read is fast and may be stale: a follower that is
	// behind, or cut off from the leader, returns a value the cluster
	// has overwritten, and the history is not linearizable.
	LocalReads bool
}

// DefaultOptions returns the defaults the zero Options stand for.
func DefaultOptions() Options {
	return Options{Nodes: 3, Heartbeat: 100 * time.Millisecond, ElectionTimeout: time.Second, Retry: time.Second, WriteEvery: 2 * time.Second, Writes: 30}
}

// withDefaults fills o's zero fields and checks it.
func (o Options) withDefaults() (Options, error) {
	d := DefaultOptions()
	if o.Nodes == 0 {
		o.Nodes = d.Nodes
	}
	if o.Heartbeat == 0 {
		o.Heartbeat = d.Heartbeat
	}
	if o.ElectionTimeout == 0 {
		o.ElectionTimeout = d.ElectionTimeout
	}
	if o.ElectionJitter == 0 {
		o.ElectionJitter = o.ElectionTimeout
	}
	if o.Retry == 0 {
		o.Retry = d.Retry
	}
	if o.WriteEvery == 0 {
		o.WriteEvery = d.WriteEvery
	}
	if o.Writes == 0 {
		o.Writes = d.Writes
	}
	switch {
	case o.Nodes < 1 || o.Nodes > 64:
		return o, fmt.Errorf("etcdkv: %d nodes (want 1..64)", o.Nodes)
	case o.Heartbeat <= 0 || o.ElectionTimeout <= 0 || o.Retry <= 0 || o.CompactEvery < 0:
		return o, fmt.Errorf("etcdkv: negative option in %+v", o)
	}
	return o, nil
}

// electionRound is the longest one round of an election takes to start:
// a follower's election timeout with its largest jitter.
func (o Options) electionRound() time.Duration {
	return o.ElectionTimeout + max(o.ElectionJitter, 0)
}

// LeaderBound is the bound of the property LeaderWithin for the store
// configured with o: three election rounds, 3 × (ElectionTimeout +
// ElectionJitter) (6 s by default). A round starts at the latest when a
// follower's timer fires, ElectionTimeout + ElectionJitter after it last
// heard from a leader or granted a vote; a candidate whose log is as up to
// date as a quorum's wins it within a round trip of its vote requests
// (milliseconds to a few hundred, against a timeout of a second). A round
// fails when its candidate's log is behind (it is refused, and a refuser's
// own timer, which the refusal did not restart, starts the next) or when
// two candidates time out within a message delay of each other and split
// the vote (the jitter makes that rare): the bound allows both in a row
// before the round that elects. Options that fail to validate are taken
// with their zero fields at the defaults.
func (o Options) LeaderBound() time.Duration {
	o, _ = o.withDefaults()
	return 3 * o.electionRound()
}

// Fixes are the store's corrections (what --fix selects).
var Fixes = node.Fixes[Options]{Service: "etcdkv", List: []node.Fix[Options]{
	{Name: "apply-committed", Field: func(o *Options) *bool { return &o.ApplyCommitted }},
}}

// String names the options in reports.
func (o Options) String() string {
	if o.ApplyCommitted {
		return "apply-committed"
	}
	return "bug: apply-appended"
}
