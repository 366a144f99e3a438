package pastry

import "github.com/seed6eee2ec7/crystalball/node"

// Name is the service name in a node.Spec.
const Name = "pastry"

// NewSpec returns the Pastry service with the given options: zero or
// invalid parameters take their defaults (DefaultOptions; Validate tells
// which are invalid), and the fix flag is used as given, so
// NewSpec(Options{}) is the protocol with MaceMC's bug and hashed
// placement. The factory builds a *State in StatusInit.
func NewSpec(opts Options) node.Spec {
	opts = opts.withDefaults()
	return node.Spec{
		Name:       Name,
		New:        func() node.Service { return newState(opts) },
		Messages:   Messages(),
		Properties: Properties(),
	}
}
