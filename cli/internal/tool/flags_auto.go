package tool

import (
	"flag"
	"slices"
	"time"
)

// autoFlags are the flags of 'emulate' and 'node' (and the experiments
// that take emulate's flags) whose negative default stands for "chosen
// from other flags" (emulateParams.resolve, steerFlags.resolve): a
// negative value typed on the command line is an error, not "auto".
var autoFlags = []string{"steer-states", "predictors", "snapshots", "heal"}

// rejectNegativeAuto reports an autoFlags flag given a negative value on
// fs's command line as a usage error.
func rejectNegativeAuto(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && slices.Contains(autoFlags, f.Name) {
			err = negativeAutoError(f)
		}
	})
	return err
}

// negativeAutoError is the usage error of the auto flag f given a
// negative value (nil: it was not).
func negativeAutoError(f *flag.Flag) error {
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return nil
	}
	switch v := g.Get().(type) {
	case int:
		if v < 0 {
			return usagef("--%s must be 0 or more (not negative), got %d", f.Name, v)
		}
	case time.Duration:
		if v < 0 {
			return usagef("--%s must not be negative, got %v", f.Name, v)
		}
	}
	return nil
}
