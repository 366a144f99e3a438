package node

// AppCaller is an optional method of a Service: it declares the application
// calls that are possible for the node in its current state, so that the
// explorer (package consequence) can try them as events of the node, as it
// tries its timers and message deliveries. RandTree, for instance, declares
// JoinOverlay while a node is in its initial status and knows bootstrap
// targets.
//
// AppCalls must be deterministic and read-only: it runs outside handlers,
// on a service value other goroutines may read concurrently, and must return
// the same calls in the same order for equal states. The calls it returns
// must be registered messages and are handed to HandleApp; the caller may
// keep them, so they must not be modified afterwards. Returning nil means no
// call is possible; returning nil should not allocate.
type AppCaller interface {
	AppCalls(self ID) []Message
}

// Restarter is an optional method of a Service: it names the application
// calls the application layer issues to the node's next incarnation after
// the node resets, derived from the state the node had before the reset.
// It models an application that survives the service's state loss and
// remembers, say, its bootstrap list, so a reset node can rejoin (RandTree:
// JoinOverlay with the node's bootstrap targets). The explorer queues these
// calls for the reset node when it has no workload function of its own.
//
// RestartCalls has the same contract as AppCaller.AppCalls: deterministic,
// read-only, safe for concurrent readers, registered messages that are not
// modified afterwards.
type Restarter interface {
	RestartCalls(self ID) []Message
}
