package tool

import (
	"slices"
	"time"
)

// Table-driven validation of the command line (UsageRule, in
// usage_rules.go, for the rules themselves): rate flags parsed by name
// and the bounds several flags share.

// namedRate is a rate flag (N/s, N/m, N/h or 0) and where its parsed
// value goes.
type namedRate struct {
	name  string
	value string
	into  *float64
}

// parseNamedRates parses each rate in order into its destination; the
// first that does not parse is a usage error naming its flag.
func parseNamedRates(rates ...namedRate) error {
	for _, r := range rates {
		v, err := parseRate(r.value)
		*r.into = v
		if err != nil {
			return usagef("--%s: %v", r.name, err)
		}
	}
	return nil
}

// rangeRule is an integer flag and the least value it may take.
type rangeRule struct {
	value, least int64
}

// rangeRulesHold reports whether every rule's value is at least its least.
func rangeRulesHold(rules ...rangeRule) bool {
	for _, r := range rules {
		if r.value < r.least {
			return false
		}
	}
	return true
}

// countsWithin reports whether every count is in 0..most.
func countsWithin(most int, counts ...int) bool {
	for _, n := range counts {
		if n < 0 || n > most {
			return false
		}
	}
	return true
}

// anyDurationNegative reports whether one of the durations is negative.
func anyDurationNegative(ds ...time.Duration) bool {
	return slices.ContainsFunc(ds, func(d time.Duration) bool { return d < 0 })
}
