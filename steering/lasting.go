package steering

import (
	"cmp"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// The lasting faults in the rounds: a round explores crash-stops,
// partitions and clock jumps only as the deployment is seen to show them,
// as its walk weights follow the rates observed (AdaptiveWeights). A
// shell reports each lasting fault it sees to the node's layer
// (Layer.ObserveFault; the emulator reports every fault its nemesis
// injects to every node's layer, as a deployment's monitoring would); the layer
// accounts them with the node's own events (EventRates.Lasting), and a
// round's fault budget is RoundFaults of them: a kind never observed stays
// out of the rounds, so nothing changes for a deployment without it.

// LastingFault is one lasting fault a shell saw happen in the deployment.
type LastingFault struct {
	// Kind is consequence.ActCrash, ActPartition or ActClockJump.
	Kind consequence.ActorActionKind
	// Cut is a partition's shape (one of consequence.CutKinds).
	Cut consequence.CutKinds
	// For is a crash's downtime and a partition's length (zero: for
	// good), a clock jump's size (its absolute value).
	For time.Duration
}

// LastingRates counts the lasting faults observed.
type LastingRates struct {
	// Crashes counts crash-stops; Restarting of them came back, after
	// Downtime in all.
	Crashes, Restarting uint64
	Downtime            time.Duration
	// Partitions counts partitions, of the shapes Kinds; Healing of them
	// healed, after Length in all.
	Partitions, Healing uint64
	Length              time.Duration
	Kinds               consequence.CutKinds
	// ClockJumps counts clock jumps, Jumped sums their sizes.
	ClockJumps uint64
	Jumped     time.Duration
}

// Add counts f.
func (r *LastingRates) Add(f LastingFault) {
	switch f.Kind {
	case consequence.ActCrash:
		r.Crashes++
		countEnded(&r.Restarting, &r.Downtime, f.For)
	case consequence.ActPartition:
		r.Partitions++
		r.Kinds |= f.Cut & consequence.CutAll
		countEnded(&r.Healing, &r.Length, f.For)
	case consequence.ActClockJump:
		r.ClockJumps++
		r.Jumped += max(f.For, -f.For) // a jump's size, either way
	}
}

// countEnded counts a crash or partition that lasted d (n of them ended,
// after total in all); one for good (d zero or less) did not end.
func countEnded(n *uint64, total *time.Duration, d time.Duration) {
	if d > 0 {
		*n++
		*total += d
	}
}

// RoundFaults returns the faults a round explores along a path: base,
// with each lasting fault kept only if the rates show it — crashes with
// the mean downtime of those that came back (never, if none did) unless
// base sets one, partitions of the shapes observed with their mean length
// unless base sets them, clock jumps of the mean size observed unless
// base sets one — and its budget set to zero otherwise.
func (r EventRates) RoundFaults(base consequence.Faults) consequence.Faults {
	f, l := base, r.Lasting
	l.crashFaults(&f)
	l.partitionFaults(&f)
	l.clockJumpFaults(&f)
	return f
}

// crashFaults keeps f's crashes if any were observed, with their mean
// downtime unless f sets one, and drops them otherwise.
func (l LastingRates) crashFaults(f *consequence.Faults) {
	if l.Crashes == 0 {
		f.Crashes, f.Downtime = 0, 0
		return
	}
	fillMean(&f.Downtime, l.Downtime, l.Restarting)
}

// partitionFaults keeps f's partitions if any were observed, of the
// shapes observed and their mean length unless f sets them, and drops
// them otherwise.
func (l LastingRates) partitionFaults(f *consequence.Faults) {
	if l.Partitions == 0 {
		f.Partitions, f.PartitionKinds, f.PartitionLength = 0, 0, 0
		return
	}
	f.PartitionKinds = cmp.Or(f.PartitionKinds, l.Kinds)
	fillMean(&f.PartitionLength, l.Length, l.Healing)
}

// clockJumpFaults keeps f's clock jumps if any were observed, of their
// mean size unless f sets one, and drops them otherwise.
func (l LastingRates) clockJumpFaults(f *consequence.Faults) {
	if l.ClockJumps == 0 {
		f.ClockJumps, f.ClockJump = 0, 0
		return
	}
	fillMean(&f.ClockJump, l.Jumped, l.ClockJumps) // a mean of zero leaves it unset
}

// fillMean sets an unset duration *d to the mean total/n of the n
// observations (left unset when there are none, or their total is zero).
func fillMean(d *time.Duration, total time.Duration, n uint64) {
	if *d == 0 && n > 0 {
		*d = total / time.Duration(n)
	}
}

// addWeights adds the walk weights of the lasting faults observed to w
// (WalkWeights), per node-second × mean latency (perNode) and at least
// FaultWeightFloor; restarts and heals are due events and weigh 1.
func (l LastingRates) addWeights(w map[consequence.ActorActionKind]float64, perNode func(uint64) float64) {
	for _, k := range []struct {
		kind consequence.ActorActionKind
		n    uint64
	}{{consequence.ActCrash, l.Crashes}, {consequence.ActPartition, l.Partitions}, {consequence.ActClockJump, l.ClockJumps}} {
		if k.n > 0 {
			w[k.kind] = max(perNode(k.n), FaultWeightFloor)
		}
	}
}

// ObserveFault tells the layer of a lasting fault the shell saw in the
// deployment, for the rounds' fault mix (RoundFaults of the node's
// rates). Call it from the goroutine that steps the node (the core
// goroutine; in emulation, between events).
func (l *Layer) ObserveFault(f LastingFault) { l.rates.r.Lasting.Add(f) }

// roundFaults returns the faults this round explores: Config.Faults, its
// lasting faults as the node's layer observed them (RoundFaults).
func (c *Controller) roundFaults() consequence.Faults {
	return EventRates{Lasting: c.lasting}.RoundFaults(c.cfg.Faults)
}
