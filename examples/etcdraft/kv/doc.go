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
// it.
//
// Each node is a client of the store: the application calls Put and Get
// (HandleApp), and a node writes its own key again every
// Options.WriteEvery. A call is a client operation, marked node.Invoke
// when it arrives and node.Respond when the node has applied the entry
// that carries it (a Get's result is the value then), so that the order
// of the log is the order of the operations; with Options.LocalReads a
// Get is answered from the node's applied map at once instead, as etcd's
// serializable reads are, and may be stale. A node's calls are queued and
// proposed one at a time, and a proposal committed twice (a retry whose
// original also made it) applies once.
//
// The properties (Properties) are the Raft paper's (Figure 3: election
// safety, log matching, leader completeness, state-machine safety); two
// liveness properties (a leader, and every proposal applied everywhere);
// the bounded property LeaderWithin: whenever a quorum of members is up,
// a leader that a quorum follows within Options.LeaderBound, three
// election rounds of ElectionTimeout plus its jitter (6 s by default:
// enough for a candidate refused for its log and a split vote before the
// round that elects; see LeaderBound); and the history property
// Linearizable: the Puts and Gets are linearizable against a map of
// registers (Model, checked by Porcupine through node/linearizable). A
// view does not say which nodes can reach each other, so LeaderWithin
// also fails under a partition that leaves no quorum connected; and
// raft elects a leader in time only when messages take much less than
// the election timeout (the Raft paper's timing requirement), which a
// search that lets a message take up to consequence.TimelyOptions.MaxDelay
// (1 s by default, the default election timeout) does not grant: a path
// that holds every vote request until the other nodes have timed out
// splits the vote round after round. Declaring both kinds makes the
// explorer keep each path's history and the bounded obligation in its
// states, and deliver every message within that delay.
//
// What a node exposes (Observation) is its HardState, SoftState, applied
// index, log, a leader's view of its followers' progress, the votes a
// candidate has received, and the application's state. Two of raft's
// fields are not exported and decide what it does next: a candidate's
// vote tally (mirrored from the vote responses the store steps) and a
// follower's commit index last sent by the leader (read through
// tracker.Progress.CanBumpCommit).
package kv
