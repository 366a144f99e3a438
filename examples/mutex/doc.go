// Package mutex is Ricart–Agrawala mutual exclusion written the way a new
// user writes a service from the README: correct under the fault model
// (resets with and without RST, broken connections), with no planted bug,
// and the stale view on which the immediate safety check takes an entry
// for a second node in the critical section.
//
// # The protocol
//
// Nodes 1..n. A node thinks for ThinkTime plus up to ThinkJitter, then
// asks every peer (Request, stamped with its Lamport clock); a peer
// replies at once (Reply) unless it is in the critical section or asks
// itself with a request that comes first (lower stamp, ties to the lower
// ID), in which case it defers the request until it leaves (or restarts).
// With every peer's reply the node enters for CSLength, then answers the
// requests it deferred and thinks again. A node that gets a transport
// error from a peer that has not replied sends that peer its request
// again RetryAfter later (the request or the reply may have been lost, a
// peer that was down may be back); replies carry their request's stamp,
// so a late one counts for nothing. The clock and the deferred requests
// are kept on disk (node.Durable): a restarted node stamps after every
// request it answered and still answers the requests it deferred (at
// once: its own request and its visit ended with the reset). Every other
// node is a neighbour.
//
// Properties: MutualExclusion (safety: at most one node in the critical
// section); EveryRequestGranted (bounded, GrantBound: a moment comes when
// no node waits — every request then pending has been granted).
// Breadth-first search from three nodes with a break and a reset (with or
// without RST) along a path finds no violation (mutex_test.go to depth
// 8; `check --breaks 1 --resets 1 --max-depth 14`, 427,125 states).
//
// # The stale view
//
// The last Reply's handler enters the critical section. The node's
// gathered view can hold the replier's checkpoint from while the replier
// was itself in the critical section, before it left and replied: there
// two nodes are inside and MutualExclusion fails, though the true state
// has one (testdata/stale-view.txt). The immediate safety check does not
// judge on that view: the Reply is stamped at or past the replier's
// checkpoint there, so the check leaves the replier out, and the
// requester enters. (A veto the check did give would break the
// connection for both nodes, whose recovery then runs: a requester whose
// connection breaks asks again.) bench/steerlive measures steering on it
// (docs/RESULTS.md).
//
// # Running it
//
// cmd/newcomer in package newcomer serves it as "mutex":
//
//	go run ./examples/newcomer/cmd/newcomer check --service mutex --nodes 3 --breaks 1 --resets 1 --max-depth 14
//	go run ./examples/newcomer/cmd/newcomer emulate --service mutex --nodes 5 --duration 10m --churn 1/m --breaks 2/m --immediate
package mutex
