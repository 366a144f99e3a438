package zoo

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/cache"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/lease"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/lockd"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/logship"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/meter"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/retry"
)

// Cases returns every case of the zoo, sorted by name. Each call returns
// new values; the rates and durations are what an emulated run of the
// case needs for its bug to show (the scoreboard runs them).
func Cases() []Case {
	return []Case{
		{
			Name:     "cache",
			Bug:      "a cache installs the mirror's answer even when the origin's invalidation of a newer version overtook it",
			Fix:      "a cache refuses an answer older than the newest invalidation it has seen, and fetches again",
			Covers:   []string{"reordering"},
			Spec:     cache.Spec,
			Workload: cache.Workload,
			Nodes:    6,
			Property: "NoStaleRead",
			Duration: 2 * time.Minute,
			Check:    Check{Nodes: 3, MaxDepth: 10},
		},
		{
			Name:     "lease",
			Bug:      "a grantor that restarts grants the lease at once, while the lease its previous incarnation granted is still held",
			Fix:      "a grantor waits out a lease's duration after every start before it grants",
			Covers:   []string{"lease", "reset-rst", "reset-silent"},
			Spec:     lease.Spec,
			Workload: lease.Workload,
			Nodes:    5,
			Property: "OneHolder",
			Churn:    2,
			Duration: 4 * time.Minute,
			Check:    Check{Nodes: 3, MaxDepth: 10, Faults: consequence.Faults{Resets: 1}},
		},
		{
			Name:     "lockd",
			Bug:      "the server passes the lock on when the holder's connection breaks, taking the break for a crash",
			Fix:      "the lock stays with its holder until it gives it back or asks for it again",
			Covers:   []string{"break"},
			Spec:     lockd.Spec,
			Workload: lockd.Workload,
			Nodes:    5,
			Property: "MutualExclusion",
			Breaks:   4,
			Duration: 3 * time.Minute,
			Check:    Check{Nodes: 3, MaxDepth: 12, Faults: consequence.Faults{Breaks: 1}},
		},
		{
			Name:     "logship",
			Bug:      "a follower appends whatever entry arrives, trusting the connection to continue its log",
			Fix:      "a follower appends only the entry that continues its log, and tells the leader what it has otherwise",
			Covers:   []string{"reset-rst", "reset-silent"},
			Spec:     logship.Spec,
			Workload: logship.Workload,
			Nodes:    5,
			Property: "FollowerPrefix",
			Churn:    1,
			Duration: 3 * time.Minute,
			Check:    Check{Nodes: 2, MaxDepth: 12, Faults: consequence.Faults{Resets: 1}},
		},
		{
			Name:     "meter",
			Bug:      "the server bills every usage report that arrives, and a client sends a report again when its Ack is lost",
			Fix:      "reports are numbered per client and each number is billed once (duplicates are acknowledged again)",
			Covers:   []string{"datagram-loss", "partition"},
			Spec:     meter.Spec,
			Workload: meter.Workload,
			Nodes:    6,
			Property: "NoDoubleBilling",
			Duration: 2 * time.Minute,
			Check:    Check{Nodes: 2, MaxDepth: 12, Faults: consequence.Faults{Drops: 1}},
		},
		{
			Name:     "retry",
			Bug:      "a client counts a grant left over from an earlier attempt for its current one",
			Fix:      "attempts are numbered, and a grant counts only for its own attempt",
			Covers:   []string{"timer-race"},
			Spec:     retry.Spec,
			Workload: retry.Workload,
			Nodes:    6,
			Property: "LockBacked",
			Duration: 3 * time.Minute,
			Check:    Check{Nodes: 4, MaxDepth: 12},
		},
	}
}
