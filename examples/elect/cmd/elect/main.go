// Command elect runs examples/elect, a Raft-style leader election with a
// planted stall, through the crystalball command line: a candidate that
// waits for every peer's answer elects no leader while one peer is down
// or cut off for good, which only the lasting faults show.
//
//	go run ./examples/elect/cmd/elect check --nodes 3 --strategy walk --crashes 1 \
//	    --weights timer=0.05,crash=0.02 --dmax 300
//	go run ./examples/elect/cmd/elect emulate --nodes 3 --duration 2m --churn 0 --schedule faults.txt
//
// --fix all runs the corrected twin (a majority of votes decides).
package main

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/elect"
)

func main() { program().Main() }

// program is the command line of the election.
func program() cli.Program { return cli.Program{Services: []cli.Service{service()}} }

// service is the election as a cli.Service: a cluster of --nodes nodes,
// with the planted bug unless --fix all.
func service() cli.Service {
	s := cli.Service{Name: "elect", Spec: elect.Spec(3, false), Workload: elect.Workload, Options: "bug"}
	s.Configure = func(fixes []string, nodes int) (cli.Service, error) {
		out, fixed := s, false
		for _, f := range fixes {
			if f != "all" {
				return cli.Service{}, fmt.Errorf("elect: unknown correction %q (want all)", f)
			}
			fixed, out.Options = true, "fixed"
		}
		out.Spec = elect.Spec(nodes, fixed)
		return out, nil
	}
	return s
}
