package kv

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/replayed"
)

// Name is the service's name (cli: --service etcdkv).
const Name = "etcdkv"

// Adapter returns the adapter of a store configured with opts: its
// Factory is the service's Spec.New, its Stats count replays.
func Adapter(opts Options) (*replayed.Adapter[Observation], error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	return replayed.New(replayed.Config[Observation]{
		Name:     Name,
		Messages: Messages(),
		New: func(self node.ID, durable []byte) (replayed.Object[Observation], error) {
			if self == node.None || int(self) > o.Nodes {
				return nil, fmt.Errorf("etcdkv: node %v is not a member (1..%d)", self, o.Nodes)
			}
			return newStore(o, self, durable)
		},
		// Raft assumes an unreliable network: its messages may be lost,
		// duplicated and reordered (the raft paper, section 5.1).
		Delivery: Delivery(o),
		// Every member is a neighbour: a snapshot holds the whole cluster.
		Neighbors: func(self node.ID, _ Observation) []node.ID {
			ids := make([]node.ID, 0, o.Nodes)
			for i := 1; i <= o.Nodes; i++ {
				ids = append(ids, node.ID(i))
			}
			return ids
		},
	})
}

// Spec returns the service of a store configured with opts, and its
// adapter.
func Spec(opts Options) (node.Spec, *replayed.Adapter[Observation], error) {
	ad, err := Adapter(opts)
	if err != nil {
		return node.Spec{}, nil, err
	}
	props, err := Properties(opts)
	if err != nil {
		return node.Spec{}, nil, err
	}
	return node.Spec{Name: Name, New: ad.Factory(), Messages: Messages(), Properties: props, Delivery: ad.Delivery()}, ad, nil
}

// Workload: every node writes its own key once when it first starts.
func Workload(id node.ID, restart bool) []node.Message {
	if restart {
		return nil
	}
	return []node.Message{Put{Key: fmt.Sprintf("k%d", id), Value: fmt.Sprintf("v%d", id)}}
}

// Observed returns a node's observation in a view (false for a node that
// is down or not a store).
func Observed(v node.View, id node.ID) (Observation, bool) {
	return replayed.Observed[Observation](v.Service(id))
}

// observedRef is Observed without the copy (replayed.ObservedRef): the
// properties only read it.
func observedRef(v node.View, id node.ID) (*Observation, bool) {
	return replayed.ObservedRef[Observation](v.Service(id))
}
