package steering

import "github.com/seed6eee2ec7/crystalball/consequence"

// DefaultFaults returns the faults a round explores along a path unless
// its configuration says otherwise (Config.Faults is the zero budget, so
// the shells set it from here: emulation.ModeConfig and `crystalball
// node` and `emulate`): one silent reset, one connection break, one
// dropped datagram and one refused send, in modes Debug and Steer alike.
//
// Steer used to explore no break and no drop, to keep its rounds cheap.
// But a round that cannot take the fault a bug needs cannot prevent it:
// with breaks and drops the zoo's steered runs prevented the lock
// server's bug (a break taken for a crash) in 2 of 3 seeds instead of 1,
// and the meter's (a lost Ack) in 1 of 3 instead of 0
// (docs/history/results-steering-rules.md, "The faults a round explores").
// The state budget still bounds each
// search, but a round that predicts more runs more filter checks: the
// zoo's steered logship took 2.8 times the CPU, lockd 3.4 times (of a
// tenth of a second), meter 1.1 times (docs/PERFORMANCE.md);
// --steer-breaks 0 --steer-drops 0 restores the old budget. A service that
// sends no datagram gets no drop action, and one that never calls
// node.Env.TrySend no refusal: those budgets add nothing to its searches.
//
// It also allows one crash-stop, one partition and one clock jump along a
// path, with their durations and shapes as observed: a round explores a
// lasting fault only once its node has seen the deployment show it
// (RoundFaults), so for a deployment without them nothing changes.
//
// No lost, duplicated or reordered message: a service's declaration
// (node.Spec.Delivery) says what the network may do, but a round's budget
// is states, and on a service whose every message is declared unreliable
// those branches crowd out the paths a prediction needs (the etcd raft
// store's seed-9 debugging run predicts its violation 102 s ahead without
// them and not at all with one of each). Config.Faults' Losses, Duplicates
// and Reorders turn them on.
func DefaultFaults() consequence.Faults {
	return consequence.Faults{Resets: 1, SilentResets: true, Breaks: 1, Drops: 1, Refusals: 1, Crashes: 1, Partitions: 1, ClockJumps: 1}
}
