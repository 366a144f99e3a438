package paxos

import (
	"errors"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// harnessConfig returns the nodetest hooks for Paxos, with options of its
// own so that one script's options never reach the next. Scripts inject
// bugs by name (options bug1, bug2, all) and run the Propose call as
// "app ID propose VALUE".
func harnessConfig() nodetest.Config {
	var opts Options
	return nodetest.Config{
		Spec: func() node.Spec { return NewSpec(opts) },
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if err := opts.EnableBug(a); err != nil {
					return "", err
				}
			}
			return opts.String(), nil
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			if len(args) != 2 || args[0] != "propose" {
				return nil, errors.New("paxos: usage: app ID propose VALUE")
			}
			return Propose{Value: strings.Trim(args[1], `"`)}, nil
		},
	}
}
