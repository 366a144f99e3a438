package tool

import (
	"context"
	"errors"
	"fmt"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Confirming predictions (emulate --confirm): each distinct prediction of
// a run is judged by a directed run. The same run (the same configuration
// and seed, without trace or progress) goes again up to the round that
// first made it, and the emulator is forced along its path from there
// (emulation.ConfirmPrediction): real, model-only (a step the system
// could not take) or wrong (every step taken, the property held). A
// prediction that comes true later in the run is real whatever the
// verdict; the verdict says whether its own path leads there, which is
// what tells a missed bug from a false alarm on a run that stayed clean.

// confirmPredictions fills the Confirmed verdict of each of out, the
// rendered entries of log (the same order), rerunning cfg once per entry.
func confirmPredictions(ctx context.Context, cfg emulation.Config, log *steering.PredictionLog, out []predictionOut, progress *progressLine) error {
	for i, e := range log.Entries() {
		if i >= len(out) {
			break
		}
		progress.setf("confirming prediction %d of %d (%s)", i+1, log.Len(), e.Property)
		match := func(p steering.Prediction) bool { return p.Property == e.Property && steering.Shape(p.Path) == e.Shape }
		j, err := emulation.ConfirmPrediction(ctx, cfg, match)
		if errors.Is(err, emulation.ErrNoPrediction) {
			return fmt.Errorf("emulate: --confirm: rerun up to %v did not predict %s again: the run is not a function of its seed (try --check-determinism): %w",
				e.First.Sub(emulation.Epoch), e.Property, err)
		}
		if err != nil {
			return fmt.Errorf("emulate: --confirm: %s: %w", e.Property, err)
		}
		out[i].Confirmed = &j
	}
	return nil
}
