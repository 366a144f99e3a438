package chord

import "github.com/seed6eee2ec7/crystalball/node"

// Name is the service name in a node.Spec.
const Name = "chord"

// NewSpec returns the Chord service with the given options: zero or
// out-of-range parameters take their defaults (DefaultOptions), and the fix
// flags are used as given, so NewSpec(Options{}) is the paper's buggy
// protocol with hashed placement. The factory builds a *State in
// StatusInit.
func NewSpec(opts Options) node.Spec {
	opts = opts.withDefaults()
	return node.Spec{
		Name:       Name,
		New:        func() node.Service { return newState(opts) },
		Messages:   Messages(),
		Properties: Properties(),
	}
}
