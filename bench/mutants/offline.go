package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/schema"
	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
)

// offlineStates is the state budget of a mutant's offline check: a
// budget in states, not time, so that the verdict is a pure function of
// the mutant.
const offlineStates = 20_000

// offlineResult is what an offline check of a mutant (or an original)
// found: the first violation of a breadth-first search from the
// deployment's initial configuration, and whether the emulator confirmed
// it when forced along its path (emulation.Emulator.ReplayPath).
type offlineResult struct {
	Found    bool   `json:"found"`
	Property string `json:"property,omitempty"`
	Kind     string `json:"kind,omitempty"`
	Depth    int    `json:"depth,omitempty"`
	States   uint64 `json:"states"`
	Stop     string `json:"stop"`
	// Confirmed: the emulator took every step of the path and violated the
	// property (a safety property on the way, a liveness property failing
	// after running on to the end of a run); Diverged is why it could
	// not take a step (Confirmed is then false).
	Confirmed bool   `json:"confirmed"`
	Replayed  int    `json:"replayed,omitempty"`
	Diverged  string `json:"diverged,omitempty"`
}

// offlineFaults are the explorer's faults of deployment k: a node reset
// for its churn (a node leaves and comes back with a fresh state), a
// connection break for its breaks.
func offlineFaults(k zoo.Case) consequence.Faults {
	var f consequence.Faults
	if k.Churn > 0 {
		f.Resets = 1
	}
	if k.Breaks > 0 {
		f.Breaks = 1
	}
	return f
}

// offline runs the offline check of mutant id (0: the original) of
// deployment k and confirms its finding in the emulator.
func offline(ctx context.Context, k zoo.Case, id int) (offlineResult, error) {
	schema.Active = id
	defer func() { schema.Active = 0 }()
	spec, faults := k.Spec(true), offlineFaults(k)
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: k.Nodes, Workload: k.Workload, Faults: faults})
	if err != nil {
		return offlineResult{}, fmt.Errorf("mutants: offline check of %s mutant %d: %w", k.Name, id, err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).
		Strategy(consequence.BFS).MaxStates(offlineStates).StopOnViolation(true).Run(ctx)
	if err != nil {
		// A nondeterministic mutant, say: the search cannot judge it.
		return offlineResult{Stop: "error: " + err.Error()}, nil
	}
	o := offlineResult{States: res.Unique, Stop: res.Stop.String()}
	if len(res.Violations) == 0 {
		return o, nil
	}
	v := res.Violations[0]
	o.Found, o.Property, o.Kind, o.Depth = true, v.Property, v.Kind.String(), v.Depth
	path := make([]consequence.ActorAction, len(v.Path))
	for i, a := range v.Path {
		path[i] = a.Act
	}
	return o, o.confirm(ctx, k, spec, path, faults)
}

// confirm forces the emulator along path from the deployment's start
// (its nodes started together, no fault of its own) and records whether
// the system violates o.Property.
func (o *offlineResult) confirm(ctx context.Context, k zoo.Case, spec node.Spec, path []consequence.ActorAction, faults consequence.Faults) error {
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: k.Nodes, Seed: 1, Workload: k.Workload, StartSpread: time.Nanosecond, Duration: runDuration})
	if err != nil {
		return fmt.Errorf("mutants: confirming %s: %w", k.Name, err)
	}
	n, err := e.ReplayPath(path, faults)
	o.Replayed = n
	var panicked *emulation.PanicError
	switch {
	case errors.As(err, &panicked):
		// A handler's panic: what the search reports as a crash.
		o.Confirmed = o.Property == consequence.CrashProperty
		return nil
	case errors.Is(err, emulation.ErrDiverged):
		o.Diverged = err.Error()
		return nil
	case err != nil:
		return fmt.Errorf("mutants: confirming %s: %w", k.Name, err)
	}
	if o.Kind == node.Liveness.String() {
		res, err := e.Run(ctx)
		if err != nil && !errors.As(err, &panicked) {
			return fmt.Errorf("mutants: confirming %s: %w", k.Name, err)
		}
		for _, l := range res.Liveness {
			o.Confirmed = o.Confirmed || (l.Name == o.Property && !l.Holds)
		}
		return nil
	}
	for _, s := range e.Result().Safety {
		o.Confirmed = o.Confirmed || (s.Name == o.Property && s.ViolatedStates > 0)
	}
	return nil
}
