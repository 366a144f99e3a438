// Package viewstate reads one service's state out of a node.View: Of
// returns a node's state as the service's own type, or nil when the view
// does not hold the node or holds another service there. It is what every
// service's property checks and Summarize start from.
//
// The contract: Of only reads the view — it starts no goroutine, keeps
// nothing, allocates nothing and has no effect but the one call to
// v.Service, so a check built on it is as deterministic as the view.
//
// The package is internal to services: production code of the services
// may import it, nothing outside services can.
package viewstate
