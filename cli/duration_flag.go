package cli

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
