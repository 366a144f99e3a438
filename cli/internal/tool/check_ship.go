package tool

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// registerShip defines --ship: the file of filters a service check ships
// with the deployment (steering.LayerConfig.Shipped; emulate and node read
// it with --shipped).
func (f *checkFlags) registerShip(fs *flag.FlagSet) {
	fs.StringVar(&f.ship, "ship", "", "write to this file, for every safety violation found from the initial state, the filter of its path's earliest event a filter can stop; 'emulate' and 'node' with --mode steer install them from --shipped before their first round")
}

// validateShip refuses --ship where the search does not start from the
// deployment's initial configuration.
func (f *checkFlags) validateShip() error {
	switch {
	case f.ship == "":
	case f.model != "":
		return usagef("--ship writes a service's filters, not --model %s's", f.model)
	case f.from != "":
		return usagef("--ship ships filters from the initial configuration, not from --from %s", f.from)
	case f.walk:
		return usagef("--ship needs the violations of a bfs or consequence search, not --strategy walk")
	}
	return nil
}

// writeShipped writes the filters of res's safety violations to --ship.
func (f *checkFlags) writeShipped(res *consequence.Result[*consequence.GlobalState, consequence.ActorAction]) error {
	var fs []steering.ShippedFilter
	for _, v := range res.Violations {
		if v.Kind != node.Safety {
			continue
		}
		path := make([]consequence.ActorAction, len(v.Path))
		for i, a := range v.Path {
			path[i] = a.Act
		}
		if s, ok := steering.ShipPath(v.Property, v.Kind, v.Err, path); ok {
			fs = append(fs, s)
		}
	}
	b, err := steering.EncodeShipped(fs)
	if err != nil {
		return fmt.Errorf("crystalball: --ship: %w", err)
	}
	if err := os.WriteFile(f.ship, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("crystalball: --ship: %w", err)
	}
	return nil
}

// readShipped reads the file --shipped names (nil for an empty name).
func readShipped(path string) ([]steering.ShippedFilter, error) {
	if path == "" {
		return nil, nil
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, usagef("--shipped: %v", err)
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, steering.MaxShippedBytes+1))
	if err != nil {
		return nil, usagef("--shipped %s: %v", path, err)
	}
	fs, err := steering.DecodeShipped(b)
	if err != nil {
		return nil, usagef("--shipped %s: %v", path, err)
	}
	return fs, nil
}
