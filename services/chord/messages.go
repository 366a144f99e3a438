package chord

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The messages are msgpack arrays (as_array): no field names on the wire or
// in a checkpoint. Field order is part of the wire format: append new
// fields, never reorder. Node lists in messages are untrusted input: the
// handlers read them, skipping None and the receiver itself, and keep at
// most Options.MaxSuccessors of them.

// FindPred asks for the predecessor of the identifier Key: every node that
// is not Key's predecessor passes it on to the closest node preceding Key
// it knows of, and the predecessor answers Who with a FindPredReply. A
// joining node sends it for its own identifier to its bootstrap; the
// fix-fingers timer sends it for a finger's start; the recovery timer sends
// it for the node's own identifier.
type FindPred struct {
	node.Named[FindPred]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Key is the identifier whose predecessor is wanted.
	Key uint64
	// Who is the node that asked; the reply goes to it, not to the
	// sender.
	Who node.ID
}

// String renders the message for traces: FindPred(key=3 who=n3).
func (m FindPred) String() string { return fmt.Sprintf("FindPred(key=%d who=%v)", m.Key, m.Who) }

// FindPredReply is the predecessor's answer to a FindPred: the sender is
// Key's predecessor and Successors is its successor list (its successor
// first; the sender itself when it is alone on its ring). A joining node
// takes the sender as its predecessor and the list as its successor list.
type FindPredReply struct {
	node.Named[FindPredReply]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Key echoes the identifier that was looked up.
	Key uint64
	// Successors is the sender's successor list, nearest first. The sender
	// never modifies it after sending.
	Successors []node.ID
}

// String renders the message for traces: FindPredReply(key=3 successors=[n3 n4]).
func (m FindPredReply) String() string {
	return fmt.Sprintf("FindPredReply(key=%d successors=%s)", m.Key, formatIDs(m.Successors))
}

// GetPred is the stabilize timer's query to the node's successor: "who is
// your predecessor?"
type GetPred struct {
	node.Named[GetPred]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (GetPred) String() string { return "GetPred" }

// GetPredReply answers a GetPred with the replier's predecessor and
// successor list. A node that takes a new predecessor also sends one,
// unasked, to its old predecessor, naming the new one.
type GetPredReply struct {
	node.Named[GetPredReply]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Pred is the sender's predecessor; None when it has none.
	Pred node.ID
	// Successors is the sender's successor list, nearest first.
	Successors []node.ID
}

// String renders the message for traces: GetPredReply(pred=n2 successors=[n3]).
func (m GetPredReply) String() string {
	return fmt.Sprintf("GetPredReply(pred=%v successors=%s)", m.Pred, formatIDs(m.Successors))
}

// UpdatePred tells the receiver that the sender may be its predecessor: a
// node that joined sends it to its successor, and stabilize sends it to a
// successor that does not name the node as its predecessor.
type UpdatePred struct {
	node.Named[UpdatePred]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (UpdatePred) String() string { return "UpdatePred" }

// JoinOverlay is the application call that makes a node in StatusInit join
// the ring through Bootstrap. A node whose bootstrap is itself (or None)
// forms a ring of its own. The call is ignored by a node that is joining or
// joined; after a reset the application (or the emulator) issues it again.
type JoinOverlay struct {
	node.Named[JoinOverlay]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Bootstrap is the node the FindPred for the joiner's identifier goes
	// to.
	Bootstrap node.ID
}

// String renders the call for traces: JoinOverlay(n1).
func (m JoinOverlay) String() string { return fmt.Sprintf("JoinOverlay(%v)", m.Bootstrap) }

// Messages returns a prototype of every message and application call of
// Chord, for node.NewRegistry and node.Spec.
func Messages() []node.Message {
	return []node.Message{FindPred{}, FindPredReply{}, GetPred{}, GetPredReply{}, UpdatePred{}, JoinOverlay{}}
}
