package scoreboard

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// AlarmVerdict is what forcing the emulated system along a prediction's
// path says about the prediction (ReplayPrediction): the emulator's
// verdict of a directed run.
type AlarmVerdict = emulation.PathVerdict

// The verdicts (emulation.PathReal, PathModelOnly, PathWrong).
const (
	AlarmReal      = emulation.PathReal
	AlarmModelOnly = emulation.PathModelOnly
	AlarmWrong     = emulation.PathWrong
)

// ErrNoPrediction is wrapped by ReplayPrediction's error when the run
// makes no prediction of the property.
var ErrNoPrediction = emulation.ErrNoPrediction

// ReplayPrediction judges the first prediction of property that case
// k's run (fixed: its twin) with seed in mode m makes: it runs the same
// run again up to the round that made it, forces the emulator along the
// predicted path from there (emulation.ConfirmPrediction) and returns
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
	j, err := emulation.ConfirmPrediction(ctx, ecfg, func(p steering.Prediction) bool { return p.Property == property })
	if errors.Is(err, emulation.ErrNoPrediction) {
		return "", "", fmt.Errorf("%w: %s in %s seed %d", ErrNoPrediction, property, k.Name, seed)
	}
	return j.Verdict, j.Detail, err
}
