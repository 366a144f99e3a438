package tool

import (
	"flag"
	"fmt"
	"time"
)

// durationValue is a flag.Value for durations whose parse error says what a
// valid one looks like (the standard flag package only says "parse error").
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return "0s"
	}
	if *v.d < 0 {
		return "auto" // a negative default means "computed from other flags"
	}
	return v.d.String()
}

// Get returns the duration (flag.Getter), so validation can tell a
// negative value typed on the command line from an "auto" default.
func (v durationValue) Get() any { return *v.d }

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 90s, 30m or 1.4h")
	}
	*v.d = d
	return nil
}

// durationFlag defines a duration flag on fs with a helpful parse error.
func durationFlag(fs *flag.FlagSet, name string, value time.Duration, usage string) *time.Duration {
	d := value
	fs.Var(durationValue{&d}, name, usage)
	return &d
}

// minInterval is the shortest checkpoint or gather interval (--snapshots,
// --gather) any command accepts, 0 (off) aside: below it a live node does
// little but checkpoint (--snapshots 1ns spun at 80% CPU) and an emulation
// crawls through checkpoint events. docs/emulate.md and docs/live-node.md
// document it.
const minInterval = 10 * time.Millisecond

// checkInterval checks the value d of the interval flag name: 0 (off) or
// at least minInterval; negative is an error.
func checkInterval(name string, d time.Duration) error {
	switch {
	case d < 0:
		return usagef("--%s must not be negative, got %v", name, d)
	case d > 0 && d < minInterval:
		return usagef("--%s must be 0 (off) or at least %v, got %v", name, minInterval, d)
	}
	return nil
}
