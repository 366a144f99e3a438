package main

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/cli/papers"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
)

// The shipped services' deployment: small enough that a mutant's three
// runs take seconds, with the churn and breaks their faults need.
const (
	shippedNodes    = 5
	shippedDuration = runDuration
	shippedChurn    = 2 // per minute
	shippedBreaks   = 2 // per minute
)

// deployments returns every target's deployment as a zoo case whose two
// variants are the same spec: the original (every correction applied,
// for the shipped services; the fixed twin, for the zoo's cases). Which
// mutant runs is schema.Active, not the variant. Case.Property is the
// first safety property (the scoreboard requires one; the corpus scores
// every property).
func deployments() (map[string]zoo.Case, error) {
	out := map[string]zoo.Case{}
	for _, s := range papers.Services() {
		c, err := shipped(s)
		if err != nil {
			return nil, err
		}
		out[c.Name] = c
	}
	for _, k := range zoo.Cases() {
		spec := k.Spec(true)
		k.Name = "zoo-" + k.Name
		k.Spec = func(bool) node.Spec { return spec }
		out[k.Name] = k
	}
	return out, nil
}

// shipped is a built-in service's deployment.
func shipped(s cli.Service) (zoo.Case, error) {
	conf, err := s.Configure([]string{"all"}, shippedNodes)
	if err != nil {
		return zoo.Case{}, fmt.Errorf("mutants: %s with every correction: %w", s.Name, err)
	}
	spec, workload := conf.Spec, conf.Workload
	if s.Name == macetransport.Name {
		// The command's workload sends two messages from n1 to n2; every
		// node sending to the next exercises every sender and receiver.
		workload = func(id node.ID, restart bool) []node.Message {
			if restart {
				return nil
			}
			return []node.Message{macetransport.SendMessages{To: id%shippedNodes + 1, Count: 3}}
		}
	}
	i := slices.IndexFunc(spec.Properties, func(p node.Property) bool { return p.Kind == node.Safety })
	if i < 0 {
		return zoo.Case{}, fmt.Errorf("mutants: %s has no safety property", s.Name)
	}
	return zoo.Case{
		Name: s.Name, Spec: func(bool) node.Spec { return spec }, Workload: workload,
		Nodes: shippedNodes, Property: spec.Properties[i].Name,
		Churn: shippedChurn, Breaks: shippedBreaks, Duration: shippedDuration,
	}, nil
}
