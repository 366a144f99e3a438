package emulation

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// PathVerdict is what a directed run says of a violation the explorer
// found (a check's finding, a steering round's prediction): whether the
// emulated system, forced along the path, violates the property too.
type PathVerdict string

const (
	// PathReal: the system took every step and violated the property (a
	// safety property on the way; a liveness property at the end of the
	// run, after running on from the path's last step). A handler's panic
	// is real for consequence.CrashProperty.
	PathReal PathVerdict = "real"
	// PathModelOnly: a step is one the emulated system could not take
	// (ErrDiverged): the model allowed what the world it models does not,
	// or its view no longer matched the system.
	PathModelOnly PathVerdict = "model-only"
	// PathWrong: the system took every step and the property held (or a
	// handler panicked on the way to another property).
	PathWrong PathVerdict = "wrong"
)

// A PathJudgement is a directed run's verdict on a path.
type PathJudgement struct {
	Verdict PathVerdict `json:"verdict"`
	// Steps is how many of the path's actions the system carried out.
	Steps int `json:"steps"`
	// Detail is, for PathModelOnly, the step that diverged and why; for
	// PathWrong after a handler's panic, the panic.
	Detail string `json:"detail,omitempty"`
}

// ConfirmPath forces e along path (ReplayPath, with the explorer's
// faults) and judges the claim that it violates property, of kind kind.
// A liveness claim is judged by running on to the end of the run (Run)
// and reading the property's final verdict, so e's Config.Duration bounds
// how long the system has to recover. The error is a failed run's or
// ctx's, never the verdict's; e is spent afterwards (a liveness claim ran
// it to its end).
func (e *Emulator) ConfirmPath(ctx context.Context, path []consequence.ActorAction, faults consequence.Faults, property string, kind node.PropertyKind) (PathJudgement, error) {
	n, err := e.ReplayPath(path, faults)
	j := PathJudgement{Verdict: PathWrong, Steps: n}
	var panicked *PanicError
	switch {
	case errors.Is(err, ErrDiverged):
		j.Verdict, j.Detail = PathModelOnly, err.Error()
		return j, nil
	case errors.As(err, &panicked):
		if property == consequence.CrashProperty {
			j.Verdict = PathReal
		} else {
			j.Detail = panicked.Error()
		}
		return j, nil
	case err != nil:
		return PathJudgement{}, err
	}
	if kind == node.Liveness {
		res, err := e.Run(ctx)
		if err != nil && !errors.As(err, &panicked) {
			return PathJudgement{}, err
		}
		for _, l := range res.Liveness {
			if l.Name == property && !l.Holds {
				j.Verdict = PathReal
			}
		}
		return j, nil
	}
	for _, s := range e.Result().Safety {
		if s.Name == property && s.ViolatedStates > 0 {
			j.Verdict = PathReal
		}
	}
	return j, nil
}

// ErrNoPrediction is wrapped by ConfirmPrediction's error when the run
// makes no prediction the match accepts.
var ErrNoPrediction = errors.New("emulation: the run made no such prediction")

// ConfirmPrediction judges a steering round's prediction by a directed
// run: it runs cfg (which must steer: Config.Steering set) up to the
// first round whose report has a prediction match accepts, forces the
// emulator along that prediction's path from there (ConfirmPath, with the
// round's faults) and returns the verdict. cfg's own Steering.OnRound
// still sees every round. It is a pure function of cfg and match, as a
// run is; it costs a run up to the round, plus the rest of the run for a
// liveness claim.
func ConfirmPrediction(ctx context.Context, cfg Config, match func(steering.Prediction) bool) (PathJudgement, error) {
	if cfg.Steering == nil {
		return PathJudgement{}, errors.New("emulation: ConfirmPrediction needs a steered run (Config.Steering)")
	}
	sc := *cfg.Steering
	var found *steering.Prediction
	theirs := sc.OnRound
	sc.OnRound = func(id node.ID, at time.Duration, rep *steering.RoundReport) {
		if theirs != nil {
			theirs(id, at, rep)
		}
		for i := range rep.Predictions {
			if p := rep.Predictions[i]; found == nil && match(p) {
				p.Path = slices.Clone(p.Path) // the round's report is not ours to keep
				found = &p
			}
		}
	}
	cfg.Steering = &sc
	e, err := New(cfg)
	if err != nil {
		return PathJudgement{}, err
	}
	end := Epoch.Add(cfg.Duration)
	for found == nil && e.Now().Before(end) && e.Step() {
		if err := ctx.Err(); err != nil {
			return PathJudgement{}, err
		}
	}
	if err := e.Err(); err != nil && found == nil {
		return PathJudgement{}, err
	}
	if found == nil {
		return PathJudgement{}, ErrNoPrediction
	}
	return e.ConfirmPath(ctx, found.Path, found.Faults, found.Property, found.Kind)
}
