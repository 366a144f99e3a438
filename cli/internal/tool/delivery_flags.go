package tool

import (
	"flag"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
)

// checkDeliveryFlags are check's budgets of delivery faults on the
// messages a service declares unreliable (node.Spec.Delivery;
// consequence.Faults.Losses, Duplicates, Reorders) and of late messages
// (consequence.Faults.Delays).
type checkDeliveryFlags struct {
	losses, duplicates, reorders, delays int
}

// register defines the flags on fs (default 0: none).
func (d *checkDeliveryFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&d.losses, "losses", 0, "messages the service declares lost-able (node.Spec.Delivery) lost along a path; a service that declares none explores nothing more")
	fs.IntVar(&d.duplicates, "duplicates", 0, "messages the service declares duplicable duplicated along a path")
	fs.IntVar(&d.reorders, "reorders", 0, "deliveries ahead of earlier messages along a path, each overtaken message within the bound its type declares")
	fs.IntVar(&d.delays, "delays", 0, "messages along a path delivered later than the message delay the service declares for its bounded properties (node.DeliverySpec.MaxDelay), any type; a path that delays one is judged by the safety and history properties only")
}

// validate reports a budget out of range as a usage error.
func (d *checkDeliveryFlags) validate() error {
	for _, b := range []struct {
		name string
		v    int
	}{{"losses", d.losses}, {"duplicates", d.duplicates}, {"reorders", d.reorders}, {"delays", d.delays}} {
		if b.v < 0 || b.v > consequence.MaxDeliveryFaults {
			return usagef("--%s must be in 0..%d, got %d", b.name, consequence.MaxDeliveryFaults, b.v)
		}
	}
	return nil
}

// apply sets the budgets on f.
func (d *checkDeliveryFlags) apply(f *consequence.Faults) {
	f.Losses, f.Duplicates, f.Reorders, f.Delays = d.losses, d.duplicates, d.reorders, d.delays
}

// describe is the budgets' part of check's faults line ("" when none).
func (d *checkDeliveryFlags) describe() string {
	s := ""
	if d.losses != 0 || d.duplicates != 0 || d.reorders != 0 {
		s = fmt.Sprintf(" losses=%d duplicates=%d reorders=%d", d.losses, d.duplicates, d.reorders)
	}
	if d.delays != 0 {
		s += fmt.Sprintf(" delays=%d", d.delays)
	}
	return s
}

// emulateDeliveryFlags are emulate's rates of delivery faults on the
// messages a service declares unreliable (emulation.DeliveryConfig).
type emulateDeliveryFlags struct {
	cfg emulation.DeliveryConfig
}

// register defines the flags on fs (default 0: none).
func (d *emulateDeliveryFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&d.cfg.Loss, "msg-loss", 0, "probability in [0, 1] that a message the service declares lost-able (node.Spec.Delivery) is lost; a service that declares none is unaffected")
	fs.Float64Var(&d.cfg.Duplicate, "msg-duplicate", 0, "probability in [0, 1] that a message the service declares duplicable arrives twice")
	d.cfg.DuplicateDelay = emulation.DefaultDuplicateDelay
	fs.Var(durationValue{&d.cfg.DuplicateDelay}, "msg-duplicate-delay", "how much later than the original a duplicate arrives at most")
	fs.Float64Var(&d.cfg.Reorder, "msg-reorder", 0, "probability in [0, 1] that a message the service declares reorderable is held back, so that later ones overtake it (within its declared bound)")
	d.cfg.ReorderDelay = emulation.DefaultReorderDelay
	fs.Var(durationValue{&d.cfg.ReorderDelay}, "msg-reorder-delay", "how long a held-back message is held at most")
}

// validate reports a rate outside [0, 1] as a usage error.
func (d *emulateDeliveryFlags) validate() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"msg-loss", d.cfg.Loss}, {"msg-duplicate", d.cfg.Duplicate}, {"msg-reorder", d.cfg.Reorder}} {
		if !(r.v >= 0 && r.v <= 1) {
			return usagef("--%s must be a probability in [0, 1], got %v", r.name, r.v)
		}
	}
	if d.cfg.DuplicateDelay < 0 || d.cfg.ReorderDelay < 0 {
		return usagef("--msg-duplicate-delay and --msg-reorder-delay must not be negative")
	}
	return nil
}
