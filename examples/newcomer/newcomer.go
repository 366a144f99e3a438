// Package newcomer offers to package cli the services written the way a
// new user writes one from the README ("Your own service") and
// docs/your-service.md: a cluster-wide permit limiter (package permits),
// a two-phase commit (package commit) and Ricart–Agrawala mutual
// exclusion (package mutex).
// The permit limiter and the commit carry a planted bug each, with its
// correction behind --fix; the mutual exclusion is correct and takes no
// correction. cmd/newcomer is their command line, and bench/steerlive
// measures what steering does to their liveness.
package newcomer

import (
	"errors"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/commit"
	"github.com/seed6eee2ec7/crystalball/examples/mutex"
	"github.com/seed6eee2ec7/crystalball/examples/permits"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Default cluster sizes, for a live node started without --nodes: the
// permit limiter runs on three nodes (the size it was written for), the
// others on five.
const (
	PermitsNodes = 3
	CommitNodes  = 5
	MutexNodes   = 5
)

// Services returns the three services: permits, commit and mutex, each
// sized by --nodes (at least 2).
func Services() []cli.Service { return []cli.Service{Permits(), Commit(), Mutex()} }

// Permits is the permit limiter (package permits): the planted bug unless
// --fix all or --fix ask-borrower.
func Permits() cli.Service {
	return fixable("permits", permits.Workload, permits.Fixes, PermitsNodes,
		func(n int, o permits.Options) (node.Spec, bool) { return permits.Spec(n, o), o.AskBorrower })
}

// Commit is the two-phase commit (package commit): the planted bug unless
// --fix all or --fix ask-coordinator.
func Commit() cli.Service {
	return fixable("commit", commit.Workload, commit.Fixes, CommitNodes,
		func(n int, o commit.Options) (node.Spec, bool) { return commit.Spec(n, o), o.AskCoordinator })
}

// Mutex is Ricart–Agrawala mutual exclusion (package mutex), which takes
// no correction.
func Mutex() cli.Service {
	s := cli.Service{Name: "mutex", Spec: mutex.Spec(MutexNodes), Workload: mutex.Workload}
	s.Configure = func(fixes []string, nodes int) (cli.Service, error) {
		if len(fixes) > 0 {
			return cli.Service{}, errNoFixes
		}
		out := s
		out.Spec = mutex.Spec(size(nodes, MutexNodes))
		return out, nil
	}
	return s
}

// errNoFixes refuses --fix for the mutual exclusion.
var errNoFixes = errors.New("newcomer: mutex takes no correction")

// fixable is a service of name whose spec for n nodes and options O spec
// builds (and says whether they correct the bug), its --fix names fixes'.
func fixable[O any](name string, workload func(node.ID, bool) []node.Message, fixes node.Fixes[O], nodes int,
	spec func(n int, o O) (node.Spec, bool)) cli.Service {
	var none O
	sp, _ := spec(nodes, none)
	s := cli.Service{Name: name, Spec: sp, Workload: workload, Fixes: fixes.Names(), Options: "bug"}
	s.Configure = func(names []string, n int) (cli.Service, error) {
		var o O
		for _, f := range names {
			if err := fixes.Enable(&o, f); err != nil {
				return cli.Service{}, err
			}
		}
		out := s
		var fixed bool
		out.Spec, fixed = spec(size(n, nodes), o)
		if fixed {
			out.Options = "fixed"
		}
		return out, nil
	}
	return s
}

// size is nodes, at least 2, or def for a live node started without
// --nodes (nodes 0).
func size(nodes, def int) int {
	if nodes <= 0 {
		return def
	}
	return max(nodes, 2)
}
