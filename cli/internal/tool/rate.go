package tool

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// parseRate parses an event rate such as "1/m", "0.5/s", "30/h" or "0" and
// returns events per minute.
func parseRate(s string) (float64, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "" || s == "none" || s == "off" {
		return 0, nil
	}
	num, unit, ok := strings.Cut(s, "/")
	if !ok {
		return 0, fmt.Errorf("invalid rate %q: want N/s, N/m or N/h (e.g. 1/m), or 0", s)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("invalid rate %q: %q is not a non-negative number", s, num)
	}
	var per time.Duration
	switch unit {
	case "s", "sec":
		per = time.Second
	case "m", "min":
		per = time.Minute
	case "h", "hour":
		per = time.Hour
	default:
		return 0, fmt.Errorf("invalid rate %q: unit %q is not s, m or h", s, unit)
	}
	return v * float64(time.Minute) / float64(per), nil
}
