package papers

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/pastry"
)

// pastryName is Pastry's service name, for BuiltinServices.
const pastryName = pastry.Name

// buildPastry configures Pastry as MaceMC ran it for its rejoin bug: every
// node joins through node 1, the designated bootstrap, when it starts, and
// rejoins with the same identifier through it right after every reset (a
// restarted node 1 forms an overlay of its own, which the others' probes
// merge back). --fix rapid-rejoin (or all) applies the correction.
func buildPastry(fixes []string, nodes int) (tool.Service, error) {
	opts := pastry.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return tool.Service{}, err
		}
	}
	const bootstrap node.ID = 1
	return tool.Service{
		Name: pastry.Name,
		Spec: pastry.NewSpec(opts),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{pastry.JoinOverlay{Bootstrap: bootstrap}}
		},
		// A live node joins through the first node behind --join; the
		// first node forms an overlay of its own.
		Join: func(self node.ID, targets []node.ID) []node.Message {
			if len(targets) == 0 {
				return []node.Message{pastry.JoinOverlay{Bootstrap: self}}
			}
			return []node.Message{pastry.JoinOverlay{Bootstrap: targets[0]}}
		},
		Summarize: func(v node.View) []tool.Figure {
			s := pastry.Summarize(v)
			return []tool.Figure{
				{Name: "joined", Value: s.Joined},
				{Name: "leaf_sets_consistent", Value: s.Consistent},
				{Name: "stale_entries", Value: s.Stale},
			}
		},
		Describe: func(v node.View) string { return pastry.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}

// pastryFixes is pastry's corrections, for BuiltinServices.
func pastryFixes() []string { return pastry.FixNames() }
