package node

// Neighborer is an optional method of a Service: it names the node's
// snapshot neighbourhood, the peers whose states matter for checking this
// node's properties (the paper's §3.1 "method that will return the list of
// neighbors"; RandTree's root, parent, children and siblings).
//
// Neighbors must be deterministic and read-only: it runs outside handlers,
// on the live service value, between events. It must not include self and
// should return each peer once; the caller does not retain the slice
// beyond the call. A service without it gets a neighbourhood from the
// peers it recently exchanged messages with.
type Neighborer interface {
	Neighbors(self ID) []ID
}
