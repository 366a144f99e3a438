package cli

import (
	"sort"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// serviceEntry is what the CLI needs to run a service: its spec for the
// chosen corrections, the application workload the emulator drives it with,
// and a service-specific summary of a final state.
type serviceEntry struct {
	name  string
	build func(fixes []string, nodes int) (serviceRun, error)
}

type serviceRun struct {
	spec     node.Spec
	workload func(id node.ID, restart bool) []node.Message
	// summarize returns labelled figures of a view, in display order.
	summarize func(v node.View) []figure
	// describe renders the service's summary of a view as one line.
	describe func(v node.View) string
	// options describes the service configuration for reports.
	options string
}

// figure is one labelled number of a service summary.
type figure struct {
	Name  string `json:"name"`
	Value int    `json:"value"`
}

func serviceCatalog() map[string]serviceEntry {
	return map[string]serviceEntry{
		randtree.Name: {name: randtree.Name, build: buildRandTree},
		chord.Name:    {name: chord.Name, build: buildChord},
		paxos.Name:    {name: paxos.Name, build: buildPaxos},
	}
}

func serviceNames() string {
	var names []string
	for n := range serviceCatalog() {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// lookupService resolves --service and --fix.
func lookupService(name string, fixes []string, nodes int) (serviceRun, error) {
	e, ok := serviceCatalog()[name]
	if !ok {
		return serviceRun{}, usagef("unknown service %q (known: %s)", name, serviceNames())
	}
	return e.build(fixes, nodes)
}

// buildRandTree configures RandTree as the paper's experiments run it: every
// node joins through node 1, the designated bootstrap, when it starts and
// again after every restart. A restarted bootstrap joins itself and becomes
// the root of a new tree, which recovery must merge back.
func buildRandTree(fixes []string, nodes int) (serviceRun, error) {
	opts := randtree.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return serviceRun{}, usageError{err}
		}
	}
	const bootstrap node.ID = 1
	return serviceRun{
		spec: randtree.NewSpec(opts),
		workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{randtree.JoinOverlay{Targets: []node.ID{bootstrap}}}
		},
		summarize: func(v node.View) []figure {
			s := randtree.Summarize(v)
			return []figure{
				{"joined", s.Joined},
				{"roots", s.Roots},
				{"tree_size", s.TreeSize},
				{"tree_depth", s.Depth},
			}
		},
		describe: func(v node.View) string { return randtree.Summarize(v).String() },
		options:  opts.String(),
	}, nil
}

// buildChord configures Chord as the paper's experiments run it: every
// node joins the ring through node 1, the designated bootstrap, when it
// starts and again after every restart. A restarted bootstrap forms a ring
// of its own, which the other nodes' recovery lookups merge back.
func buildChord(fixes []string, nodes int) (serviceRun, error) {
	opts := chord.DefaultOptions()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return serviceRun{}, usageError{err}
		}
	}
	const bootstrap node.ID = 1
	return serviceRun{
		spec: chord.NewSpec(opts),
		workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{chord.JoinOverlay{Bootstrap: bootstrap}}
		},
		summarize: func(v node.View) []figure {
			s := chord.Summarize(v)
			return []figure{
				{"joined", s.Joined},
				{"ring_size", s.Ring},
				{"successors_correct", s.SuccessorsCorrect},
				{"predecessors_correct", s.PredecessorsCorrect},
			}
		},
		describe: func(v node.View) string { return chord.Summarize(v).String() },
		options:  opts.String(),
	}, nil
}

// buildPaxos configures Paxos as the paper's experiments run it: nodes
// 1..N are the members (1..3 when the command does not say), both of the
// paper's injected bugs are on, and --fix names the bugs to take out
// ("bug1", "bug2" or "all" for correct Paxos), as --fix removes RandTree's.
// Every node proposes its own value (paxos.ValueOf) when it starts and
// again after every restart.
func buildPaxos(fixes []string, nodes int) (serviceRun, error) {
	opts := paxos.Options{}.WithBugs()
	for _, f := range fixes {
		if err := opts.EnableFix(f); err != nil {
			return serviceRun{}, usageError{err}
		}
	}
	for id := 1; id <= nodes; id++ {
		opts.Members = append(opts.Members, node.ID(id))
	}
	return serviceRun{
		spec: paxos.NewSpec(opts),
		workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
		},
		summarize: func(v node.View) []figure {
			s := paxos.Summarize(v)
			return []figure{
				{"learned", s.Learned},
				{"values", len(s.Values)},
				{"max_round", int(s.MaxRound)},
			}
		},
		describe: func(v node.View) string { return paxos.Summarize(v).String() },
		options:  opts.String(),
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
