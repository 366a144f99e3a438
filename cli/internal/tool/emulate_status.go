package tool

import (
	"context"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// statusSlice is the virtual time emulated between two updates of a
// run's progress (and two comparisons of --check-determinism's runs).
const statusSlice = 5 * time.Second

// runWithStatus runs em to the end of its Duration (total). With neither
// a progress line nor an after hook it is em.Run. Otherwise it emulates
// in slices of statusSlice of virtual time, sets the progress line's
// status after each (how much is emulated) and calls after with the
// virtual time reached; an error from after stops the run there and is
// returned with the partial result. Slicing does not change the run: the
// emulator processes the same events in the same order
// (RunUntilContext, then Run finishing the same run); only
// Result.WallTime is measured here, from now, over the whole run.
func runWithStatus(ctx context.Context, em *emulation.Emulator, total time.Duration, progress *progressLine, after func(time.Duration) error, now func() time.Time) (emulation.Result, error) {
	if progress == nil && after == nil {
		return em.Run(ctx)
	}
	start := now()
	for t := statusSlice; t < total; t += statusSlice {
		if err := em.RunUntilContext(ctx, emulation.Epoch.Add(t)); err != nil {
			break // Run meets the same error and returns it with the partial result
		}
		progress.setf("emulated %v of %v", t, total)
		if after != nil {
			if err := after(t); err != nil {
				res := em.Result()
				res.WallTime = now().Sub(start)
				return res, err
			}
		}
	}
	res, err := em.Run(ctx)
	if err == nil && after != nil {
		err = after(total)
	}
	res.WallTime = now().Sub(start)
	return res, err
}
