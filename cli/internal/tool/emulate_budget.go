package tool

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// emulateBudget is emulate's --budget and --max-memory, as check has them:
// an emulation of a million nodes held 1.44 GB and printed nothing for
// 100 s before it was killed. The run stops when either is spent, prints
// what it emulated up to then, and exits with an error saying which
// budget and how far it got; a run is a pure function of its seed, so the
// figures up to the stop are those of the whole run's first part.
type emulateBudget struct {
	wall   time.Duration
	memory int64
}

// Errors of a run stopped by its budget (wrapped by the error emulate
// returns).
var (
	errTimeBudget   = errors.New("time budget spent")
	errMemoryBudget = errors.New("memory budget spent")
)

// memoryPoll is how often the memory budget is read (runtime/metrics,
// about 200 ns a reading).
const memoryPoll = 50 * time.Millisecond

func (b *emulateBudget) register(fs *flag.FlagSet) {
	fs.Var(durationValue{&b.wall}, "budget", "wall-time budget of the run (e.g. 10m; 0: none): it stops with \"time budget\" and prints what it emulated")
	fs.Var(byteSize{&b.memory}, "max-memory", "memory budget of the run, e.g. 4GiB: it stops with \"memory budget\" before the process holds more (also the Go runtime's soft memory limit; 0: none)")
}

func (b *emulateBudget) validate() error {
	if b.wall < 0 || b.memory < 0 {
		return usagef("--budget and --max-memory must not be negative")
	}
	return nil
}

// watch returns ctx bounded by the budgets and a function that ends the
// watch; a context ended by a budget has errTimeBudget or
// errMemoryBudget as its cause.
func (b *emulateBudget) watch(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var stops []func()
	if b.wall > 0 {
		t := time.AfterFunc(b.wall, func() { cancel(errTimeBudget) })
		stops = append(stops, func() { t.Stop() })
	}
	if b.memory > 0 {
		stops = append(stops, b.watchMemory(cancel))
	}
	return ctx, func() {
		for _, s := range stops {
			s()
		}
		cancel(nil)
	}
}

// watchMemory sets the Go runtime's soft memory limit to the memory
// budget and polls the heap every memoryPoll, cancelling with
// errMemoryBudget once it is spent; stop ends the polling and restores
// the previous limit.
func (b *emulateBudget) watchMemory(cancel context.CancelCauseFunc) (stop func()) {
	restore := debug.SetMemoryLimit(b.memory)
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(memoryPoll)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if over, _ := consequence.OverMemory(b.memory); over {
					cancel(errMemoryBudget)
					return
				}
			}
		}
	}()
	return func() { close(done); <-ended; debug.SetMemoryLimit(restore) }
}

// spent returns the error of a run ctx's budget stopped, or nil.
func (b *emulateBudget) spent(ctx context.Context, at, total time.Duration) error {
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errTimeBudget):
		return fmt.Errorf("emulate: stopped at %v of %v virtual: %w (--budget %v)", at, total, errTimeBudget, b.wall)
	case errors.Is(cause, errMemoryBudget):
		return fmt.Errorf("emulate: stopped at %v of %v virtual: %w (--max-memory %d bytes)", at, total, errMemoryBudget, b.memory)
	}
	return nil
}
