// Package logship is the bug zoo's resets, with and without RST: a leader
// ships its log, entry by entry, to followers that trust the connection.
//
// # The protocol
//
// Node Leader appends an entry to its log every AppendEvery and ships
// every follower the entries it has not been sent (Entry, one per entry,
// FIFO on the connection); a follower appends them and acknowledges
// (Ack). A node joins as a follower once (the Join call: Hello with the
// length of its log); the leader keeps its log and its followers'
// progress on disk, so a follower that restarts, empty, simply waits for
// entries. When a connection breaks the leader ships again from the last
// acknowledged entry at the next append (what was in flight is lost), and
// so does a leader that restarts; a follower says Hello again.
//
// # The bug and its correction
//
// The planted bug: a follower appends whatever entry arrives, trusting the
// connection to bring each one once and in order. That holds for one
// connection, not for a new incarnation of the follower: after a reset
// with RST the leader, which has not yet seen the transport error or the
// new Hello, ships the next entry to the new, empty incarnation; after a
// silent reset (a power failure) entries in flight to the old incarnation
// reach the new one; after a broken connection the leader's next entry
// skips those the break lost. The follower's log then has a gap. The
// correction appends only the entry that continues the log, and answers
// one beyond it with Nack (what it has), from which the leader ships
// again.
//
// Safety: FollowerPrefix (every follower's log is a prefix of the
// leader's); liveness: FollowersCaughtUp.
//
// # What finds it
//
// From the initial state of the leader and one follower, breadth-first
// search finds FollowerPrefix violated at depth 8 with one reset with
// RST (the leader's; what a node sent before its reset is still
// delivered, as TCP and the emulator deliver it):
//
//	n1 timer append; n2 app Join; n1 deliver Hello from n2;
//	n2 deliver Entry from n1; n1 reset rst; n2 transport-error from n1;
//	n1 timer append; n2 deliver Entry from n1
//
// at depth 7 with one silent reset (in flight to the old incarnation,
// entry 2 reaches the new one):
//
//	n1 timer append; n1 timer append; n2 app Join; n1 deliver Hello from n2;
//	n2 deliver Entry from n1; n2 reset silent; n2 deliver Entry from n1
//
// at depth 7 with a silent reset as TCP makes it (Faults.StaleConnections:
// the leader resets and ships entry 1 again behind the old incarnation's
// copy, which the follower appends twice) and at depth 9 with one broken
// connection. The fixed twin has no violation within depth 12 under any
// of them. In emulation, churn of a follower shows the bug: five nodes
// with churn 1/min violate FollowerPrefix within three minutes for each of
// seeds 1–6 (seed 2 first, at 9 s).
package logship
