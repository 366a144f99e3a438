package cli

import (
	"fmt"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// BuiltinServices returns the services built into this module, RandTree,
// Chord, Paxos, MaceTransport, Pastry and Bullet′, configured as the papers' experiments run them, with
// their corrections (--fix), live join calls and summaries:
// cmd/crystalball is cli.Main(cli.BuiltinServices()...).
func BuiltinServices() []Service {
	return []Service{builtin(randtree.Name, buildRandTree, randtree.FixNames()), builtin(chord.Name, buildChord, chord.FixNames()),
		builtin(paxos.Name, buildPaxos, paxos.FixNames()), builtin(macetransport.Name, buildMaceTransport, macetransport.FixNames()),
		builtin(pastryName, buildPastry, pastryFixes()), builtin(bulletName, buildBullet, bulletFixes())}
}

// builtin makes a Service of a built-in service's builder: its Spec,
// Workload and the rest are those of the build without corrections.
func builtin(name string, build func(fixes []string, nodes int) (Service, error), fixes []string) Service {
	s, err := build(nil, 0)
	if err != nil {
		panic(fmt.Sprintf("cli: built-in service %s: %v", name, err)) // the defaults always build
	}
	s.Configure, s.Fixes = build, fixes
	return s
}

// builtinCatalog is the catalog of BuiltinServices.
func builtinCatalog() *catalog {
	c, err := newCatalog(BuiltinServices())
	if err != nil {
		panic(err) // the built-in services are valid
	}
	return c
}

// lookupService resolves --service, --fix and --nodes among the built-in
// services (the experiments run those).
func lookupService(name string, fixes []string, nodes int) (serviceRun, error) {
	return builtinCatalog().lookup(name, fixes, nodes)
}

// buildRandTree configures RandTree as the paper's experiments run it: every
// node joins through node 1, the designated bootstrap, when it starts and
// again after every restart. A restarted bootstrap joins itself and becomes
// the root of a new tree, which recovery must merge back.
func buildRandTree(fixes []string, nodes int) (Service, error) {
	opts := randtree.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return Service{}, err
		}
	}
	const bootstrap node.ID = 1
	return Service{
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
		Summarize: func(v node.View) []Figure {
			s := randtree.Summarize(v)
			return []Figure{
				{"joined", s.Joined},
				{"roots", s.Roots},
				{"tree_size", s.TreeSize},
				{"tree_depth", s.Depth},
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
func buildChord(fixes []string, nodes int) (Service, error) {
	opts := chord.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return Service{}, err
		}
	}
	const bootstrap node.ID = 1
	return Service{
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
		Summarize: func(v node.View) []Figure {
			s := chord.Summarize(v)
			return []Figure{
				{"joined", s.Joined},
				{"ring_size", s.Ring},
				{"successors_correct", s.SuccessorsCorrect},
				{"predecessors_correct", s.PredecessorsCorrect},
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
func buildPaxos(fixes []string, nodes int) (Service, error) {
	opts := paxos.Options{}.WithBugs()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return Service{}, err
		}
	}
	for id := 1; id <= nodes; id++ {
		opts.Members = append(opts.Members, node.ID(id))
	}
	return Service{
		Name: paxos.Name,
		Spec: paxos.NewSpec(opts),
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
		},
		Summarize: func(v node.View) []Figure {
			s := paxos.Summarize(v)
			return []Figure{
				{"learned", s.Learned},
				{"values", len(s.Values)},
				{"max_round", int(s.MaxRound)},
			}
		},
		Describe: func(v node.View) string { return paxos.Summarize(v).String() },
		Options:  opts.String(),
	}, nil
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
