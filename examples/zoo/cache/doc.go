// Package cache is the bug zoo's cross-node reordering: an invalidation
// cache whose copies come from one node and whose invalidations from
// another.
//
// # The protocol
//
// Node Origin owns a value and writes a new version of it every
// WriteMin–WriteMin+WriteJitter: it stores the version at node Mirror
// (Store) and invalidates every subscribed cache (Invalidate with the new
// version). Every other node is a cache: it subscribes to the origin,
// fetches its copy from the mirror (Fetch, answered by Data with the
// mirror's version), refreshes it every RefreshEvery, and on an
// invalidation newer than its copy marks it invalid and fetches again.
// The origin and the mirror keep their versions on disk.
//
// # The bug and its correction
//
// The planted bug: a cache takes every Data. But the mirror may answer a
// Fetch before the Store of a new version reaches it, while the origin's
// Invalidate of that version overtakes the mirror's answer on its way to
// the cache: two senders, one receiver, no order between them. The cache
// then serves, as valid, a version older than an invalidation it has
// processed. The correction refuses Data older than the newest
// invalidation seen and fetches again.
//
// Safety: NoStaleRead (a valid copy is never older than an invalidation
// the cache processed); liveness: CachesFresh (eventually every cache
// serves the origin's version).
//
// # What finds it
//
// No fault: only the reordering. From the initial state of the origin,
// the mirror and one cache (n3), breadth-first search finds NoStaleRead
// violated at depth 5:
//
//	n1 deliver Subscribe from n3; n2 deliver Fetch from n3; n1 timer write;
//	n3 deliver Invalidate from n1; n3 deliver Data from n2
//
// Consequence prediction finds it at the same depth. The fixed twin has
// no violation within depth 12. In emulation six nodes without faults
// violate NoStaleRead within 12 s for each of seeds 1–6.
package cache
