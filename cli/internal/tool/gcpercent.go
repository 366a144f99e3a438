package tool

import (
	"os"
	"runtime/debug"
	"runtime/metrics"

	"github.com/seed6eee2ec7/crystalball/consequence"
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
//
// A percentage alone is wrong for small heaps: at 10%, a search holding
// 40 MB collects every 4 MB it allocates, and 2PC-8 ran 1.7 times slower
// than with the default (docs/PERFORMANCE.md, "Two-phase commit, ours and SPIN side by side"). So the heap may
// always grow by gcHeadroom: the target is the larger of the percentage
// and gcHeadroom over the live heap (at most Go's default), adjusted after
// every level of the search.
const (
	// modelGCPercent is for a hand-written model (check --model).
	modelGCPercent = 10
	// serviceGCPercent is for a service's actor model.
	serviceGCPercent = 25
	// gcHeadroom is how much the heap may always grow between collections.
	gcHeadroom = 64 << 20
)

// gcTuner keeps the collector's target at the larger of its percentage
// and gcHeadroom over the live heap, as the search's heap grows.
type gcTuner struct {
	percent int // the least target (modelGCPercent, serviceGCPercent)
	set     int // the target in force
	live    []metrics.Sample
}

// searchGCPercent sets the collector's target for the one search this
// process runs, unless the GOGC environment variable chose one, and
// returns a Progress callback that adjusts it after each level (calling
// next, if not nil) and the function that restores the previous target.
func searchGCPercent(percent int, next func(consequence.Progress)) (progress func(consequence.Progress), restore func()) {
	if os.Getenv("GOGC") != "" {
		return next, func() {}
	}
	t := &gcTuner{percent: percent, live: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.set = t.target()
	old := debug.SetGCPercent(t.set)
	progress = func(p consequence.Progress) {
		if want := t.target(); want != t.set {
			t.set = want
			debug.SetGCPercent(want)
		}
		if next != nil {
			next(p)
		}
	}
	return progress, func() { debug.SetGCPercent(old) }
}

// target returns the collector's target for the live heap now.
func (t *gcTuner) target() int {
	metrics.Read(t.live)
	var live uint64
	if t.live[0].Value.Kind() == metrics.KindUint64 {
		live = t.live[0].Value.Uint64()
	}
	return gcTarget(t.percent, live)
}

// gcTarget returns the collector's target for a live heap of live bytes:
// the larger of percent and gcHeadroom over live, at most Go's default.
func gcTarget(percent int, live uint64) int {
	p := 100
	if live > gcHeadroom {
		p = int(100 * gcHeadroom / live)
	}
	return min(100, max(percent, p))
}
