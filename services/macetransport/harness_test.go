package macetransport

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// harnessConfig returns the nodetest hooks for MaceTransport, with options
// of its own so that one script's options never reach the next. Scripts
// select the correction by name (options monotone-syn, fix-all), set
// max-retries=N, rto=DURATION and app-interval=DURATION, and run the
// SendMessages call as "app ID send TO COUNT". The command "summary"
// prints Summarize of the started nodes.
func harnessConfig() nodetest.Config {
	opts := DefaultOptions()
	return nodetest.Config{
		Spec: func() node.Spec {
			spec, err := NewSpec(opts)
			if err != nil {
				panic(err) // Options rejects negative values first
			}
			return spec
		},
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if err := applyOption(&opts, a); err != nil {
					return "", err
				}
			}
			if err := opts.Validate(); err != nil {
				return "", err
			}
			return opts.withDefaults().String(), nil
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			if len(args) != 3 || args[0] != "send" {
				return nil, errors.New("macetransport: usage: app ID send TO COUNT")
			}
			to, err := node.ParseID(args[1])
			if err != nil {
				return nil, err
			}
			n, err := strconv.Atoi(args[2])
			if err != nil {
				return nil, fmt.Errorf("macetransport: count: %w", err)
			}
			return SendMessages{To: to, Count: n}, nil
		},
		Commands: map[string]nodetest.Command{"summary": servicetest.SummaryCommand("macetransport", Summarize)},
	}
}

// applyOption applies one options argument: a correction's name or
// key=value.
func applyOption(o *Options, a string) error {
	key, val, hasVal := strings.Cut(a, "=")
	if !hasVal {
		return o.EnableFix(a)
	}
	switch key {
	case "max-retries":
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("macetransport: %s: %w", key, err)
		}
		o.MaxRetries = n
	case "rto", "app-interval":
		d, err := time.ParseDuration(val)
		if err != nil {
			return fmt.Errorf("macetransport: %s: %w", key, err)
		}
		if key == "rto" {
			o.RetransmitTimeout = d
		} else {
			o.AppInterval = d
		}
	default:
		return fmt.Errorf("macetransport: unknown option %q", a)
	}
	return nil
}
