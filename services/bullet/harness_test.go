package bullet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// harnessConfig returns the nodetest hooks for Bullet′, with options of its
// own so that one script's options never reach the next. Scripts set the
// integer parameters by name (blocks=8 block-size=16 max-senders=2
// max-receivers=2 max-outstanding=1 push-fanout=1 sample-size=2), select
// the correction (fix-keep-shadow, fix-all), and run the Download call as
// "app ID download SOURCE".
func harnessConfig() nodetest.Config {
	opts := scriptOptions()
	return nodetest.Config{
		Spec:     func() node.Spec { return NewSpec(opts) },
		Options:  func(args []string) (string, error) { return setOptions(&opts, args) },
		App:      servicetest.PeerCall("bullet", "download", "SOURCE", func(src node.ID) node.Message { return Download{Source: src} }),
		Describe: func(svc node.Service) string { return svc.(*State).String() },
	}
}

// scriptOptions are the defaults of a script: a file of 8 blocks of 16
// bytes, so states print on one line.
func scriptOptions() Options {
	o := DefaultOptions()
	o.Blocks, o.BlockSize = 8, 16
	return o
}

func setOptions(o *Options, args []string) (string, error) {
	fields := map[string]*int{
		"blocks": &o.Blocks, "block-size": &o.BlockSize, "max-senders": &o.MaxSenders,
		"max-receivers": &o.MaxReceivers, "max-outstanding": &o.MaxOutstanding,
		"push-fanout": &o.PushFanout, "sample-size": &o.SampleSize,
	}
	for _, a := range args {
		if key, val, ok := strings.Cut(a, "="); ok {
			f, known := fields[key]
			if !known {
				return "", fmt.Errorf("bullet: unknown option %q", key)
			}
			n, err := strconv.Atoi(val)
			if err != nil {
				return "", fmt.Errorf("bullet: %s: %w", key, err)
			}
			*f = n
			continue
		}
		if err := o.EnableFix(a); err != nil {
			return "", err
		}
	}
	if err := o.Validate(); err != nil {
		return "", err
	}
	return o.withDefaults().String(), nil
}
