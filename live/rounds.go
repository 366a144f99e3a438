package live

import (
	"context"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/steering"
)

// RoundRunner runs a steering.Layer's rounds on a goroutine of its own, so
// exploration never blocks the core goroutine: the live shell's
// steering.Runner. A newer round cancels the one in progress (its
// context) and replaces one not yet taken (Round.Skip), so the runner
// always explores the newest snapshot. A round is measured in wall time
// and its result takes effect as soon as it is handed back
// (Round.Done(time.Now(), ...), which wakes the runtime).
//
// Build one per steering.Layer with NewRoundRunner and put it in
// steering.LayerConfig.Runner; the goroutine starts with the first round
// and ends at Stop, which the layer calls when the runtime stops
// (layer.Stopper). Run and Stop are safe from any goroutine.
type RoundRunner struct {
	mu      sync.Mutex
	cond    *sync.Cond
	pending *steering.Round
	cancel  context.CancelFunc // of the running round; nil if none
	running bool               // the goroutine exists
	quit    bool
	wg      sync.WaitGroup
}

var _ steering.Runner = (*RoundRunner)(nil)

// NewRoundRunner returns a runner with no goroutine yet.
func NewRoundRunner() *RoundRunner {
	r := &RoundRunner{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

// Run takes round rd (steering.Runner): it cancels the round in progress,
// replaces the round not yet taken, and starts the goroutine on first use.
// It never blocks for a round.
func (r *RoundRunner) Run(rd *steering.Round) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.quit {
		rd.Skip()
		return
	}
	if r.pending != nil {
		r.pending.Skip()
	}
	r.pending = rd
	if r.cancel != nil {
		r.cancel()
	}
	if !r.running {
		r.running = true
		r.wg.Add(1)
		go r.loop()
	}
	r.cond.Signal()
}

// Stop cancels the round in progress, drops the one not yet taken and
// returns once the goroutine has ended (steering.Runner). Idempotent.
func (r *RoundRunner) Stop() {
	r.mu.Lock()
	r.quit = true
	if r.cancel != nil {
		r.cancel()
	}
	if r.pending != nil {
		r.pending.Skip()
		r.pending = nil
	}
	r.cond.Broadcast()
	r.mu.Unlock()
	r.wg.Wait()
}

// loop is the round goroutine: it explores the newest round and hands it
// back, until Stop.
func (r *RoundRunner) loop() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		for r.pending == nil && !r.quit {
			r.cond.Wait()
		}
		if r.quit {
			r.mu.Unlock()
			return
		}
		rd := r.pending
		r.pending = nil
		ctx, cancel := context.WithCancel(context.Background())
		r.cancel = cancel
		r.mu.Unlock()

		began := time.Now()
		rd.Explore(ctx)
		took := time.Since(began)

		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
		cancel()
		rd.Done(time.Now(), took)
	}
}
