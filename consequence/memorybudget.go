package consequence

import "runtime/metrics"

// The memory budget (Options.MaxMemory) is watched, like the time budget,
// every checkEvery states and at every level boundary. Two readings of
// the Go runtime (runtime/metrics, about 200 ns each; never
// runtime.ReadMemStats, which stops the world) decide:
//
//   - the live heap after the last collection above 90% of the budget:
//     the search's own data no longer fits, and the collector would run
//     back to back to stay under a memory limit set to the budget;
//   - the memory the heap holds from the system (mapped minus released)
//     above the budget: what RSS would show.
//
// Garbage between collections does not count against the first, so a
// search is not stopped by memory it would get back.

const (
	metricLive     = "/gc/heap/live:bytes"
	metricTotal    = "/memory/classes/total:bytes"
	metricReleased = "/memory/classes/heap/released:bytes"
)

// memoryUse reads the live heap and the memory held from the system.
func memoryUse() (live, held uint64) {
	s := [3]metrics.Sample{{Name: metricLive}, {Name: metricTotal}, {Name: metricReleased}}
	metrics.Read(s[:])
	read := func(i int) uint64 {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return s[i].Value.Uint64()
	}
	live, total, released := read(0), read(1), read(2)
	if released < total {
		held = total - released
	}
	return live, held
}

// overMemory reports whether the process is over the memory budget,
// recording the largest reading in Result.PeakMemory.
func (r *run[S, A]) overMemory() bool {
	if r.opts.MaxMemory == 0 {
		return false
	}
	live, held := memoryUse()
	for {
		old := r.peak.Load()
		if held <= old || r.peak.CompareAndSwap(old, held) {
			break
		}
	}
	return overBudget(live, held, r.opts.MaxMemory)
}

// overBudget is the rule above for readings live and held.
func overBudget(live, held uint64, budget int64) bool {
	b := uint64(budget)
	return live > b/10*9 || held > b
}

// OverMemory reports whether the process is over a memory budget of
// budget bytes by the rule a search's Options.MaxMemory follows, and the
// memory it holds from the system: for other long runs of the same
// process (emulate --max-memory) to stop by the same measure. A budget of
// zero or less is never over.
func OverMemory(budget int64) (over bool, held uint64) {
	if budget <= 0 {
		return false, 0
	}
	live, held := memoryUse()
	return overBudget(live, held, budget), held
}
