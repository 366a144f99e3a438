package emulation

import (
	"fmt"
	"math"
	mrand "math/rand/v2"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// NemesisConfig schedules the lasting faults, beside churn and breaks:
// crash-stops, partitions and clock jumps at random (Poisson processes of
// their own, each drawn from its own seed stream), per-node timer skew,
// and a fault schedule (a nemesis script: Schedule). Its zero value
// injects nothing and draws nothing, so a run without it is the run it
// always was. The faults mean what the explorer's mean (package
// consequence, "Lasting faults"): a crash is Crash, a partition
// PartitionGroups, Isolate, Partition or CutOneWay, a jump JumpClock.
type NemesisConfig struct {
	// Crashes schedules crash-stops of random live nodes.
	Crashes CrashConfig
	// Partitions schedules partitions of random shapes.
	Partitions PartitionConfig
	// ClockJumps schedules clock jumps of random live nodes.
	ClockJumps JumpConfig
	// TimerSkew bounds each node's timer skew: every timer of node n fires
	// skew(n) after its deadline (before it, when negative; never before
	// the time it was set), skew(n) drawn once, uniformly in
	// [-TimerSkew, TimerSkew], from the node's own seed stream. Zero: no
	// skew; negative is an error.
	TimerSkew time.Duration
	// Schedule is a fault schedule (ParseSchedule): faults at given
	// times. Nil: none.
	Schedule *Schedule
}

// CrashConfig schedules crash-stops: a random live node goes down
// (Crash) and comes back after an exponential downtime, or never. The
// crashes form a Poisson process.
type CrashConfig struct {
	// Rate is the mean number of crashes per minute of virtual time. Zero
	// disables them; it must be finite and not negative.
	Rate float64
	// Downtime is the mean time a crashed node stays down (exponential).
	// Zero: a crashed node never comes back.
	Downtime time.Duration
	// After and Until bound the phase in which crashes happen, as
	// BreakConfig's do (zero Until: no end).
	After, Until time.Duration
}

// PartitionConfig schedules partitions: one at a time, of a shape drawn
// among Kinds, lasting an exponential length (or for good). They form a
// Poisson process; one that comes while a partition it made is in place
// is skipped.
type PartitionConfig struct {
	// Rate is the mean number of partitions per minute of virtual time.
	// Zero disables them; it must be finite and not negative.
	Rate float64
	// Length is the mean time a partition lasts (exponential). Zero: it
	// lasts for good.
	Length time.Duration
	// Kinds are the shapes drawn from (consequence.CutKinds; zero: every
	// shape): a random node isolated, two random nodes cut apart
	// (partial), a random link cut one way, the nodes split into two
	// random groups of at least two each.
	Kinds consequence.CutKinds
	// After and Until bound the phase, as BreakConfig's do.
	After, Until time.Duration
}

// JumpConfig schedules clock jumps: a random live node's clock jumps
// forward or back (one chance in two) by Amount. They form a Poisson
// process.
type JumpConfig struct {
	// Rate is the mean number of jumps per minute of virtual time. Zero
	// disables them; it must be finite and not negative.
	Rate float64
	// Amount is the size of a jump; zero means consequence.DefaultClockJump.
	Amount time.Duration
	// After and Until bound the phase, as BreakConfig's do.
	After, Until time.Duration
}

// NemesisStats counts the lasting faults a run injected (NemesisConfig,
// and the scenario methods Crash, PartitionGroups, CutOneWay, JumpClock).
type NemesisStats struct {
	// Crashes counts crash-stops, Restarts the crashed nodes that came
	// back.
	Crashes  int64 `json:"crashes"`
	Restarts int64 `json:"restarts"`
	// Partitions counts partitions put in place (a one-way cut is one),
	// Heals the timed heals and heal lines of the schedule.
	Partitions int64 `json:"partitions"`
	Heals      int64 `json:"heals"`
	// ClockJumps counts clock jumps.
	ClockJumps int64 `json:"clock_jumps"`
	// Skipped counts faults that found no target (no live node, a
	// partition of the process already in place, a schedule line whose
	// node was not live).
	Skipped int64 `json:"skipped"`
}

// Nemesis stream labels (seed.go's convention): each process draws from
// its own stream, so enabling one shifts no other.
const (
	streamCrashes    uint64 = 0x6372617368657300 // "crashes"
	streamPartitions uint64 = 0x706172746974696f // "partitio"
	streamJumps      uint64 = 0x6a756d7073000000 // "jumps"
	streamSkew       uint64 = 0x736b657700000000 // "skew"
)

// The nemesis queue items (itemNemesis): what the item's id names.
const (
	nemCrashTick = iota + 1
	nemPartitionTick
	nemJumpTick
	nemRestart  // node, inc: a crashed node comes back, if still down in inc
	nemHeal     // heal record index
	nemSchedule // schedule line index
)

// nemesis is the emulator's state of the lasting faults (nil until one is
// configured or injected).
type nemesis struct {
	crash, part, jump *mrand.Rand
	// partIn is the heal record of the rate process's partition in place
	// (-1: none).
	partIn int
	// heals are the links each timed partition cut, by record.
	heals [][]cutLink
	st    NemesisStats
}

// cutLink is one cut a partition made: the link between a and b both
// ways, or what a sends b (oneWay).
type cutLink struct {
	a, b   node.ID
	oneWay bool
}

// validate checks c as ChurnConfig and BreakConfig are checked.
func (c NemesisConfig) validate(nodes int) error {
	phases := []struct {
		name         string
		rate         float64
		after, until time.Duration
	}{
		{"Crashes", c.Crashes.Rate, c.Crashes.After, c.Crashes.Until},
		{"Partitions", c.Partitions.Rate, c.Partitions.After, c.Partitions.Until},
		{"ClockJumps", c.ClockJumps.Rate, c.ClockJumps.After, c.ClockJumps.Until},
	}
	for _, p := range phases {
		switch {
		case math.IsNaN(p.rate) || math.IsInf(p.rate, 0) || p.rate < 0:
			return fmt.Errorf("emulation: Config.Nemesis.%s.Rate must be a finite, non-negative number per minute, got %v", p.name, p.rate)
		case p.after < 0 || p.until < 0:
			return fmt.Errorf("emulation: Config.Nemesis.%s.After and Until must not be negative, got %v and %v", p.name, p.after, p.until)
		case p.until > 0 && p.until <= p.after:
			return fmt.Errorf("emulation: Config.Nemesis.%s.Until (%v) must be greater than After (%v)", p.name, p.until, p.after)
		}
	}
	switch {
	case c.Crashes.Downtime < 0 || c.Partitions.Length < 0 || c.ClockJumps.Amount < 0 || c.TimerSkew < 0:
		return fmt.Errorf("emulation: Config.Nemesis durations (downtime, length, jump, skew) must not be negative")
	case c.Partitions.Kinds&^consequence.CutAll != 0:
		return fmt.Errorf("emulation: Config.Nemesis.Partitions.Kinds: unknown kinds %#x", uint8(c.Partitions.Kinds))
	}
	if c.Schedule != nil {
		return c.Schedule.Check(nodes)
	}
	return nil
}

// active reports whether c configures anything.
func (c NemesisConfig) active() bool {
	return c.Crashes.Rate > 0 || c.Partitions.Rate > 0 || c.ClockJumps.Rate > 0 || c.TimerSkew > 0 || c.Schedule != nil
}

// nemesisState returns the emulator's nemesis state, creating it.
func (e *Emulator) nemesisState() *nemesis {
	if e.nem == nil {
		e.nem = &nemesis{partIn: -1}
	}
	return e.nem
}

// startNemesis draws the nodes' skews and schedules the first fault of
// each process and the schedule's lines (New).
func (e *Emulator) startNemesis() {
	c := e.cfg.Nemesis
	if !c.active() {
		return
	}
	nm := e.nemesisState()
	if c.TimerSkew > 0 {
		for _, n := range e.nodes[1:] {
			r := mrand.New(mrand.NewPCG(deriveSeed(e.cfg.Seed, streamSkew, uint64(n.id)), streamSkew))
			n.skew = time.Duration((2*r.Float64() - 1) * float64(c.TimerSkew))
		}
	}
	if c.Crashes.Rate > 0 {
		nm.crash = newStream(e.cfg.Seed, streamCrashes)
		e.scheduleNemesis(nm.crash, c.Crashes.Rate, c.Crashes.After, c.Crashes.Until, nemCrashTick)
	}
	if c.Partitions.Rate > 0 {
		nm.part = newStream(e.cfg.Seed, streamPartitions)
		e.scheduleNemesis(nm.part, c.Partitions.Rate, c.Partitions.After, c.Partitions.Until, nemPartitionTick)
	}
	if c.ClockJumps.Rate > 0 {
		nm.jump = newStream(e.cfg.Seed, streamJumps)
		e.scheduleNemesis(nm.jump, c.ClockJumps.Rate, c.ClockJumps.After, c.ClockJumps.Until, nemJumpTick)
	}
	if s := c.Schedule; s != nil {
		for i, f := range s.Faults {
			e.queueNemesis(f.At, nemSchedule, uint64(i), node.None, 0)
		}
	}
}

// scheduleNemesis queues a process's next fault after from, unless its
// phase is over by then.
func (e *Emulator) scheduleNemesis(r *mrand.Rand, rate float64, from, until time.Duration, op uint64) {
	at := from + time.Duration(r.ExpFloat64()*float64(time.Minute)/rate)
	if until > 0 && at >= until {
		return
	}
	e.queueNemesis(at, op, 0, node.None, 0)
}

// queueNemesis queues a nemesis item: op and its argument in the item's
// id (op<<32 | arg).
func (e *Emulator) queueNemesis(at time.Duration, op, arg uint64, id node.ID, inc uint64) {
	it := e.q.alloc()
	it.kind, it.at, it.id, it.node, it.inc = itemNemesis, max(at, e.now), op<<32|arg, id, inc
	e.q.push(it)
}

// nemesisDue carries out a nemesis item and reports whether it was an
// event.
func (e *Emulator) nemesisDue(it *item) bool {
	nm := e.nemesisState()
	c := e.cfg.Nemesis
	switch op, arg := it.id>>32, it.id&(1<<32-1); op {
	case nemCrashTick:
		defer e.scheduleNemesis(nm.crash, c.Crashes.Rate, e.now, c.Crashes.Until, nemCrashTick)
		return e.randomCrash()
	case nemPartitionTick:
		defer e.scheduleNemesis(nm.part, c.Partitions.Rate, e.now, c.Partitions.Until, nemPartitionTick)
		return e.randomPartition()
	case nemJumpTick:
		defer e.scheduleNemesis(nm.jump, c.ClockJumps.Rate, e.now, c.ClockJumps.Until, nemJumpTick)
		return e.randomJump()
	case nemRestart:
		n := e.nodes[it.node]
		if n.live || n.inc != it.inc {
			return false // brought up (and maybe down again) otherwise
		}
		nm.st.Restarts++
		e.bringUp(n, "up")
		return true
	case nemHeal:
		e.healRecord(int(arg))
		return true
	case nemSchedule:
		return e.runScheduled(e.cfg.Nemesis.Schedule.Faults[arg])
	}
	panic(fmt.Sprintf("emulation: unknown nemesis item %#x", it.id))
}

// nemesisCrash crashes live node id for down as the nemesis does: counted
// and observed.
func (e *Emulator) nemesisCrash(id node.ID, down time.Duration) {
	if err := e.Crash(id, down); err != nil && err != e.err {
		panic(fmt.Sprintf("emulation: crash of live node %v: %v", id, err))
	}
	e.observeLasting(consequence.ActCrash, 0, down)
}

// nemesisJump jumps node id's clock by d as the nemesis does.
func (e *Emulator) nemesisJump(id node.ID, d time.Duration) {
	if err := e.JumpClock(id, d); err != nil && err != e.err {
		panic(fmt.Sprintf("emulation: clock jump of node %v: %v", id, err))
	}
	e.observeLasting(consequence.ActClockJump, 0, d)
}

// randomCrash crashes a random live node for an exponential downtime.
// Draw order: victim, downtime.
func (e *Emulator) randomCrash() bool {
	nm := e.nemesis()
	if len(e.live) == 0 {
		nm.st.Skipped++
		return false
	}
	id := e.live[nm.crash.IntN(len(e.live))]
	var down time.Duration
	if d := e.cfg.Nemesis.Crashes.Downtime; d > 0 {
		down = max(time.Duration(nm.crash.ExpFloat64()*float64(d)), time.Nanosecond)
	}
	e.nemesisCrash(id, down)
	return true
}

// randomJump jumps a random live node's clock. Draw order: node, sign.
func (e *Emulator) randomJump() bool {
	nm := e.nemesis()
	if len(e.live) == 0 {
		nm.st.Skipped++
		return false
	}
	id := e.live[nm.jump.IntN(len(e.live))]
	d := e.cfg.Nemesis.ClockJumps.Amount
	if d == 0 {
		d = consequence.DefaultClockJump
	}
	if nm.jump.IntN(2) == 1 {
		d = -d
	}
	e.nemesisJump(id, d)
	return true
}

// nemesis returns the nemesis state of a run that has one.
func (e *Emulator) nemesis() *nemesis { return e.nem }

// nemesisResult returns the run's nemesis statistics (nil without any
// lasting fault configured or injected).
func (e *Emulator) nemesisResult() *NemesisStats {
	if e.nem == nil {
		return nil
	}
	st := e.nem.st
	return &st
}
