package kv

import "github.com/seed6eee2ec7/crystalball/node"

// RaftReordered is the reordering bound the store declares for its raft
// messages: a message may be overtaken by this many later ones on its
// connection. Raft tolerates any reordering; the bound keeps what the
// explorer branches on small.
const RaftReordered = 2

// Delivery is the store's declared delivery (node.Spec.Delivery) for a
// store configured with o: raft messages may be lost, duplicated and
// overtaken by up to RaftReordered later ones, as go.etcd.io/raft assumes
// of its transport; Put is an application call and travels no network.
// The bounded properties assume a message delivered is delivered within
// MaxDelay (Options.MaxDelay).
func Delivery(o Options) node.DeliverySpec {
	return node.DeliverySpec{Types: map[string]node.Delivery{Raft{}.MessageType(): node.Unreliable(RaftReordered)},
		MaxDelay: o.MaxDelay()}
}
