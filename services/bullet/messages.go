package bullet

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The messages are encoded as msgpack arrays (as_array), not maps: no field
// names on the wire or in a checkpoint. Field order is therefore part of
// the wire format: append new fields, never reorder.

// Join asks the source to add the sender to the members and answer with a
// Sample. A node sends it when it starts downloading and again on every
// discover timer, to refresh its sample.
type Join struct {
	node.Named[Join]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (Join) String() string { return "Join" }

// Sample is the source's answer to Join: a random subset of the members
// (without the joiner), the peers the joiner may ask to become senders.
type Sample struct {
	node.Named[Sample]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Peers are members, ascending. The sender never modifies the slice
	// after sending.
	Peers []node.ID
}

// String renders the message for traces.
func (m Sample) String() string { return "Sample(" + formatIDs(m.Peers) + ")" }

// PeerRequest asks the receiver to become the sender's sender: to announce
// its file map to it and answer its block requests.
type PeerRequest struct {
	node.Named[PeerRequest]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (PeerRequest) String() string { return "PeerRequest" }

// PeerAccept answers a PeerRequest: the sender is now the receiver's
// sender, and its diffs follow, starting from an empty view.
type PeerAccept struct {
	node.Named[PeerAccept]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (PeerAccept) String() string { return "PeerAccept" }

// PeerReject answers a PeerRequest from a node with MaxReceivers
// receivers.
type PeerReject struct {
	node.Named[PeerReject]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (PeerReject) String() string { return "PeerReject" }

// Unpeer tells a sender that the receiver no longer downloads from it (it
// has nothing more to offer, or the download is complete).
type Unpeer struct {
	node.Named[Unpeer]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (Unpeer) String() string { return "Unpeer" }

// Disown answers a Request from a node that is not the sender's receiver
// (the sender reset, or dropped it): the receiver must drop the sender.
type Disown struct {
	node.Named[Disown]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
}

// String renders the message for traces.
func (Disown) String() string { return "Disown" }

// Diff announces blocks the sender has and has not announced to the
// receiver before: the receiver adds them to its view of the sender's file
// map. It is sent with node.Env.TrySend, so the transport may refuse it.
type Diff struct {
	node.Named[Diff]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Blocks are the new blocks, ascending. The sender never modifies the
	// slice after sending.
	Blocks []uint32
}

// String renders the message for traces, e.g. "Diff([0-7 9])".
func (m Diff) String() string { return "Diff(" + formatBlocks(m.Blocks) + ")" }

// Request asks a sender for a block its diffs announced.
type Request struct {
	node.Named[Request]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Block is the block's index.
	Block uint32
}

// String renders the message for traces.
func (m Request) String() string { return fmt.Sprintf("Request(%d)", m.Block) }

// Block carries a block of the file: the answer to a Request, or a block
// the source pushes. Data is the block's content, Options.BlockSize bytes,
// so the message costs a block's size on the wire; the nodes of one spec
// share one immutable zero slice, and a receiver keeps only the block's
// bit in its file map, never the data.
type Block struct {
	node.Named[Block]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Index is the block's index.
	Index uint32
	// Data is the block's content; read-only.
	Data []byte
}

// InFlightForm implements node.InFlightFormer: a snapshot records a Block
// in flight without its payload, which no handler reads (a node keeps only
// the block's bit in its file map). Recorded whole, the blocks in flight
// made up 95% of the snapshot answers' bytes in bullet-overhead.
func (m Block) InFlightForm() node.Message {
	m.Data = nil
	return m
}

// String renders the message for traces, without the data: "Block(3)".
func (m Block) String() string { return fmt.Sprintf("Block(%d)", m.Index) }

// Download is the application call that starts a node's download from the
// source Source; the source itself (Source == the node) starts with the
// whole file and serves it. The call is ignored by a node that already
// started; after a reset the application (or the emulator) issues it
// again.
type Download struct {
	node.Named[Download]
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	// Source is the node that has the file.
	Source node.ID
}

// String renders the call for traces.
func (m Download) String() string { return fmt.Sprintf("Download(source=%v)", m.Source) }

// Messages returns a prototype of every message and application call of
// Bullet′, for node.NewRegistry and node.Spec.
func Messages() []node.Message {
	return []node.Message{
		Join{}, Sample{}, PeerRequest{}, PeerAccept{}, PeerReject{}, Unpeer{}, Disown{},
		Diff{}, Request{}, Block{}, Download{},
	}
}

// formatIDs renders a set of IDs as "[n1 n2]".
func formatIDs(ids []node.ID) string { return fmt.Sprint(ids) }
