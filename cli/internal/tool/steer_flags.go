package tool

import (
	"flag"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/steering"
)

// steerFlags are the flags of the snapshot and steering layers that both
// shells host, 'node' and 'emulate' (and the experiments built on
// emulate's flags): registered, defaulted, validated and applied here
// once, so that a flag means the same on a live node as in an emulated
// run. What only one shell has stays with it: --steer-time (a live
// round's wall-time budget; emulated rounds are bounded in states alone,
// so that a run stays a pure function of its seed), --snapshots and
// --gather (a live node always checkpoints, so that its peers can gather
// it; an emulated one only when a mode or --immediate needs it),
// --predictors, and each shell's --reports writer.
type steerFlags struct {
	modeName             string
	immediate            bool
	immediateHop         bool
	states               int // -1 until resolve: "auto", by mode
	breakConn            bool
	lastKnown            time.Duration
	filterHold, vetoHold time.Duration
	rates                rateFlags
	secondHop            int
	lookAheadStates      int
	lookAheadDepth       int
	shipped              string
	faults               faultFlags
	walk                 walkFlags

	// mode is --mode, parsed by resolve; shippedFilters the file --shipped
	// names, read by resolve.
	mode           steering.Mode
	shippedFilters []steering.ShippedFilter
}

// register defines the flags on fs with the library's defaults.
func (s *steerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.modeName, "mode", "off", "execution steering: off, debug (predict from every gathered snapshot and report: deep online debugging) or steer (also install event filters); needs snapshots")
	fs.BoolVar(&s.immediate, "immediate", false, "run the immediate safety check before every event a node handles (in any --mode; needs snapshots: the check reads the last gathered one)")
	fs.BoolVar(&s.immediateHop, "immediate-hop", false, "the immediate check also delivers the messages an event sends to copies of their receivers' last gathered states and vetoes the event if a safety property then fails (a grant that makes a second holder); a stale view can hold a safe event until a newer gather")
	s.states = -1 // chosen by --mode (resolve)
	fs.Var(&autoInt{n: &s.states}, "steer-states", fmt.Sprintf("unique states per search of a steering round (auto: %d with --mode debug, %d otherwise)", steering.DebugMaxStates, steering.SteerMaxStates))
	fs.BoolVar(&s.breakConn, "break-connection", false, "a filtered or vetoed message breaks the connection to its sender even when its type is declared lossy (by default only a type not declared lossy does, for both ends: the paper's TCP reset)")
	fs.BoolVar(&s.breakConn, "steer-break", false, "the former name of --break-connection on node, kept for the command lines that use it")
	fs.Var(durationValue{&s.lastKnown}, "steer-last-known", "a member a gather cannot reach enters steering rounds and the immediate check at its last checkpoint seen at most this long before (0: left out, as in the paper; suits services whose state survives partitions and resets, such as paxos)")
	fs.Var(durationValue{&s.filterHold}, "filter-hold", "longest a filtered event kind whose intervention budget is spent is held before it runs for a window (0: until a fresh round finds it safe or the liveness guard releases it, the library's default)")
	fs.Var(durationValue{&s.vetoHold}, "veto-hold", "longest an event kind the immediate check keeps vetoing is held once its budget is spent (0: until the check passes or the liveness guard releases it, the library's default)")
	s.rates.register(fs)
	fs.IntVar(&s.lookAheadStates, "look-ahead-states", steering.DefaultLookAheadStates, "with --immediate, unique states each of the two searches of the look-ahead before a risky event (a transport error, a peer's first message on a connection) explores; a safety property failing within --look-ahead-depth events with the event and not without it vetoes the event (negative: no look-ahead)")
	fs.IntVar(&s.lookAheadDepth, "look-ahead-depth", steering.DefaultLookAheadDepth, "events past the risky one a look-ahead follows")
	fs.StringVar(&s.shipped, "shipped", "", "with --mode steer, install before the first round the filters 'check --ship FILE' wrote for this node from the initial configuration (the first round replaces them)")
	fs.IntVar(&s.secondHop, "second-hop", 0, "widen every gather to at most this many of the neighbours' neighbours (the peers the last snapshot's members exchanged messages with; 0: the neighbourhood only)")
	s.faults.register(fs)
	s.walk.register(fs)
}

// rateFlags are --adaptive-weights and --gather-on-fault, the rules that
// let what a node observes shape its rounds (walk weights from the
// deployment's observed rates, and rounds in time after a fault); experiments that fix the rest of the
// steering flags take these two alone (RateFlags).
type rateFlags struct{ adaptiveWeights, gatherOnFault bool }

// register defines the two flags on fs.
func (s *rateFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&s.adaptiveWeights, "adaptive-weights", false, "weigh a steering round's walks by the rates of the node's own events (deliveries, timers and their periods, calls, transport errors, resets, refusals) instead of --walk-weights, which the rounds before its first event keep")
	fs.BoolVar(&s.gatherOnFault, "gather-on-fault", false, fmt.Sprintf("gather the neighbourhood right after a node handles a transport error (a broken connection, a neighbour's reset), at most once per %v, so that a round sees a dead end opening within a second rather than at the next periodic gather", steering.FaultGatherSpacing))
}

// apply sets the two rules on c.
func (s *rateFlags) apply(c *steering.Config) {
	c.AdaptiveWeights, c.GatherOnFault = s.adaptiveWeights, s.gatherOnFault
}

// resolve parses --mode, gives --steer-states its default by mode and
// reports the first bad value as a usage error. A negative --steer-states
// typed on the command line is caught before, by rejectNegativeAuto.
func (s *steerFlags) resolve() error {
	mode, err := steering.ParseMode(s.modeName)
	if err != nil {
		return usagef("--mode: want off, debug or steer, got %q", s.modeName)
	}
	s.mode = mode
	if s.states == -1 {
		s.states = mode.DefaultMaxStates()
	}
	return firstFailingStep(s.checkBudgets, s.faults.validate, s.readShippedFilters, s.walk.validate)
}

// checkBudgets checks the search budgets and the holds.
func (s *steerFlags) checkBudgets() error {
	return FirstBrokenRule(
		UsageRule{s.states <= 0, usagef("--steer-states must be positive, got %d", s.states)},
		UsageRule{s.lastKnown < 0, usagef("--steer-last-known must not be negative, got %v", s.lastKnown)},
		UsageRule{AnyConditionHolds(s.filterHold < 0, s.vetoHold < 0), usagef("--filter-hold and --veto-hold must not be negative, got %v and %v", s.filterHold, s.vetoHold)},
		UsageRule{s.secondHop < 0, usagef("--second-hop must not be negative, got %d", s.secondHop)},
		UsageRule{AnyConditionHolds(s.lookAheadStates == 0, s.lookAheadDepth <= 0),
			usagef("--look-ahead-states must not be 0 (negative: no look-ahead) and --look-ahead-depth must be positive, got %d and %d", s.lookAheadStates, s.lookAheadDepth)},
	)
}

// readShippedFilters reads the filters of the --shipped file (none
// without it).
func (s *steerFlags) readShippedFilters() error {
	var err error
	s.shippedFilters, err = readShipped(s.shipped)
	return err
}

// steers reports whether a node runs a steering layer: a mode or the
// immediate check.
func (s *steerFlags) steers() bool { return s.mode != steering.Off || s.immediate }

// checkSnapshots reports a mode or immediate check without snapshots
// (snapEvery 0) as a usage error: rounds start from gathered snapshots,
// and the check reads the last one.
func (s *steerFlags) checkSnapshots(snapEvery time.Duration) error {
	return FirstBrokenRule(
		UsageRule{s.mode != steering.Off && snapEvery == 0, usagef("--mode %v needs a snapshot manager (--snapshots is 0): rounds start from gathered snapshots", s.mode)},
		UsageRule{s.immediate && snapEvery == 0, usagef("--immediate needs a snapshot manager (--snapshots is 0): the check reads the last gathered snapshot")},
	)
}

// apply sets the controller's configuration the flags give on c (resolved
// first); the fields no flag names are left as they are.
func (s *steerFlags) apply(c *steering.Config) {
	c.Mode = s.mode
	c.Faults = s.faults.faults()
	c.MaxStates = s.states
	c.BreakConnection = s.breakConn
	c.ImmediateHop = s.immediateHop
	c.LookAhead = steering.LookAheadConfig{States: s.lookAheadStates, Depth: s.lookAheadDepth}
	c.LastKnownFor = s.lastKnown
	c.FilterHold, c.VetoHold = s.filterHold, s.vetoHold
	s.rates.apply(c)
	s.walk.apply(c)
}
