package zoo

import (
	"fmt"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/follower"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/register"
)

// RegisterOps is how many operations each client of zoo-register makes.
const RegisterOps = 20

// PropertyServices offers the zoo's two services whose bugs no safety
// property over states can state to cli.Main: zoo-follower (package
// follower: a follower behind for good while one leader lasts, which the
// bounded property CaughtUpWithin sees) and zoo-register (package
// register: a stale read, which the history property Linearizable sees),
// with the bug by default and "--fix all" for the corrected twin. They
// are not Cases: the scoreboard measures safety properties.
func PropertyServices() []cli.Service {
	fix := func(fixes []string) (bool, error) {
		fixed := false
		for _, f := range fixes {
			if f != "all" {
				return false, fmt.Errorf("zoo: unknown correction %q (the zoo's services take only \"all\")", f)
			}
			fixed = true
		}
		return fixed, nil
	}
	options := map[bool]string{false: "bug", true: "fixed"}
	fol := cli.Service{Name: "zoo-follower", Spec: follower.Spec(false, 3), Workload: follower.Workload, Options: "bug"}
	fol.Configure = func(fixes []string, nodes int) (cli.Service, error) {
		fixed, err := fix(fixes)
		if err != nil {
			return cli.Service{}, err
		}
		out := fol
		out.Spec, out.Options = follower.Spec(fixed, max(nodes, 2)), options[fixed]
		return out, nil
	}
	reg := cli.Service{Name: "zoo-register", Spec: register.Spec(false), Workload: register.Workload(RegisterOps), Options: "bug"}
	reg.Configure = func(fixes []string, _ int) (cli.Service, error) {
		fixed, err := fix(fixes)
		if err != nil {
			return cli.Service{}, err
		}
		out := reg
		out.Spec, out.Options = register.Spec(fixed), options[fixed]
		return out, nil
	}
	return []cli.Service{fol, reg}
}
