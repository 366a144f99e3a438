package pastry

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// harnessConfig returns the nodetest hooks for Pastry, with options of its
// own so that one script's options never reach the next. Scripts select
// the correction by name (options fix-rapid-rejoin, fix-all), set
// placement=by-id (identifier = ID), bits=N, digit=N, leaves=N and
// misses=N, and run the JoinOverlay call as "app ID join BOOTSTRAP". The
// command "summary" prints Summarize of the started nodes.
func harnessConfig() nodetest.Config {
	opts := DefaultOptions()
	return nodetest.Config{
		Spec: func() node.Spec { return NewSpec(opts) },
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if err := setOption(&opts, a); err != nil {
					return "", err
				}
			}
			if err := opts.Validate(); err != nil {
				return "", err
			}
			return opts.withDefaults().String(), nil
		},
		App:      servicetest.PeerCall("pastry", "join", "BOOTSTRAP", func(b node.ID) node.Message { return JoinOverlay{Bootstrap: b} }),
		Commands: map[string]nodetest.Command{"summary": servicetest.SummaryCommand("pastry", Summarize)},
	}
}

// setOption applies one script option: a correction's name or KEY=VALUE.
func setOption(o *Options, a string) error {
	key, val, hasVal := strings.Cut(a, "=")
	if !hasVal {
		return o.EnableFix(a)
	}
	if key == "placement" {
		p, err := ParsePlacement(val)
		o.Placement = p
		return err
	}
	n, err := strconv.Atoi(val)
	if err != nil {
		return fmt.Errorf("pastry: %s: %w", key, err)
	}
	switch key {
	case "bits":
		o.Bits = n
	case "digit":
		o.DigitBits = n
	case "leaves":
		o.LeafSize = n
	case "misses":
		o.MissLimit = n
	default:
		return fmt.Errorf("pastry: unknown option %q", a)
	}
	return nil
}
