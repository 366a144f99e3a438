// Package papers is what the crystalball command adds to the generic
// command line of package cli: the papers' services (RandTree, Chord,
// Paxos, MaceTransport, Pastry, Bullet′) configured as the papers'
// experiments run them, the experiments themselves (the experiment
// command) and the two-phase commit model (check --model 2pc).
// cmd/crystalball is Program().Main(); nothing else in the module's
// libraries imports it, so a program of one's own built on cli links none
// of this.
package papers

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
)

// Program returns the crystalball command's program: the papers'
// services, the experiment command and the 2pc model.
func Program() tool.Program {
	return tool.Program{Services: Services(), Commands: []tool.Command{experimentCommand()}, Models: []tool.Model{twoPhaseModel()}}
}
