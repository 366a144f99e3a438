package randtree

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The messages are encoded as msgpack arrays (as_array), not maps: no field
// names on the wire or in a checkpoint, and no map for the canonical encoder
// to sort, which keeps the hot encoding path allocation-free. Field order is
// therefore part of the wire format: append new fields, never reorder.

// Join asks the receiver to place Joiner in the tree. A joining node sends it
// to a bootstrap target; non-root nodes forward it to their root; a full
// node forwards it to a random child with Down set. A root also sends Join
// (with itself as Joiner) to a more eligible node it hands the root over to.
type Join struct {
	node.Named[Join]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Joiner is the node to be placed; replies go to it, not to the sender.
	Joiner node.ID
	// Down marks a Join a full parent forwarded down the tree: the receiver
	// must take it or pass it further down, never back up to the root.
	Down bool
}

// String renders the message for traces: Join(n13) or Join(n13, down).
func (m Join) String() string {
	if m.Down {
		return fmt.Sprintf("Join(%v, down)", m.Joiner)
	}
	return fmt.Sprintf("Join(%v)", m.Joiner)
}

// JoinReply tells a joiner it was accepted as the sender's child.
type JoinReply struct {
	node.Named[JoinReply]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Root is the tree's root as the sender knows it.
	Root node.ID
	// Siblings are the joiner's siblings (the root's other children) when
	// the sender is the root; empty otherwise, since only children of the
	// root keep a sibling list. The sender never modifies it after sending.
	Siblings []node.ID
}

// String renders the message for traces.
func (m JoinReply) String() string {
	return fmt.Sprintf("JoinReply(root=%v siblings=%s)", m.Root, formatIDs(m.Siblings))
}

// UpdateSibling is sent by the root to its children when it accepts a new
// child, Sibling.
type UpdateSibling struct {
	node.Named[UpdateSibling]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Sibling is the root's new child.
	Sibling node.ID
}

// String renders the message for traces.
func (m UpdateSibling) String() string { return fmt.Sprintf("UpdateSibling(%v)", m.Sibling) }

// NewRoot announces that Root is now the tree's root. An old root sends it to
// its children when it hands over the root position; every receiver passes
// it on to its own children.
type NewRoot struct {
	node.Named[NewRoot]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Root is the node that took the root position.
	Root node.ID
}

// String renders the message for traces.
func (m NewRoot) String() string { return fmt.Sprintf("NewRoot(%v)", m.Root) }

// Remove asks the receiver to forget the sender as a child (and sibling): the
// sender is not, or no longer, under it.
type Remove struct {
	node.Named[Remove]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (Remove) String() string { return "Remove" }

// Probe is the recovery timer's query to a peer outside the node's direct
// neighbourhood. Root is the sender's root, so the receiver can learn of a
// more eligible root; the receiver answers with a ProbeReply.
type Probe struct {
	node.Named[Probe]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Root is the root the sender knows of (its own, or a more eligible
	// one it passes up to its root).
	Root node.ID
}

// String renders the message for traces.
func (m Probe) String() string { return fmt.Sprintf("Probe(root=%v)", m.Root) }

// ProbeReply answers a Probe with the replier's root.
type ProbeReply struct {
	node.Named[ProbeReply]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Root is the replier's root.
	Root node.ID
}

// String renders the message for traces.
func (m ProbeReply) String() string { return fmt.Sprintf("ProbeReply(root=%v)", m.Root) }

// Keepalive is the recovery timer's check of a tree link: a node sends it to
// its parent (AsChild set: "I am your child") and to each child ("I am your
// parent"). The write is what exposes a stale connection to a peer that
// reset silently, as TCP only notices a dead peer when it writes; and a
// parent that is alive but does not hold the link (it reset, or dropped the
// node) answers Disown, so stale links do not live forever. A child that
// does not hold the link (it reset and rejoined elsewhere) answers Disown
// only with Options.FixStaleChild: the paper's child ignores it.
type Keepalive struct {
	node.Named[Keepalive]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// AsChild is set when the sender claims to be the receiver's child,
	// clear when it claims to be its parent.
	AsChild bool
	// Siblings, from a parent, is the sibling list the child should hold:
	// the root's other children, or none when the parent is not the root.
	Siblings []node.ID
}

// String renders the message for traces.
func (m Keepalive) String() string {
	if m.AsChild {
		return "Keepalive(as child)"
	}
	return fmt.Sprintf("Keepalive(as parent, siblings=%v)", m.Siblings)
}

// Disown answers a Keepalive whose claimed link the receiver does not hold:
// the sender must drop it.
type Disown struct{ node.Named[Disown] }

// String renders the message for traces.
func (Disown) String() string { return "Disown" }

// JoinOverlay is the application call that makes an Init node join the tree
// through the bootstrap nodes Targets, tried round-robin. A node whose
// targets are all itself (or none) becomes a root on its own. The call is
// ignored by a node that is already joining or joined; after a reset the
// application (or the emulator) issues it again.
type JoinOverlay struct {
	node.Named[JoinOverlay]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Targets are the bootstrap nodes, in the order they are tried; the
	// node itself may be among them. None entries are ignored.
	Targets []node.ID
}

// String renders the call for traces.
func (m JoinOverlay) String() string { return "JoinOverlay(" + formatIDs(m.Targets) + ")" }

// Messages returns a prototype of every message and application call of
// RandTree, for node.NewRegistry and node.Spec.
func Messages() []node.Message {
	return []node.Message{
		Join{}, JoinReply{}, UpdateSibling{}, NewRoot{}, Remove{}, Probe{}, ProbeReply{}, Keepalive{}, Disown{},
		JoinOverlay{},
	}
}
