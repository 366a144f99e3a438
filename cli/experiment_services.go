package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/services/bullet"
	"github.com/seed6eee2ec7/crystalball/services/chord"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// experimentServices names the built-in service each of the paper's
// experiments runs (macemc-baseline: its default --service). An experiment
// applies to a program that serves a service of that name; one missing
// here applies when the program serves every built-in service.
var experimentServices = map[string]string{
	"randtree-prediction": randtree.Name,
	"randtree-churn":      randtree.Name,
	"paxos":               paxos.Name,
	"macemc-baseline":     randtree.Name,
	"bullet-overhead":     bullet.Name,
}

// applicableExperiments returns the names of the experiments that apply
// to the services of cat, sorted.
func applicableExperiments(cat *catalog) []string {
	var names []string
	for name := range experimentCommands {
		svc, ok := experimentServices[name]
		if ok && cat.has(svc) || !ok && cat.has(randtree.Name) && cat.has(chord.Name) && cat.has(paxos.Name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// runExperimentFor runs 'experiment NAME' if NAME applies to cat's
// services.
func runExperimentFor(cat *catalog, args []string, stdout, stderr io.Writer) error {
	names := applicableExperiments(cat)
	if len(args) == 0 || !slices.Contains(names, args[0]) {
		msg := fmt.Sprintf("usage: %s experiment NAME [flags] (known experiments: %s)", programName, strings.Join(names, ", "))
		if len(args) > 0 && experimentCommands[args[0]] != nil {
			msg = fmt.Sprintf("experiment %s runs the built-in service %s, which this program does not serve (known experiments: %s)",
				args[0], experimentServices[args[0]], strings.Join(names, ", "))
		}
		return usagef("%s", msg)
	}
	return runExperiment(args, stdout, stderr)
}
