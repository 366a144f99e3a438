package main

import (
	"context"
	"fmt"
	"slices"
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
const offlineStates = 100_000

// The offline liveness search's walks (MaceMC's random walks and
// critical-transition search, consequence.FindLivenessViolation): a
// budget in steps, seeded, so that it too is a pure function of the
// mutant.
const (
	offlineWalks = 50
	offlineDMax  = 300
	offlineSeed  = 1
)

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

// tells says whether the offline check's finding o tells a mutant from
// its original, whose check found orig: the original's check finds no
// such violation, or finds it but the emulator confirms the mutant's
// finding and not the original's (a team running check --confirm sees a
// real violation on the mutant and a model-only one on the original).
func (o offlineResult) tells(orig offlineResult) bool {
	if !o.Found {
		return false
	}
	return !orig.Found || orig.Property != o.Property || (o.Confirmed && !orig.Confirmed)
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
		return o.liveness(ctx, k, spec, m, faults)
	}
	v := res.Violations[0]
	o.Found, o.Property, o.Kind, o.Depth = true, v.Property, v.Kind.String(), v.Depth
	return o, o.confirm(ctx, k, spec, actions(v.Path), faults)
}

// liveness runs the liveness search when the breadth-first search found
// nothing: a suspect walk judged C1 is a finding, its path cut after the
// critical transition (empty when the start state is dead already).
func (o offlineResult) liveness(ctx context.Context, k zoo.Case, spec node.Spec, m *consequence.ActorModel, faults consequence.Faults) (offlineResult, error) {
	if !slices.ContainsFunc(spec.Properties, func(p node.Property) bool { return p.Kind == node.Liveness }) {
		return o, nil
	}
	opts := consequence.LivenessOptions[consequence.ActorAction]{
		Walk: consequence.WalkOptions[consequence.ActorAction]{Seed: offlineSeed, Walks: offlineWalks, DMax: offlineDMax}}
	res, err := consequence.FindLivenessViolation(ctx, m, m.Properties(), nil, opts)
	if err != nil {
		o.Stop = "error: " + err.Error()
		return o, nil
	}
	if res.Critical == nil || res.Critical.Verdict != consequence.C1 || len(res.Suspect.Failing) == 0 {
		return o, nil
	}
	path := res.Suspect.Path[:res.Critical.Step+1]
	o.Found, o.Property, o.Kind, o.Depth = true, res.Suspect.Failing[0].Property, node.Liveness.String(), len(path)
	return o, o.confirm(ctx, k, spec, actions(path), faults)
}

// actions are a path's actor actions.
func actions(p consequence.Path[consequence.ActorAction]) []consequence.ActorAction {
	out := make([]consequence.ActorAction, len(p))
	for i, a := range p {
		out[i] = a.Act
	}
	return out
}

// confirm forces the emulator along path from the deployment's start
// (its nodes started together, no fault of its own) and records whether
// the system violates o.Property.
func (o *offlineResult) confirm(ctx context.Context, k zoo.Case, spec node.Spec, path []consequence.ActorAction, faults consequence.Faults) error {
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: k.Nodes, Seed: 1, Workload: k.Workload, StartSpread: time.Nanosecond, Duration: runDuration})
	if err != nil {
		return fmt.Errorf("mutants: confirming %s: %w", k.Name, err)
	}
	kind := node.Safety
	if o.Kind == node.Liveness.String() {
		kind = node.Liveness
	}
	j, err := e.ConfirmPath(ctx, path, faults, o.Property, kind)
	if err != nil {
		return fmt.Errorf("mutants: confirming %s: %w", k.Name, err)
	}
	o.Confirmed, o.Replayed = j.Verdict == emulation.PathReal, j.Steps
	if j.Verdict == emulation.PathModelOnly {
		o.Diverged = j.Detail
	}
	return nil
}
