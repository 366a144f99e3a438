// Package kv is a small replicated key-value store on etcd's raft library
// (go.etcd.io/raft/v3: a RawNode over its MemoryStorage), run under
// crystalball through the adapter for code one did not write
// (node/replayed): the store is an opaque object, its state the inputs it
// was given since its last durable point.
//
// Every node is a voter of one static cluster (IDs 1..Options.Nodes).
// The library's own election timeout, randomized from crypto/rand inside
// it, is kept out of the way by configuration (an ElectionTick of 2^30,
// no CheckQuorum, no PreVote): crystalball timers drive elections instead
// (the "election" timer calls Campaign, its jitter drawn from Env.Rand),
// and only a leader ticks (the "tick" timer, one heartbeat a tick), so a
// run is a pure function of its seed. Ready is handled synchronously in
// every handler: HardState, entries and snapshot go to the MemoryStorage
// (the durable part, which a reset keeps), messages to the peers, and
// committed entries to the application.
//
// The application has a planted bug: it applies entries when they are
// appended to the log, not when they are committed, so a leader that
// loses its term has applied entries the cluster never committed.
// Options.ApplyCommitted (--fix apply-committed, or --fix all) corrects
// it. The properties are the Raft paper's (Figure 3: election safety, log
// matching, leader completeness, state-machine safety) and two liveness
// properties (a leader, and every proposal applied everywhere).
//
// What a node exposes (Observation) is its HardState, SoftState, applied
// index, log, a leader's view of its followers' progress, the votes a
// candidate has received, and the application's state. Two of raft's
// fields are not exported and decide what it does next: a candidate's
// vote tally (mirrored from the vote responses the store steps) and a
// follower's commit index last sent by the leader (read through
// tracker.Progress.CanBumpCommit).
package kv
