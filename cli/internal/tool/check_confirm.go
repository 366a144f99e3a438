package tool

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// Confirming a check's violations (check --confirm): each violation the
// search or the walks found is judged by a directed run. An emulator of
// the same service, nodes and workload, its nodes started together as the
// model's start state has them, is forced along the violation's path
// (emulation.Emulator.ConfirmPath): real (the system violates the property
// too), model-only (a step the system could not take: the model allowed
// what the emulated world does not) or wrong (every step taken, the
// property held). A liveness suspect judged C1 is forced up to its
// critical transition, then runs on freely for --confirm-duration and is
// real if its property still fails at the end.

// defaultConfirmDuration is --confirm-duration's default: how long a
// confirming run of a liveness suspect goes on after its critical
// transition, in virtual time.
const defaultConfirmDuration = 5 * time.Minute

// checkConfirmFlags are --confirm and --confirm-duration.
type checkConfirmFlags struct {
	on       bool
	duration time.Duration
}

func (c *checkConfirmFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.on, "confirm", false, "judge each violation by a directed run: the emulator, its nodes started together, forced along the violation's path (real, model-only: a step the system could not take, or wrong: the property held)")
	c.duration = defaultConfirmDuration
	fs.Var(durationValue{&c.duration}, "confirm-duration", "with --confirm: the virtual time a confirming run lasts (a liveness suspect must still fail at its end)")
}

// validate rejects what a directed run from the initial state cannot
// judge.
func (c *checkConfirmFlags) validate(f *checkFlags) error {
	switch {
	case !c.on:
		return nil
	case c.duration <= 0:
		return usagef("--confirm-duration must be positive, got %v", c.duration)
	case f.model != "":
		return usagef("--confirm replays a service in the emulator: a hand-written --model has none")
	case f.from != "":
		return usagef("--confirm starts the emulator from the service's initial state, not from --from's snapshot")
	case f.symmetry:
		return usagef("--confirm needs the paths' own node IDs: leave out --symmetry")
	case f.lasting.skew > 0:
		return usagef("--confirm does not reproduce --skew's timer skew in the emulator")
	}
	return nil
}

// pathJudge judges a check's violations by directed runs (nil: --confirm
// is off).
type pathJudge struct {
	cfg    emulation.Config
	faults consequence.Faults
}

// newPathJudge is the judge of the service svc of n nodes with the
// model's faults, nil when --confirm is off.
func (c *checkConfirmFlags) newPathJudge(svc serviceRun, n int, seed uint64, faults consequence.Faults) *pathJudge {
	if !c.on {
		return nil
	}
	return &pathJudge{faults: faults, cfg: emulation.Config{Spec: svc.spec, Nodes: n, Seed: seed, Workload: svc.workload,
		StartSpread: time.Nanosecond, Duration: c.duration}}
}

// judge forces a fresh emulator along path and judges property's claim.
func (j *pathJudge) judge(ctx context.Context, path consequence.Path[consequence.ActorAction], property string, kind node.PropertyKind) (emulation.PathJudgement, error) {
	e, err := emulation.New(j.cfg)
	if err != nil {
		return emulation.PathJudgement{}, fmt.Errorf("check: --confirm: %w", err)
	}
	acts := make([]consequence.ActorAction, len(path))
	for i, a := range path {
		acts[i] = a.Act
	}
	res, err := e.ConfirmPath(ctx, acts, j.faults, property, kind)
	if err != nil {
		return res, fmt.Errorf("check: --confirm: %s: %w", property, err)
	}
	return res, nil
}

// confirmViolation judges one violation of a service check (nothing
// without --confirm) and appends the verdict to out.Confirmed.
func (f *checkFlags) confirmViolation(ctx context.Context, out *checkOutput, path consequence.Path[consequence.ActorAction], property string, kind node.PropertyKind) error {
	if f.judge == nil {
		return nil
	}
	j, err := f.judge.judge(ctx, path, property, kind)
	if err != nil {
		return err
	}
	out.Confirmed = append(out.Confirmed, j)
	return nil
}

// printDirectedRun prints a --confirm verdict on a path of steps steps
// (nothing for nil).
func printDirectedRun(w io.Writer, j *emulation.PathJudgement, steps int) {
	if j == nil {
		return
	}
	fmt.Fprintf(w, "directed run in the emulator: %s after %d of %d steps%s\n", j.Verdict, j.Steps, steps, detailSuffix(j.Detail))
}
