package experiments

import (
	"time"

	"github.com/seed6eee2ec7/crystalball/steering"
)

// The experiments' documented figures (docs/RESULTS.md) were measured
// before issue 27 changed two rules of the library; until they are
// re-measured with the new rules the experiments keep the rules they were
// measured with, and say so here, in one place.

// periodicOnly is the gather rule they were measured with: gathers on the
// period alone, none at start or on a neighbourhood change
// (snapshot.Config.GatherSettle negative).
const periodicOnly = -1

// Escalation holds they were measured with (steering.Config.FilterHold
// and VetoHold): a filter's escalated kind held at most 10 s, a veto's a
// minute. The library's default holds until safe, with the liveness guard.
const (
	measuredFilterHold = 10 * time.Second
	measuredVetoHold   = time.Minute
)

// measuredHolds gives c's zero hold bounds the measured ones, and vetoed
// messages dropped without breaking their connection
// (steering.Config.SilentVeto), as they were measured.
func measuredHolds(c steering.Config) steering.Config {
	c.SilentVeto = true
	if c.FilterHold == 0 {
		c.FilterHold = measuredFilterHold
	}
	if c.VetoHold == 0 {
		c.VetoHold = measuredVetoHold
	}
	return c
}
