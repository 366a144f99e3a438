package chord

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// harnessConfig returns the nodetest hooks for Chord, with options of its
// own so that one script's options never reach the next. Scripts select
// corrections by name (options fix-self-predecessor, fix-all), set
// placement=by-id (ring order = ID order, as the paper's figures need),
// bits=N and successors=N, and run the JoinOverlay call as "app ID join
// BOOTSTRAP". The command "summary" prints Summarize of the started nodes.
func harnessConfig() nodetest.Config {
	opts := DefaultOptions()
	return nodetest.Config{
		Spec: func() node.Spec { return NewSpec(opts) },
		Options: func(args []string) (string, error) {
			for _, a := range args {
				key, val, hasVal := strings.Cut(a, "=")
				if !hasVal {
					if err := opts.EnableFix(a); err != nil {
						return "", err
					}
					continue
				}
				switch key {
				case "placement":
					p, err := ParsePlacement(val)
					if err != nil {
						return "", err
					}
					opts.Placement = p
				case "bits", "successors":
					n, err := strconv.Atoi(val)
					if err != nil {
						return "", fmt.Errorf("chord: %s: %w", key, err)
					}
					if key == "bits" {
						opts.Bits = n
					} else {
						opts.MaxSuccessors = n
					}
				default:
					return "", fmt.Errorf("chord: unknown option %q", a)
				}
			}
			return opts.withDefaults().String(), nil
		},
		App:      servicetest.PeerCall("chord", "join", "BOOTSTRAP", func(b node.ID) node.Message { return JoinOverlay{Bootstrap: b} }),
		Commands: map[string]nodetest.Command{"summary": servicetest.SummaryCommand("chord", Summarize)},
	}
}
