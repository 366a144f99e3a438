package papers

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// Services returns the services of the papers built into this module,
// RandTree, Chord, Paxos, MaceTransport, Pastry and Bullet′, configured as
// the papers' experiments run them, with their corrections (--fix), live
// join calls and summaries, RandTree first (the --service default).
func Services() []cli.Service {
	var out []cli.Service
	for _, s := range services() {
		out = append(out, public(s))
	}
	return out
}

// services returns Services in the form this package builds them in
// (cli/internal/tool's, which its experiments run).
func services() []tool.Service {
	return []tool.Service{builtin(randtree.Name, buildRandTree, randtree.FixNames()), builtin(chord.Name, buildChord, chord.FixNames()),
		builtin(paxos.Name, buildPaxos, paxos.FixNames()), builtin(macetransport.Name, buildMaceTransport, macetransport.FixNames()),
		builtin(pastryName, buildPastry, pastryFixes()), builtin(bulletName, buildBullet, bulletFixes())}
}

// builtin makes a Service of a built-in service's builder: its Spec,
// Workload and the rest are those of the build without corrections.
func builtin(name string, build func(fixes []string, nodes int) (tool.Service, error), fixes []string) tool.Service {
	s, err := build(nil, 0)
	if err != nil {
		panic(fmt.Sprintf("papers: service %s: %v", name, err)) // the defaults always build
	}
	s.Configure, s.Fixes = build, fixes
	return s
}

// lookupService configures the service name with fixes for nodes nodes
// (the experiments run the papers' services by name).
func lookupService(name string, fixes []string, nodes int) (tool.Service, error) {
	for _, s := range services() {
		if s.Name == name {
			return s.Configure(fixes, nodes)
		}
	}
	return tool.Service{}, tool.UsageErrorf("unknown service %q", name)
}

// buildRandTree configures RandTree as the paper's experiments run it: every
// node joins through node 1, the designated bootstrap, when it starts and
// again after every restart. A restarted bootstrap joins itself and becomes
// the root of a new tree, which recovery must merge back.
func buildRandTree(fixes []string, nodes int) (tool.Service, error) {
	opts := randtree.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return tool.Service{}, err
		}
	}
	const bootstrap node.ID = 1
	return tool.Service{
		Name: randtree.Name,
		Spec: randtree.NewSpec(opts),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{bootstrap}}}
		},
		// A live node joins through the nodes behind --join; the first
		// node roots its own tree.
		Join: func(self node.ID, targets []node.ID) []node.Message {
			if len(targets) == 0 {
				targets = []node.ID{self}
			}
			return []node.Message{randtree.JoinOverlay{Targets: targets}}
		},
		Summarize: func(v node.View) []tool.Figure {
			s := randtree.Summarize(v)
			return []tool.Figure{
				{Name: "joined", Value: s.Joined},
				{Name: "roots", Value: s.Roots},
				{Name: "tree_size", Value: s.TreeSize},
				{Name: "tree_depth", Value: s.Depth},
			}
		},
		Describe: func(v node.View) string { return randtree.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}

// buildChord configures Chord as the paper's experiments run it: every
// node joins the ring through node 1, the designated bootstrap, when it
// starts and again after every restart. A restarted bootstrap forms a ring
// of its own, which the other nodes' recovery lookups merge back.
func buildChord(fixes []string, nodes int) (tool.Service, error) {
	opts := chord.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return tool.Service{}, err
		}
	}
	const bootstrap node.ID = 1
	return tool.Service{
		Name: chord.Name,
		Spec: chord.NewSpec(opts),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{chord.JoinOverlay{Bootstrap: bootstrap}}
		},
		// A live node joins through the first node behind --join; the
		// first node forms a ring of its own.
		Join: func(self node.ID, targets []node.ID) []node.Message {
			if len(targets) == 0 {
				return []node.Message{chord.JoinOverlay{Bootstrap: self}}
			}
			return []node.Message{chord.JoinOverlay{Bootstrap: targets[0]}}
		},
		Summarize: func(v node.View) []tool.Figure {
			s := chord.Summarize(v)
			return []tool.Figure{
				{Name: "joined", Value: s.Joined},
				{Name: "ring_size", Value: s.Ring},
				{Name: "successors_correct", Value: s.SuccessorsCorrect},
				{Name: "predecessors_correct", Value: s.PredecessorsCorrect},
			}
		},
		Describe: func(v node.View) string { return chord.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}

// buildPaxos configures Paxos as the paper's experiments run it: nodes
// 1..N are the members (1..3 when the command does not say), both of the
// paper's injected bugs are on, and --fix names the bugs to take out
// ("bug1", "bug2" or "all" for correct Paxos), as --fix removes RandTree's.
// Every node proposes its own value (paxos.ValueOf) when it starts and
// again after every restart; a live node too, whether or not it joins
// through others (the members are fixed: 1..3, or 1..N with node --nodes).
func buildPaxos(fixes []string, nodes int) (tool.Service, error) {
	opts := paxos.Options{}.WithBugs()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return tool.Service{}, err
		}
	}
	for id := 1; id <= nodes; id++ {
		opts.Members = append(opts.Members, node.ID(id))
	}
	return tool.Service{
		Name: paxos.Name,
		Spec: paxos.NewSpec(opts),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
		},
		Summarize: func(v node.View) []tool.Figure {
			s := paxos.Summarize(v)
			return []tool.Figure{
				{Name: "learned", Value: s.Learned},
				{Name: "values", Value: len(s.Values)},
				{Name: "max_round", Value: int(s.MaxRound)},
			}
		},
		Describe: func(v node.View) string { return paxos.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}
