// Package kv is a small replicated key-value store on etcd's raft library
// (go.etcd.io/raft/v3: a RawNode over its MemoryStorage), run under
// crystalball through the adapter for code one did not write
// (node/replayed): the store is an opaque object, its state the inputs it
// was given since its last durable point.
//
// Every node is a voter of one cluster (IDs 1..Options.Nodes) but the
// joiners (Options.Membership: the highest IDs, which a leader adds as
// learners and promotes to voters with ConfChangeV2 entries, one single
// change at a time), and runs raft as etcd's server does (DefaultOptions: PreVote,
// CheckQuorum, ReadIndex reads, etcd's tick, election and flow-control
// values, a snapshot every 10,000 entries). Every member ticks its
// RawNode on its own clock (raftClock): the timer "tick" fires at the
// ticks where raft acts on its own and the ticks between are handed to
// raft before the next input, so a node whose clock is skewed or jumps
// ticks accordingly. Raft draws its randomized election timeout from
// crypto/rand; the store replaces each draw with one from the node's
// Env.Rand, written into raft through reflection (raftInternals), so a
// run is a pure function of its seed and replays reproduce it. Ready is
// handled synchronously in every handler: HardState, entries and
// snapshot go to the MemoryStorage (the durable part, which a reset
// keeps), messages to the peers, and committed entries to the
// application. Raft's messages are declared unreliable (lost, duplicated,
// reordered), as raft assumes of its transport.
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
// safety, log matching, leader completeness, state-machine safety);
// the bounded properties LeaderWithin (whenever a quorum of members is
// up, a leader that a quorum follows within Options.LeaderBound, three
// rounds of the longest election timeout, 6 s by default: enough for a
// candidate refused for its log and a split vote before the round that
// elects) and WritesApplied (a write a node completed is applied by a
// quorum within Options.AppliedBound); and the history property
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
// index, log, a leader's view of its followers' progress (with the
// in-flight window and the commit index last sent), the votes a
// candidate has received, the application's state, and the unexported
// state of raft that decides what it does next (its counters and drawn
// timeout, a pending leader transfer, unconfirmed reads), read through
// raftInternals. A candidate's vote tally is mirrored from the vote
// responses the store steps. The raftInternals fields are checked by
// name and kind against the linked library when the first store is
// built; a version of raft without them is refused with an error naming
// the field.
package kv
