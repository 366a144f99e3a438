package tool

import (
	"flag"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// faultFlags are the faults a steering round explores along a path,
// shared by 'emulate' and 'node' so both default, validate and apply them
// the same way: steering.DefaultFaults, in every mode.
type faultFlags struct {
	resets, breaks, drops, refusals int
	crashes, partitions, jumps      int
	losses, duplicates, reorders    int
	delays                          int
}

// register defines the flags on fs with steering's defaults.
func (f *faultFlags) register(fs *flag.FlagSet) {
	d := steering.DefaultFaults()
	fs.IntVar(&f.resets, "steer-resets", d.Resets, "node resets (silent: the RST is lost) a steering round explores along a path")
	fs.IntVar(&f.breaks, "steer-breaks", d.Breaks, "connection breaks a steering round explores along a path")
	fs.IntVar(&f.drops, "steer-drops", d.Drops, "datagrams a steering round drops along a path; a service that sends none explores nothing more")
	fs.IntVar(&f.refusals, "steer-refusals", d.Refusals, "sends (TrySend) a steering round refuses along a path; a service that never calls TrySend explores nothing more")
	fs.IntVar(&f.crashes, "steer-crashes", d.Crashes, "crash-stops a steering round explores along a path, once the node has seen the deployment crash (with the downtime seen)")
	fs.IntVar(&f.partitions, "steer-partitions", d.Partitions, "partitions a steering round explores along a path, once the node has seen the deployment partitioned (of the shapes and length seen)")
	fs.IntVar(&f.jumps, "steer-clock-jumps", d.ClockJumps, "clock jumps a steering round explores along a path, once the node has seen one (of the size seen)")
	fs.IntVar(&f.losses, "steer-losses", d.Losses, "messages a steering round loses along a path, of those the service declares lost-able (node.Spec.Delivery); a service that declares none explores nothing more; 0 by default, since on a service whose every message is declared unreliable the branches crowd out a round's state budget")
	fs.IntVar(&f.duplicates, "steer-duplicates", d.Duplicates, "messages a steering round duplicates along a path, of those the service declares duplicable")
	fs.IntVar(&f.reorders, "steer-reorders", d.Reorders, "messages a steering round delivers ahead of earlier ones along a path, of those the service declares reorderable")
	fs.IntVar(&f.delays, "steer-delays", d.Delays, "messages a steering round delivers later than the delay the service declares for its bounded properties, along a path (judged then by the safety and history properties only)")
}

// validate reports the first negative budget as a usage error.
func (f *faultFlags) validate() error {
	for _, b := range []struct {
		name string
		v    int
	}{{"steer-resets", f.resets}, {"steer-breaks", f.breaks}, {"steer-drops", f.drops}, {"steer-refusals", f.refusals},
		{"steer-crashes", f.crashes}, {"steer-partitions", f.partitions}, {"steer-clock-jumps", f.jumps},
		{"steer-losses", f.losses}, {"steer-duplicates", f.duplicates}, {"steer-reorders", f.reorders}, {"steer-delays", f.delays}} {
		if b.v < 0 {
			return usagef("--%s must not be negative, got %d", b.name, b.v)
		}
	}
	return nil
}

// faults returns the budgets as a round's faults.
func (f *faultFlags) faults() consequence.Faults {
	return consequence.Faults{Resets: f.resets, SilentResets: true, Breaks: f.breaks, Drops: f.drops, Refusals: f.refusals,
		Crashes: f.crashes, Partitions: f.partitions, ClockJumps: f.jumps,
		Losses: f.losses, Duplicates: f.duplicates, Reorders: f.reorders, Delays: f.delays}
}
