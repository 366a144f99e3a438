package pastry

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The messages are msgpack arrays (as_array): no field names on the wire or
// in a checkpoint. Field order is part of the wire format: append new
// fields, never reorder. Every message travels as a datagram
// (node.Env.SendDatagram; see the package documentation, "Transport").
// Node lists in messages are untrusted input: the handlers read at most
// as many entries as a correct node sends, skip None and the receiver
// itself, and keep only what fits the leaf set and table.

// Join is a joining node's request, routed by prefix and leaf set toward
// the node numerically closest to the joiner's identifier. Each hop adds
// itself and the routing-table row the joiner can use (the row of the
// prefix they share) to Seen, as FreePastry's JoinRequest carries the rows
// collected along the route; the closest node answers with a JoinReply.
type Join struct {
	node.Named[Join]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Joiner is the node that wants to join; the reply goes to it.
	Joiner node.ID
	// Hops counts the nodes that forwarded the Join; a Join forwarded as
	// many times as the identifier has digits plus the leaf set size plus
	// one is dropped, so that inconsistent tables cannot loop it forever.
	Hops int
	// Seen holds the nodes of the route and of their rows, ascending.
	Seen []node.ID
}

// String renders the message for traces: Join(n3 hops=1 seen=[n1]).
func (m Join) String() string {
	return fmt.Sprintf("Join(%v hops=%d seen=%s)", m.Joiner, m.Hops, formatIDs(m.Seen))
}

// JoinReply is the answer of the node numerically closest to the joiner:
// its leaf set with itself, and the nodes the route saw. The joiner builds
// its leaf set and routing table from them and becomes joined.
type JoinReply struct {
	node.Named[JoinReply]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Leaves is the replier and its leaf set, ascending.
	Leaves []node.ID
	// Seen is the Join's Seen.
	Seen []node.ID
}

// String renders the message for traces: JoinReply(leaves=[n1 n2] seen=[n1]).
func (m JoinReply) String() string {
	return fmt.Sprintf("JoinReply(leaves=%s seen=%s)", formatIDs(m.Leaves), formatIDs(m.Seen))
}

// Announce tells the receiver that the sender is a joined node, gives it
// the sender's leaf set and asks for the receiver's. A node sends it to
// every node it knows when it has joined; to every node it hears of (in
// another node's list, or probing it) that it does not know and would take
// in; and, to repair its leaf set after a purge, to the farthest remaining
// leaf on the side that lost a node. A node takes another into its leaf
// set and table only on that node's own Announce or LeafSet (or, when
// joining, from the JoinReply), never on hearsay, so a list naming a dead
// node does not bring it back.
type Announce struct {
	node.Named[Announce]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Leaves is the sender's leaf set, ascending.
	Leaves []node.ID
}

// String renders the message for traces: Announce([n1 n2]).
func (m Announce) String() string { return "Announce(" + formatIDs(m.Leaves) + ")" }

// LeafSet answers an Announce with the replier's leaf set.
type LeafSet struct {
	node.Named[LeafSet]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Leaves is the replier's leaf set, ascending.
	Leaves []node.ID
}

// String renders the message for traces: LeafSet([n1 n2]).
func (m LeafSet) String() string { return "LeafSet(" + formatIDs(m.Leaves) + ")" }

// Probe is the failure detector's heartbeat: "are you there?" A node whose
// overlay has been started (joining or joined) answers it with a
// ProbeReply, whether or not it has joined. It carries the prober's leaf
// set, Pastry's periodic leaf-set exchange: a joined receiver announces
// itself to the nodes of the list it would take in.
type Probe struct {
	node.Named[Probe]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Leaves is the prober's leaf set, ascending.
	Leaves []node.ID
}

// String renders the message for traces: Probe([n1 n2]).
func (m Probe) String() string { return "Probe(" + formatIDs(m.Leaves) + ")" }

// ProbeReply answers a Probe: the sender is alive.
type ProbeReply struct {
	node.Named[ProbeReply]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (ProbeReply) String() string { return "ProbeReply" }

// JoinOverlay is the application call that starts a node in StatusInit:
// it joins the overlay through Bootstrap, or forms an overlay of its own
// when Bootstrap is itself or None. The call is ignored by a node that is
// joining or joined; after a reset the application issues it again.
type JoinOverlay struct {
	node.Named[JoinOverlay]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Bootstrap is the node the joiner's Join goes to.
	Bootstrap node.ID
}

// String renders the call for traces: JoinOverlay(n1).
func (m JoinOverlay) String() string { return fmt.Sprintf("JoinOverlay(%v)", m.Bootstrap) }

// Messages returns a prototype of every message and application call of
// Pastry, for node.NewRegistry and node.Spec.
func Messages() []node.Message {
	return []node.Message{Join{}, JoinReply{}, Announce{}, LeafSet{}, Probe{}, ProbeReply{}, JoinOverlay{}}
}
