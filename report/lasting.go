package report

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// Lasting is the lasting-fault budgets of a report's model
// (consequence.Faults from Crashes to ClockJump) and its declared timer
// skew (consequence.ActorOptions.TimerSkew): absent from reports whose
// model has neither. Durations are in nanoseconds.
type Lasting struct {
	Crashes int `json:"crashes,omitempty"`
	// Downtime is a crashed node's downtime (0: it never restarts).
	Downtime time.Duration `json:"downtime_ns,omitempty"`
	// Partitions is the partition budget, of the shapes Kinds
	// (consequence.CutKinds.String; "" for every shape), lasting Length
	// (0: for good).
	Partitions int           `json:"partitions,omitempty"`
	Kinds      string        `json:"partition_kinds,omitempty"`
	Length     time.Duration `json:"partition_length_ns,omitempty"`
	// ClockJumps is the clock-jump budget, of Jump each (0: the default).
	ClockJumps int           `json:"clock_jumps,omitempty"`
	Jump       time.Duration `json:"clock_jump_ns,omitempty"`
	// TimerSkew is the declared bound of each node's timer skew.
	TimerSkew time.Duration `json:"timer_skew_ns,omitempty"`
}

// LastingOf records f's lasting-fault budgets and the timer skew; nil
// when there are none.
func LastingOf(f consequence.Faults, skew time.Duration) *Lasting {
	if !f.Lasting() && skew == 0 {
		return nil
	}
	l := &Lasting{Crashes: f.Crashes, Downtime: f.Downtime, Partitions: f.Partitions, Length: f.PartitionLength,
		ClockJumps: f.ClockJumps, Jump: f.ClockJump, TimerSkew: skew}
	if f.PartitionKinds != 0 {
		l.Kinds = f.PartitionKinds.String()
	}
	return l
}

// Skew returns the declared timer skew (zero for a nil l).
func (l *Lasting) Skew() time.Duration {
	if l == nil {
		return 0
	}
	return l.TimerSkew
}

// Apply returns f with l's lasting-fault budgets (a nil l: none). It
// checks what a model would trust: counts in 0..MaxFaults, durations not
// negative, known shapes.
func (l *Lasting) Apply(f consequence.Faults) (consequence.Faults, error) {
	if l == nil {
		return f.WithLasting(consequence.Faults{}), nil
	}
	for name, n := range map[string]int{"crashes": l.Crashes, "partitions": l.Partitions, "clock jumps": l.ClockJumps} {
		if n < 0 || n > MaxFaults {
			return f, fmt.Errorf("%w: %s %d, want 0..%d", ErrTooLarge, name, n, MaxFaults)
		}
	}
	if l.Downtime < 0 || l.Length < 0 || l.Jump < 0 || l.TimerSkew < 0 {
		return f, fmt.Errorf("%w: negative downtime, partition length, clock jump or timer skew", ErrMalformed)
	}
	g := consequence.Faults{Crashes: l.Crashes, Downtime: l.Downtime, Partitions: l.Partitions, PartitionLength: l.Length,
		ClockJumps: l.ClockJumps, ClockJump: l.Jump}
	if l.Kinds != "" {
		k, err := consequence.ParseCutKinds(l.Kinds)
		if err != nil {
			return f, fmt.Errorf("%w: %w", ErrMalformed, err)
		}
		g.PartitionKinds = k
	}
	return f.WithLasting(g), nil
}
