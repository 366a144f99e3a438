package emulation

import (
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Defaults of the steering modes in an emulated run: what `crystalball
// emulate --mode debug|steer` runs with no other flag, and what ModeConfig
// returns. Deep online debugging (Debug) runs a few predictors that each
// explore far, as the paper's 100-node runs did ("consequence prediction
// ... for up to several hundred seconds"); with Steer every node predicts,
// so a round must stay cheap.
const (
	// ModeSnapshotInterval is every node's checkpoint and gather interval.
	ModeSnapshotInterval = 10 * time.Second
	// DebugPredictors is the number of predicting nodes in mode Debug,
	// spread over the IDs from n1 (SpreadPredictors).
	DebugPredictors = 2
	// DebugMaxStates and SteerMaxStates are the unique states per search
	// of a round in modes Debug and Steer.
	DebugMaxStates = 50_000
	SteerMaxStates = 2_000
	// ModeResets is the number of (silent) node resets a round explores
	// along a path, in both modes.
	ModeResets = 1
	// DebugBreaks is the number of connection breaks a round explores
	// along a path in mode Debug (none in mode Steer).
	DebugBreaks = 1
	// ModeRefusals is the number of refused sends (node.Env.TrySend) a
	// round explores along a path, in both modes; a service that never
	// calls TrySend explores nothing more for it.
	ModeRefusals = 1
)

// ModeConfig returns the snapshots and steering of an emulated run of
// nodes nodes in mode (Debug or Steer; Off with immediate is the immediate
// check alone, and Off without it is nil, nil), with immediate turning on
// the immediate safety check, at the defaults above: the configuration
// `crystalball emulate --mode M [--immediate]` builds. Callbacks are
// unset; the caller adds its own (SteeringConfig.OnRound, …).
func ModeConfig(mode steering.Mode, nodes int, immediate bool) (*SnapshotConfig, *SteeringConfig) {
	if mode == steering.Off && !immediate {
		return nil, nil
	}
	var predicting []node.ID
	if mode == steering.Debug {
		predicting = SpreadPredictors(DebugPredictors, nodes)
	}
	snaps := &SnapshotConfig{Manager: snapshot.Config{Interval: ModeSnapshotInterval, GatherInterval: ModeSnapshotInterval}}
	faults := consequence.Faults{Resets: ModeResets, SilentResets: true, Refusals: ModeRefusals}
	states := SteerMaxStates
	if mode == steering.Debug {
		faults.Breaks, states = DebugBreaks, DebugMaxStates
	}
	steer := &SteeringConfig{
		Controller: steering.Config{Mode: mode, Faults: faults, MaxStates: states},
		Immediate:  immediate,
	}
	if predicting != nil {
		is := func(id node.ID) bool { return slices.Contains(predicting, id) }
		steer.Predictors = is
		if !immediate {
			// Only the predictors need neighbourhood snapshots; with the
			// immediate check every node needs its view.
			snaps.Gatherers = is
		}
	}
	return snaps, steer
}

// SpreadPredictors returns n node IDs spread evenly over 1..nodes from n1
// (1 + i·nodes/n), or nil — every node predicts — when n is not positive
// or at least nodes.
func SpreadPredictors(n, nodes int) []node.ID {
	if n <= 0 || n >= nodes {
		return nil
	}
	ids := make([]node.ID, n)
	for i := range ids {
		ids[i] = node.ID(1 + i*nodes/n)
	}
	return ids
}
