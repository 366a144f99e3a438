package cli

import (
	"os"
	"runtime/debug"
)

// The collector's headroom for a search. An exhaustive search holds
// long-lived, pointer-free arrays (the visited set, the parent links, the
// levels), which the collector marks without scanning, so collecting more
// often than Go's default (GOGC=100, which lets the heap grow to twice
// what is live) costs little and keeps the process near what the search
// holds. Measured (docs/PERFORMANCE.md, "Scaling"): 2PC-10 peaks at 1.83
// GB with the default and 1.38 GB with GOGC=10, in the same time; Chord,
// whose every transition allocates, 317 MB at 1M states with the default
// and 218 MB with GOGC=25, about 10% slower.
const (
	// modelGCPercent is for a hand-written model (check --model).
	modelGCPercent = 10
	// serviceGCPercent is for a service's actor model.
	serviceGCPercent = 25
)

// searchGCPercent sets the collector's target for the one search this
// process runs, unless the GOGC environment variable chose one, and
// returns the function that restores the previous target.
func searchGCPercent(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
