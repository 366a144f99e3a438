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
	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Program returns the crystalball command's program: the papers'
// services, the experiment command and the 2pc model.
func Program() cli.Program {
	return cli.Program{Services: Services(), Commands: []cli.Command{cli.Command(experimentCommand())},
		Models: []cli.Model{cli.Model(twoPhaseModel())}}
}

// Internal returns Program in the form this package builds it in,
// cli/internal/tool's, for that package's tests (which run the papers'
// services and cannot convert a cli.Program).
func Internal() tool.Program {
	return tool.Program{Services: services(), Commands: []tool.Command{experimentCommand()}, Models: []tool.Model{twoPhaseModel()}}
}

// public returns s as package cli serves it: the inverse of cli's own
// conversion, which runs it.
func public(s tool.Service) cli.Service {
	p := cli.Service{Name: s.Name, Spec: s.Spec, Workload: s.Workload, Fixes: s.Fixes,
		Join: s.Join, Describe: s.Describe, Options: s.Options}
	if configure := s.Configure; configure != nil {
		p.Configure = func(fixes []string, nodes int) (cli.Service, error) {
			c, err := configure(fixes, nodes)
			return public(c), err
		}
	}
	if summarize := s.Summarize; summarize != nil {
		p.Summarize = func(v node.View) []cli.Figure {
			figs := summarize(v)
			out := make([]cli.Figure, len(figs))
			for i, f := range figs {
				out[i] = cli.Figure(f)
			}
			return out
		}
	}
	return p
}
