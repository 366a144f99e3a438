package tool

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// statusSlice is the virtual time emulated between two looks at the wall
// clock when a run shows its progress.
const statusSlice = 5 * time.Second

// runWithStatus runs em to the end of its Duration (total). With status
// nil it is em.Run. Otherwise it emulates in slices of statusSlice of
// virtual time and, at most every progressInterval of wall time (read
// from now), rewrites a status line on status — how much is emulated, the
// wall time so far — and erases it at the end, so that a run of minutes
// (deep online debugging, the zoo) does not look hung. Slicing does not
// change the run: the emulator processes the same events in the same
// order (RunUntilContext, then Run finishing the same run); only
// Result.WallTime is measured here, over the whole run.
func runWithStatus(ctx context.Context, em *emulation.Emulator, total time.Duration, status io.Writer, now func() time.Time) (emulation.Result, error) {
	if status == nil {
		return em.Run(ctx)
	}
	start := now()
	shown, last := false, start
	for t := statusSlice; t < total; t += statusSlice {
		if err := em.RunUntilContext(ctx, emulation.Epoch.Add(t)); err != nil {
			break // Run meets the same error and returns it with the partial result
		}
		if at := now(); at.Sub(last) >= progressInterval {
			fmt.Fprintf(status, "\remulated %v of %v, %v of wall time\x1b[K", t, total, at.Sub(start).Round(100*time.Millisecond))
			shown, last = true, at
		}
	}
	res, err := em.Run(ctx)
	if shown {
		fmt.Fprint(status, "\r\x1b[K")
	}
	res.WallTime = now().Sub(start)
	return res, err
}
