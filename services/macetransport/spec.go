package macetransport

import "github.com/seed6eee2ec7/crystalball/node"

// Name is the service name in a node.Spec.
const Name = "macetransport"

// NewSpec returns the MaceTransport service with the given options: zero
// parameters take their defaults (DefaultOptions), and the fix flag is
// used as given, so NewSpec(Options{}) is the transport with MaceMC's bug.
// It fails on a negative parameter (Options.Validate). The factory builds
// a *State with no connection.
func NewSpec(opts Options) (node.Spec, error) {
	if err := opts.Validate(); err != nil {
		return node.Spec{}, err
	}
	opts = opts.withDefaults()
	return node.Spec{
		Name:       Name,
		New:        func() node.Service { return newState(opts) },
		Messages:   Messages(),
		Properties: Properties(),
	}, nil
}
