package randtree

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// harnessConfig returns the nodetest hooks for RandTree, with options of
// its own so that one script's options never reach the next. Scripts
// select corrections by name (options fix-update-sibling, fix-all), set
// max-children=N, and run the JoinOverlay call as "app ID join TARGET...".
func harnessConfig() nodetest.Config {
	opts := DefaultOptions()
	return nodetest.Config{
		Spec: func() node.Spec { return NewSpec(opts) },
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if val, ok := strings.CutPrefix(a, "max-children="); ok {
					n, err := strconv.Atoi(val)
					if err != nil {
						return "", fmt.Errorf("randtree: max-children: %w", err)
					}
					opts.MaxChildren = n
					continue
				}
				if err := opts.EnableFix(a); err != nil {
					return "", err
				}
			}
			return opts.withDefaults().String(), nil
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			if len(args) == 0 || args[0] != "join" {
				return nil, errors.New("randtree: usage: app ID join TARGET...")
			}
			var targets []node.ID
			for _, a := range args[1:] {
				id, err := node.ParseID(a)
				if err != nil {
					return nil, err
				}
				targets = append(targets, id)
			}
			return JoinOverlay{Targets: targets}, nil
		},
	}
}
