package emulation

import (
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// The emulator settles the rounds' dead ends with the global check: a
// node can only evaluate a liveness property on the neighbourhood its
// snapshots hold (steering.Stats.DeadEndsConfirmed), the emulator holds
// every node. Each dead end a round predicts is watched from the round's
// virtual time (steering.LivenessWatch, grace
// steering.Config.ConfirmGrace); the liveness properties with a pending
// dead end are evaluated on the global state after every event, which is
// when they can change.

// watchDeadEnds starts watching the fresh dead ends of a round (a reused
// round's are the last round's, already watched).
func (e *Emulator) watchDeadEnds(rep *steering.RoundReport) {
	if e.rounds.deadEnds == nil || rep.Reused {
		return
	}
	for _, p := range rep.Predictions {
		if p.Kind != node.Liveness || p.Critical == nil { // the dead ends Stats.DeadEnds counts
			continue
		}
		e.rounds.deadEnds.Predicted(p.Property, Epoch.Add(e.now), e.liveHolds(p.Property))
	}
}

// observeDeadEnds evaluates the liveness properties with a pending dead
// end on the global state, at the current virtual time.
func (e *Emulator) observeDeadEnds() {
	if e.rounds.deadEnds == nil || e.err != nil {
		return
	}
	for _, name := range e.rounds.deadEnds.Watched() {
		e.rounds.deadEnds.Observe(name, Epoch.Add(e.now), e.liveHolds(name))
	}
}

// liveHolds evaluates liveness property name on the global state; one
// the spec does not declare holds, one that panics fails.
func (e *Emulator) liveHolds(name string) bool {
	for _, p := range e.liveness {
		if p.Name == name {
			return e.checkLiveness(p).Holds
		}
	}
	return true
}
