package tool

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// noRates are the spellings of no events at all.
var noRates = []string{"0", "", "none", "off"}

// rateUnits are the units of a rate, by their spellings.
var rateUnits = map[string]time.Duration{
	"s": time.Second, "sec": time.Second,
	"m": time.Minute, "min": time.Minute,
	"h": time.Hour, "hour": time.Hour,
}

// parseRate parses an event rate such as "1/m", "0.5/s", "30/h" or "0" and
// returns events per minute.
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if slices.Contains(noRates, s) {
		return 0, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("invalid rate %q: want N/s, N/m or N/h (e.g. 1/m), or 0", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || !finiteNonNegativeRate(v) {
		return 0, fmt.Errorf("invalid rate %q: %q is not a non-negative number", s, num)
	}
	per, ok := rateUnits[unit]
	if !ok {
		return 0, fmt.Errorf("invalid rate %q: unit %q is not s, m or h", s, unit)
	}
	return v * float64(time.Minute) / float64(per), nil
}

// finiteNonNegativeRate reports whether v is a number in 0..MaxFloat64: not
// negative, infinite or NaN.
func finiteNonNegativeRate(v float64) bool { return v >= 0 && v <= math.MaxFloat64 }
