package tool

import (
	"context"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
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
	if err := runStatusSlices(ctx, em, total, progress, after); err != nil {
		res := em.Result()
		res.WallTime = now().Sub(start)
		return res, err
	}
	res, err := em.Run(ctx)
	if err == nil && after != nil {
		err = after(total)
	}
	res.WallTime = now().Sub(start)
	return res, err
}

// runStatusSlices emulates the slices of statusSlice before total,
// setting the progress line's status and calling after (if set) after
// each; it returns after's error, which stops the run there. An error of
// the emulator ends the slices without one: Run meets the same error and
// returns it with the partial result.
func runStatusSlices(ctx context.Context, em *emulation.Emulator, total time.Duration, progress *progressLine, after func(time.Duration) error) error {
	for t := statusSlice; t < total; t += statusSlice {
		if err := em.RunUntilContext(ctx, emulation.Epoch.Add(t)); err != nil {
			return nil
		}
		progress.setf("emulated %v of %v", t, total)
		if after == nil {
			continue
		}
		if err := after(t); err != nil {
			return err
		}
	}
	return nil
}

// roundProgress makes every steering round of cfg's run update the
// progress line too (a deep-online-debugging run's slices of virtual time
// can take a minute of wall time each, its rounds a second): how much is
// emulated, and how many rounds ran. Without a progress line or steering
// it does nothing.
func (p *emulateParams) roundProgress(cfg *emulation.Config) {
	if p.progress == nil || p.progress.mode == progressOff || cfg.Steering == nil {
		return
	}
	prev, rounds, total := cfg.Steering.OnRound, 0, p.duration
	cfg.Steering.OnRound = func(id node.ID, at time.Duration, rep *steering.RoundReport) {
		if prev != nil {
			prev(id, at, rep)
		}
		rounds++
		p.progress.setf("emulated %v of %v, %d steering rounds", at.Round(100*time.Millisecond), total, rounds)
	}
}
