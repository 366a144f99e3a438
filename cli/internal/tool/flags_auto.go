package tool

import (
	"flag"
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
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		for _, name := range autoFlags {
			if f.Name != name {
				continue
			}
			switch v := g.Get().(type) {
			case int:
				if v < 0 {
					err = usagef("--%s must be 0 or more (not negative), got %d", name, v)
				}
			case time.Duration:
				if v < 0 {
					err = usagef("--%s must not be negative, got %v", name, v)
				}
			}
		}
	})
	return err
}
