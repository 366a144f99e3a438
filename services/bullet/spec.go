package bullet

import "github.com/seed6eee2ec7/crystalball/node"

// Name is the service name in a node.Spec.
const Name = "bullet"

// NewSpec returns the Bullet′ service with the given options: zero or
// invalid parameters take their defaults (DefaultOptions; Validate tells
// which are invalid), and the fix flag is used as given, so
// NewSpec(Options{}) is the paper's buggy protocol on a 20 MB file. The
// factory builds a *State that has not started; every node of the spec
// shares one immutable block payload.
func NewSpec(opts Options) node.Spec {
	opts = opts.withDefaults()
	payload := make([]byte, opts.BlockSize)
	return node.Spec{
		Name:       Name,
		New:        func() node.Service { return newState(opts, payload) },
		Messages:   Messages(),
		Properties: Properties(),
	}
}
