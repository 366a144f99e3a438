package node

// Symmetric is an optional interface of a Service value (the one Spec.New
// returns) that declares nodes interchangeable, for symmetry reduction in
// the explorer (consequence.ActorOptions.Symmetry).
//
// Declaring a group G asserts that the system does not tell the members of
// G apart: for every permutation π of G (identity outside it), renaming the
// nodes of a reachable global state by π — node states moved to their new
// IDs, IDs inside every state and message renamed (RenamingService,
// RenamingMessage), channels, connections and timers moved — gives a
// reachable global state, whose successors are the renamed successors.
// That holds only if the service compares the IDs of G for equality alone
// (never orders them: no "lowest ID wins", no ballots tied by ID), derives
// nothing else from them (a value named after a node), and a member's
// behaviour does not depend on its random source (the explorer seeds each
// node's source from its ID, so the sources of two members always differ;
// the reduction ignores them). The calls a reset member gets from the
// explorer's workload must treat the members alike, and the properties
// checked must be symmetric in G: a property naming a member ("n2 learns")
// is not preserved. The start state need not be symmetric (it then merges
// less).
//
// The declaration is the service's promise; the explorer cannot verify it.
// A wrong one makes the search merge states that are not equivalent, and it
// may then miss violations.
type Symmetric interface {
	// SymmetryGroups returns disjoint groups of interchangeable nodes among
	// ids (the nodes of the system explored, ascending). A group with fewer
	// than two members, or holding IDs outside ids, is an error for the
	// explorer. It must be deterministic.
	SymmetryGroups(ids []ID) [][]ID
}

// RenamingService is a Service that can rename the node IDs it holds. A
// service declaring symmetry groups (Symmetric) must implement it unless its
// state holds no node IDs.
type RenamingService interface {
	Service
	// RenameIDs returns the service state with every node ID x it holds
	// replaced by rename(x), in the form the service would have built
	// itself (sets of IDs kept sorted, say), so that equal renamed states
	// encode equally, and whether that changed anything. It must not
	// modify the receiver; a changed state shares nothing mutable with it,
	// and an unchanged one may be the receiver itself (the explorer then
	// reuses its hash). rename is a bijection on IDs.
	RenameIDs(rename func(ID) ID) (Service, bool)
}

// RenamingMessage is a Message that can rename the node IDs it holds. A
// message of a service declaring symmetry groups that holds node IDs must
// implement it; one that does not is taken to hold none.
type RenamingMessage interface {
	Message
	// RenameIDs returns the message with every node ID x it holds replaced
	// by rename(x), without modifying the receiver, and whether that
	// changed anything (if not, the explorer reuses the message's hash
	// instead of encoding it again).
	RenameIDs(rename func(ID) ID) (Message, bool)
}
