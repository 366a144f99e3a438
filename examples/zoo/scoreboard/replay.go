package scoreboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// AlarmVerdict is what forcing the emulated system along a prediction's
// path says about the prediction (ReplayPrediction).
type AlarmVerdict string

const (
	// AlarmReal: the system took every step and violated the property (a
	// liveness property: it failed at the end of the run from there).
	AlarmReal AlarmVerdict = "real"
	// AlarmModelOnly: a step of the path is one the emulated system could
	// not take (emulation.ErrDiverged): the model allowed what the world
	// it models does not, or its snapshot no longer matched the system.
	AlarmModelOnly AlarmVerdict = "model-only"
	// AlarmWrong: the system took every step and the property held.
	AlarmWrong AlarmVerdict = "wrong"
)

// ErrNoPrediction is wrapped by ReplayPrediction's error when the run
// makes no prediction of the property.
var ErrNoPrediction = errors.New("scoreboard: the run made no such prediction")

// ReplayPrediction judges the first prediction of property that case
// k's run (fixed: its twin) with seed in mode m makes: it runs the same
// run again up to the round that made it, forces the emulator along the
// predicted path from there (emulation.Emulator.ReplayPath) and returns
// the verdict with, for AlarmModelOnly, the step that diverged. It is a
// pure function of its arguments, as RunOne is.
func ReplayPrediction(ctx context.Context, cfg Config, k zoo.Case, fixed bool, m steering.Mode, seed uint64, property string) (AlarmVerdict, string, error) {
	if m == steering.Off {
		return "", "", fmt.Errorf("scoreboard: ReplayPrediction needs an online mode")
	}
	cfg.Cases, cfg.Seeds = []zoo.Case{k}, []uint64{seed}
	c, err := cfg.withDefaults()
	if err != nil {
		return "", "", err
	}
	ecfg := c.emulationConfig(k, fixed, m, seed)
	var found *steering.Prediction
	ecfg.Steering.OnRound = func(_ node.ID, _ time.Duration, rep *steering.RoundReport) {
		for i := range rep.Predictions {
			if p := rep.Predictions[i]; found == nil && p.Property == property {
				p.Path = slices.Clone(p.Path) // the round's report is not ours to keep
				found = &p
			}
		}
	}
	e, err := emulation.New(ecfg)
	if err != nil {
		return "", "", err
	}
	end := emulation.Epoch.Add(c.duration(k))
	for found == nil && e.Now().Before(end) && e.Step() {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
	}
	if found == nil {
		return "", "", fmt.Errorf("%w: %s in %s seed %d", ErrNoPrediction, property, k.Name, seed)
	}
	return judgeReplay(ctx, e, end, *found)
}

// judgeReplay forces e along p's path and judges the outcome.
func judgeReplay(ctx context.Context, e *emulation.Emulator, end time.Time, p steering.Prediction) (AlarmVerdict, string, error) {
	_, err := e.ReplayPath(p.Path, p.Faults)
	var panicked *emulation.PanicError
	switch {
	case errors.Is(err, emulation.ErrDiverged):
		return AlarmModelOnly, err.Error(), nil
	case errors.As(err, &panicked):
		if p.Property == consequence.CrashProperty {
			return AlarmReal, "", nil
		}
		return AlarmWrong, panicked.Error(), nil
	case err != nil:
		return "", "", err
	}
	if p.Kind == node.Liveness {
		if err := e.RunUntilContext(ctx, end); err != nil && !errors.As(err, &panicked) {
			return "", "", err
		}
		for _, l := range e.Result().Liveness {
			if l.Name == p.Property && !l.Holds {
				return AlarmReal, "", nil
			}
		}
		return AlarmWrong, "", nil
	}
	for _, s := range e.Result().Safety {
		if s.Name == p.Property && s.ViolatedStates > 0 {
			return AlarmReal, "", nil
		}
	}
	return AlarmWrong, "", nil
}
