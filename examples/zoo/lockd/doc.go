// Package lockd is the bug zoo's broken connection: a lock server that
// takes a transport error for a crash.
//
// # The protocol
//
// Node Server grants one lock; every other node is a client. A client
// that wants the lock (the Acquire call) sends Request; the server grants
// it (Grant) when the lock is free, or when the holder itself asks again
// (it restarted, or a broken connection lost its Grant), and queues the
// others, first come first served. A client holds the lock for HoldFor,
// gives it back (Release) and asks again AcquireAgain later. The server
// keeps its holder and queue on disk. A client whose connection to the
// server breaks sends its Request or Release again; a holder keeps the
// lock.
//
// # The bug and its correction
//
// The planted bug: on a transport error about the holder, the server
// assumes the holder crashed and passes the lock on. A broken connection
// is not a crash: the holder is alive and still holds the lock while the
// next client gets it. (A crash needs no such rule: a restarted client
// asks again, which frees its lock.) The correction leaves the lock with
// its holder until it releases it or asks again.
//
// Safety: MutualExclusion (at most one client holds the lock); liveness:
// ClientsServed.
//
// # What finds it
//
// One broken connection. From the initial state of the server and two
// clients, breadth-first search finds MutualExclusion violated at depth 8:
//
//	n2 app Acquire; n1 deliver Request from n2; n2 deliver Grant from n1;
//	n3 app Acquire; n1 deliver Request from n3; n1 break n2;
//	n1 transport-error from n2; n3 deliver Grant from n1
//
// Resets alone, with or without RST, do not show it (a reset client holds
// nothing). The fixed twin has no violation within depth 14, with a break
// or with a reset and a break. In emulation, five nodes with connections
// broken at 4/min between random pairs violate MutualExclusion within
// three minutes for three of seeds 1–6 (seed 2 first, at 22 s): the break
// must hit the server and the holder.
package lockd
