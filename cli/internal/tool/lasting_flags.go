package tool

import (
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/report"
)

// The lasting faults on the command line: check's budgets along a path,
// emulate's rates and mean durations and its fault schedule, and the
// declared timer skew of both (one fault model: consequence.Faults,
// emulation.NemesisConfig).

// lastingCheckFlags are check's lasting-fault flags.
type lastingCheckFlags struct {
	crashes, partitions, jumps int
	downtime, length, jump     time.Duration
	kinds                      string
	skew                       time.Duration
}

// register defines the flags on fs.
func (f *lastingCheckFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.crashes, "crashes", 0, "crash-stops allowed along a path: the node stays down, takes no action and loses what is sent to it, until it restarts --crash-downtime later")
	fs.Var(durationValue{&f.downtime}, "crash-downtime", "virtual time a crashed node stays down before it restarts (0: it never restarts)")
	fs.IntVar(&f.partitions, "partitions", 0, "network partitions allowed along a path (one at a time; shapes: --partition-kinds)")
	fs.StringVar(&f.kinds, "partition-kinds", "all", "shapes of partition: isolate, partial (two nodes cut apart, both reach the rest), one-way, split (two groups), comma-separated, or all")
	fs.Var(durationValue{&f.length}, "partition-length", "virtual time a partition lasts before it heals (0: it lasts)")
	fs.IntVar(&f.jumps, "clock-jumps", 0, "clock jumps allowed along a path: a node's Env.Now jumps forward or back by --clock-jump, its timers unchanged")
	fs.Var(durationValue{&f.jump}, "clock-jump", fmt.Sprintf("size of a clock jump (0: %v)", consequence.DefaultClockJump))
	fs.Var(durationValue{&f.skew}, "skew", "declared bound of each node's timer skew: timers fire early or late by up to it, so timeouts of two nodes up to twice it apart may fire in either order (0: none)")
}

// faults returns base with the flags' lasting faults, or a usage error.
func (f *lastingCheckFlags) faults(base consequence.Faults) (consequence.Faults, error) {
	if !countsWithin(report.MaxFaults, f.crashes, f.partitions, f.jumps) {
		return base, usagef("--crashes, --partitions and --clock-jumps must be in 0..%d", report.MaxFaults)
	}
	if anyDurationNegative(f.downtime, f.length, f.jump, f.skew) {
		return base, usagef("--crash-downtime, --partition-length, --clock-jump and --skew must not be negative")
	}
	kinds, err := consequence.ParseCutKinds(f.kinds)
	if err != nil {
		return base, usagef("--partition-kinds: %v", err)
	}
	return base.WithLasting(consequence.Faults{Crashes: f.crashes, Downtime: f.downtime, Partitions: f.partitions,
		PartitionKinds: kinds, PartitionLength: f.length, ClockJumps: f.jumps, ClockJump: f.jump}), nil
}

// describe appends the lasting faults to check's faults line.
func (f *lastingCheckFlags) describe(faults consequence.Faults) string {
	return summaryClause(faults.Crashes > 0, " crashes=%d downtime=%v", faults.Crashes, faults.Downtime) +
		summaryClause(faults.Partitions > 0, " partitions=%d kinds=%v length=%v", faults.Partitions, faults.PartitionKinds, faults.PartitionLength) +
		summaryClause(faults.ClockJumps > 0, " clock-jumps=%d", faults.ClockJumps) +
		summaryClause(f.skew > 0, " skew=%v", f.skew)
}

// lastingEmulateFlags are emulate's lasting-fault flags.
type lastingEmulateFlags struct {
	crashes, partitions, jumps string
	downtime, length, jump     time.Duration
	kinds                      string
	skew                       time.Duration
	schedule                   string

	// Resolved by resolve.
	crashRate, partitionRate, jumpRate float64
	cutKinds                           consequence.CutKinds
	sched                              *emulation.Schedule
}

// register defines the flags on fs.
func (f *lastingEmulateFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.crashes, "crashes", "0", "crash-stops of random live nodes per unit of time, in the churn phase: N/s, N/m, N/h, or 0 (a crashed node stays down --crash-downtime)")
	fs.Var(durationValue{&f.downtime}, "crash-downtime", "mean time a crashed node stays down, exponential (0: it never comes back)")
	fs.StringVar(&f.partitions, "partitions", "0", "network partitions per unit of time, in the churn phase, one at a time: N/s, N/m, N/h, or 0")
	fs.StringVar(&f.kinds, "partition-kinds", "all", "shapes drawn for --partitions: isolate, partial, one-way, split, comma-separated, or all")
	fs.Var(durationValue{&f.length}, "partition-length", "mean time a partition lasts, exponential (0: it lasts)")
	fs.StringVar(&f.jumps, "clock-jumps", "0", "clock jumps of random live nodes per unit of time, in the churn phase: N/s, N/m, N/h, or 0")
	fs.Var(durationValue{&f.jump}, "clock-jump", fmt.Sprintf("size of a clock jump, forward or back (0: %v)", consequence.DefaultClockJump))
	fs.Var(durationValue{&f.skew}, "skew", "bound of each node's timer skew: a node's timers all fire a fixed amount early or late, drawn in [-skew, skew] from its own seed stream; the steering rounds explore it (0: none)")
	fs.StringVar(&f.schedule, "schedule", "", "fault schedule file, one statement a line: at 30s partition {1,2} | {3}; at 90s heal; at 100s crash 2 for 60s; at 2m isolate 3 for 30s; at 3m cut 1->2; at 4m jump 2 +10s (see emulation.ParseSchedule)")
}

// resolve checks the flags and reads the schedule, for nodes nodes.
func (f *lastingEmulateFlags) resolve(nodes int) error {
	if err := parseNamedRates(namedRate{"crashes", f.crashes, &f.crashRate}, namedRate{"partitions", f.partitions, &f.partitionRate}, namedRate{"clock-jumps", f.jumps, &f.jumpRate}); err != nil {
		return err
	}
	if anyDurationNegative(f.downtime, f.length, f.jump, f.skew) {
		return usagef("--crash-downtime, --partition-length, --clock-jump and --skew must not be negative")
	}
	var err error
	if f.cutKinds, err = consequence.ParseCutKinds(f.kinds); err != nil {
		return usagef("--partition-kinds: %v", err)
	}
	return f.resolveSchedule(nodes)
}

// resolveSchedule reads --schedule (nothing without it) and checks it
// against the run's nodes nodes.
func (f *lastingEmulateFlags) resolveSchedule(nodes int) error {
	if f.schedule == "" {
		return nil
	}
	var err error
	if f.sched, err = readSchedule(f.schedule); err != nil {
		return usagef("--schedule %s: %v", f.schedule, err)
	}
	if err := f.sched.Check(nodes); err != nil {
		return usagef("--schedule %s: %v", f.schedule, err)
	}
	return nil
}

// rated reports whether a rate-driven lasting fault is set (they run in
// the churn phase, as --breaks does).
func (f *lastingEmulateFlags) rated() bool {
	return f.crashRate > 0 || f.partitionRate > 0 || f.jumpRate > 0
}

// readSchedule reads and parses a fault schedule file, at most
// emulation.MaxScheduleBytes of it.
func readSchedule(path string) (*emulation.Schedule, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	b, err := io.ReadAll(io.LimitReader(file, emulation.MaxScheduleBytes+1))
	if err != nil {
		return nil, err
	}
	return emulation.ParseSchedule(string(b))
}

// apply sets the run's lasting faults in cfg, the rate-driven ones in the
// churn phase [after, until).
func (f *lastingEmulateFlags) apply(cfg *emulation.Config, after, until time.Duration) {
	n := &cfg.Nemesis
	if f.crashRate > 0 {
		n.Crashes = emulation.CrashConfig{Rate: f.crashRate, Downtime: f.downtime, After: after, Until: until}
	}
	if f.partitionRate > 0 {
		n.Partitions = emulation.PartitionConfig{Rate: f.partitionRate, Length: f.length, Kinds: f.cutKinds, After: after, Until: until}
	}
	if f.jumpRate > 0 {
		n.ClockJumps = emulation.JumpConfig{Rate: f.jumpRate, Amount: f.jump, After: after, Until: until}
	}
	n.TimerSkew, n.Schedule = f.skew, f.sched
	if cfg.Steering != nil {
		cfg.Steering.Controller.TimerSkew = f.skew
	}
}

// printNemesis prints the lasting faults of a run, if it had any.
func printNemesis(w io.Writer, n *emulation.NemesisStats) {
	if n == nil {
		return
	}
	fmt.Fprintf(w, "  lasting:   %d crashes (%d restarted), %d partitions (%d healed), %d clock jumps, %d skipped\n",
		n.Crashes, n.Restarts, n.Partitions, n.Heals, n.ClockJumps, n.Skipped)
}

// describe renders the run's lasting faults for the summary and --json:
// "crashes 1/min (downtime 30s), schedule faults.txt"; "" for none.
func (f *lastingEmulateFlags) describe() string {
	return joinPresentClauses(", ",
		summaryClause(f.crashRate > 0, "crashes %g/min (downtime %s)", f.crashRate, lastingDurationOr(f.downtime, "never back")),
		summaryClause(f.partitionRate > 0, "partitions %g/min (%v, length %s)", f.partitionRate, f.cutKinds, lastingDurationOr(f.length, "lasting")),
		summaryClause(f.jumpRate > 0, "clock jumps %g/min", f.jumpRate),
		summaryClause(f.skew > 0, "timer skew ±%v", f.skew),
		summaryClause(f.schedule != "", "schedule %s", f.schedule),
	)
}

// lastingDurationOr renders d, or what when d is 0 (the fault never ends).
func lastingDurationOr(d time.Duration, what string) string {
	if d == 0 {
		return what
	}
	return d.String()
}
