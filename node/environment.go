package node

// Arrival is a node that may join the system through the node that
// declares it (Environment): its ID and the application calls it runs,
// in order, once it has started (Init), such as a join naming the
// declaring node as its bootstrap.
type Arrival struct {
	// ID names the arriving node. It is never None nor the declaring node,
	// and should be an ID no current member of the declaring node's
	// neighbourhood has (the explorer ignores an arrival whose ID it
	// already holds).
	ID ID
	// Calls are the application calls the node runs after Init, in order:
	// registered messages, not modified afterwards.
	Calls []Message
}

// Environment is an optional method of a Service: it declares the nodes
// that may join the system through this node in its current state, so
// that the explorer can make them part of the future it explores from a
// snapshot (package steering adds a bounded number of them to each
// round's model). A snapshot holds only nodes that are members already;
// without its environment a round can never see, say, two nodes joining
// through the same node at once (Chord's Figure 11 in the CrystalBall
// paper).
//
// Arrivals must be deterministic and read-only, like AppCaller.AppCalls:
// it runs outside handlers on a decoded checkpoint, must return the same
// arrivals in the same order for equal states, and should not allocate
// when it returns nil. The most plausible arrivals come first, since the
// explorer keeps only the first few: a service that knows where joins
// land (the part of an identifier space a node answers for) should
// return IDs that would join there, so that what the explorer tries is
// what the deployed system can meet. An arrival's ID is hypothetical: the
// explorer starts a fresh service value with that ID, so messages
// addressed to it reach it only within the explored future.
type Environment interface {
	Arrivals(self ID) []Arrival
}
