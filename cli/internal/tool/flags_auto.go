package tool

import (
	"flag"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// autoFlags are the flags whose negative default stands for "chosen
// from other flags" (emulateParams.resolve, steerFlags.resolve): all four
// on 'emulate' (and the experiments that take its flags), --steer-states
// on 'node', whose --snapshots has a default of its own. A negative value
// typed on the command line is an error, not "auto".
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

// autoValue is what one types for an auto flag's default: the value
// -help prints as its default.
const autoValue = "auto"

// autoChosen is what an auto flag's Get returns when "auto" was typed, so
// that rejectNegativeAuto tells it from a negative number.
type autoChosen struct{}

// autoDuration is an auto flag's duration: "auto" means the default
// (stored as -1, resolved from other flags); anything else parses as a
// durationValue.
type autoDuration struct {
	d      *time.Duration
	chosen bool
}

func (v *autoDuration) String() string { return durationValue{v.d}.String() }

func (v *autoDuration) Set(s string) error {
	if v.chosen = s == autoValue; v.chosen {
		*v.d = -1
		return nil
	}
	return durationValue{v.d}.Set(s)
}

// Get returns the duration, or autoChosen when "auto" was typed
// (flag.Getter).
func (v *autoDuration) Get() any {
	if v.chosen {
		return autoChosen{}
	}
	return *v.d
}

// autoInt is an auto flag's integer: "auto" means the default (stored as
// -1, resolved from other flags); anything else parses as flag.IntVar
// parses.
type autoInt struct {
	n      *int
	chosen bool
}

func (v *autoInt) String() string {
	switch {
	case v.n == nil:
		return "0"
	case *v.n < 0:
		return autoValue
	}
	return strconv.Itoa(*v.n)
}

func (v *autoInt) Set(s string) error {
	if v.chosen = s == autoValue; v.chosen {
		*v.n = -1
		return nil
	}
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return fmt.Errorf("want a whole number or %s", autoValue)
	}
	*v.n = int(n)
	return nil
}

// Get returns the integer, or autoChosen when "auto" was typed
// (flag.Getter).
func (v *autoInt) Get() any {
	if v.chosen {
		return autoChosen{}
	}
	return *v.n
}
