package paxos

import "github.com/seed6eee2ec7/crystalball/node"

// Name is the service name in a node.Spec.
const Name = "paxos"

// NewSpec returns the Paxos service with the given options: zero parameters
// take their defaults and the bug flags are used as given, so
// NewSpec(Options{}) is correct Paxos among n1, n2 and n3. The factory
// builds a *State that has promised, accepted and learned nothing.
func NewSpec(opts Options) node.Spec {
	opts = opts.withDefaults()
	return node.Spec{
		Name:       Name,
		New:        func() node.Service { return newState(opts) },
		Messages:   Messages(),
		Properties: Properties(),
		// Paxos survives the loss of any message (a proposer retries, a
		// learner learns from a later round): every message is declared
		// lossy, so steering drops one it must stop alone rather than
		// break the connection and lose what else is in flight on it.
		Delivery: node.DeliverySpec{All: node.Delivery{Lost: true}},
	}
}
