// Package retry is the bug zoo's timer race: a quorum lock whose clients
// retry an attempt that got no quorum in time.
//
// # The protocol
//
// Nodes 1..Replicas are lock replicas; every other node is a client. A
// replica gives its vote (Holder, kept on disk) to the first client whose
// Lock reaches it and answers Granted, or Denied while another client has
// it; Unlock takes the vote back. A client that wants the lock (the
// Acquire call) sends Lock to every replica and arms the "retry" timer.
// With grants from a majority of distinct replicas it holds the lock for
// HoldFor, then unlocks every replica and asks again AcquireAgain later.
// When "retry" fires first, the client gives back the votes its attempt
// got (Unlock to those replicas only: the others may have voted for a
// rival) and starts a new attempt.
//
// # The bug and its correction
//
// The planted bug: attempts are not numbered, so a Granted still in
// flight from an earlier attempt is counted for the current one. A
// replica that granted twice (once per attempt) and was unlocked by the
// second retry still has an old Granted on its way: the client counts it
// and holds the lock with a vote that is gone. The correction numbers the
// attempts (Lock and Granted carry Attempt) and counts only grants of the
// current one.
//
// Safety: LockBacked (a client holding the lock has the vote of a majority
// of the replicas) and MutualExclusion (at most one client holds it, which
// the bug breaks with two clients); liveness: ClientsServed.
//
// # What finds it
//
// No fault is needed: only the retry timer firing twice while grants are
// in flight. From the initial state of three replicas and one client (n4),
// breadth-first search finds LockBacked violated at depth 10:
//
//	n4 app Acquire; n1 deliver Lock; n2 deliver Lock; n4 timer retry;
//	n4 deliver Granted from n1; n1 deliver Lock; n4 timer retry;
//	n4 deliver Granted from n1; n4 deliver Granted from n2;
//	n1 deliver Unlock
//
// The second retry fires in a local state of n4 (one grant, from n1) that
// n4 was already in before its first retry, so consequence prediction,
// which expands a node's timers only the first time it meets the node's
// local state, prunes it: from the same start it finds the bug only at
// depth 14, through a longer path. The fixed twin has no violation within
// depth 16. In emulation RetryAfter (100 ms) is shorter than many round
// trips: six nodes without faults violate LockBacked within three minutes
// for five of seeds 1–6 (seed 4 first, at 8 s).
package retry
