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
	// leader before it campaigns, plus a jitter in [0, ElectionTimeout)
	// drawn from Env.Rand (default 1 s).
	ElectionTimeout time.Duration
	// Retry is how often a node proposes again what it proposed and has
	// not applied (default 1 s).
	Retry time.Duration
	// WriteEvery and Writes are the node's client: after each of its
	// writes applies, it writes its key again WriteEvery later (default
	// 2 s), until it has written Writes times in all (default 30; the
	// workload's Put counts). A negative value of either: only the
	// workload's writes.
	WriteEvery time.Duration
	Writes     int
	// CompactEvery compacts raft's log into a snapshot of the store every
	// that many applied entries (default 0: never).
	CompactEvery int
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
