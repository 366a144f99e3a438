package emulation

import (
	"slices"
	"time"

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
	// of a round in modes Debug and Steer: steering's, which the live
	// node's defaults share (steering.Mode.DefaultMaxStates).
	DebugMaxStates = steering.DebugMaxStates
	SteerMaxStates = steering.SteerMaxStates
)

// Snapshot timeouts on finite access links (LinkedSnapshots). A snapshot
// protocol message waits its turn at the sender's uplink behind the
// service's data, FIFO (package documentation, "Bandwidth and send
// queues"): under Bullet′ on the INET links (1 Mb/s up) they waited 0.8 s
// on average and up to 5.6 s (25 nodes, seed 1), past
// snapshot.DefaultRecordTimeout (2 s) and DefaultGatherTimeout (5 s), and
// 24 of 30 gathers were given up: 8 at the timeouts, 16 because the
// neighbourhood changed in each of the gather's rounds (hence
// FinishLastRound; longer timeouts alone gave up as many). The figures are
// for an INETUplink and scale with INETUplink/Uplink.
const (
	// LinkedRecordTimeout lets an answer wait for its channels' markers
	// through one uplink crossing at the longest wait measured.
	LinkedRecordTimeout = 6 * time.Second
	// LinkedGatherTimeout lets a round last a request's crossing, the
	// record and the answer's crossing.
	LinkedGatherTimeout = 15 * time.Second
)

// LinkedSnapshots returns c for a run on network n: unchanged when n has
// no finite link (every mode without bandwidth runs as before), else with
// GatherTimeout and RecordTimeout at least LinkedGatherTimeout and
// LinkedRecordTimeout scaled by INETUplink/n.Uplink (unscaled when only
// the downlink is finite: waits at a 5 Mb/s downlink stayed under 0.6 s)
// and FinishLastRound set: a neighbourhood that changes while a round
// waits seconds on the links (Bullet′'s peering does every second) would
// otherwise give up nearly every gather after its last round. A timeout c
// sets longer is kept. `crystalball emulate` applies it to --mode and
// --snapshots runs; ModeConfig, which does not know the network, does not.
func LinkedSnapshots(c snapshot.Config, n NetworkConfig) snapshot.Config {
	if n.Uplink <= 0 && n.Downlink <= 0 {
		return c
	}
	scale := func(d time.Duration) time.Duration {
		if n.Uplink <= 0 {
			return d
		}
		return time.Duration(float64(d) * float64(INETUplink) / float64(n.Uplink))
	}
	c.GatherTimeout = max(c.GatherTimeout, snapshot.DefaultGatherTimeout, scale(LinkedGatherTimeout))
	c.RecordTimeout = max(c.RecordTimeout, snapshot.DefaultRecordTimeout, scale(LinkedRecordTimeout))
	c.FinishLastRound = true
	return c
}

// ModeConfig returns the snapshots and steering of an emulated run of
// nodes nodes in mode (Debug or Steer; Off with immediate is the immediate
// check alone, and Off without it is nil, nil), with immediate turning on
// the immediate safety check, at the defaults above and the faults of
// steering.DefaultFaults in both modes: the configuration
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
	snaps := &SnapshotConfig{Manager: snapshot.Config{Interval: ModeSnapshotInterval, GatherConfig: snapshot.GatherConfig{GatherInterval: ModeSnapshotInterval}}}
	steer := &SteeringConfig{
		Controller: steering.Config{Mode: mode, Faults: steering.DefaultFaults(), SearchBudget: steering.SearchBudget{MaxStates: mode.DefaultMaxStates()}},
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
