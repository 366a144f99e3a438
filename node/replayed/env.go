package replayed

import (
	"log/slog"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// recordEnv is the Env an object's handler gets on a live step: the
// node's own Env, watched for what the log needs — the random source's
// state at the handler's first draw, and whether the set of scheduled
// timer names changed.
type recordEnv struct {
	node.Env
	in *input
	// touched are the timers the handler set or cancelled (and the one
	// that fired), with whether each was scheduled before the step.
	touched []timerBefore
}

type timerBefore struct {
	name      string
	scheduled bool
}

func (e *recordEnv) Rand() *node.Rand {
	r := e.Env.Rand()
	if !e.in.hasRand {
		e.in.rand, e.in.hasRand = *r, true
	}
	return r
}

func (e *recordEnv) touch(name string) {
	for _, t := range e.touched {
		if t.name == name {
			return
		}
	}
	e.touched = append(e.touched, timerBefore{name, e.Env.TimerScheduled(name)})
}

func (e *recordEnv) SetTimer(name string, after time.Duration) {
	e.touch(name)
	e.Env.SetTimer(name, after)
}

func (e *recordEnv) CancelTimer(name string) {
	e.touch(name)
	e.Env.CancelTimer(name)
}

// timersChanged reports whether the step changed the set of scheduled
// timer names (a deadline moved is not a change: a replay never reads
// deadlines).
func (e *recordEnv) timersChanged() bool {
	for _, t := range e.touched {
		if e.Env.TimerScheduled(t.name) != t.scheduled {
			return true
		}
	}
	return false
}

// scheduled returns the timer names scheduled after the step, given
// those before (a new slice when they changed: the old one may be a
// clone's).
func (e *recordEnv) scheduled(before []string) []string {
	out := before
	copied := false
	for _, t := range e.touched {
		i, had := slices.BinarySearch(out, t.name)
		has := e.Env.TimerScheduled(t.name)
		if had == has {
			continue
		}
		if !copied {
			out, copied = slices.Clone(out), true
		}
		if has {
			out = slices.Insert(out, i, t.name)
		} else {
			out = slices.Delete(out, i, i+1)
		}
	}
	return out
}

// replayEnv is the Env of a replayed handler call: the logged time and
// random source, the timer names the replay has scheduled so far, and
// nowhere for effects to go (they happened when the input was live).
type replayEnv struct {
	self   node.ID
	now    time.Time
	rand   node.Rand
	hasRnd bool
	// drewUnlogged is set when a handler drew random numbers where the
	// live one did not: the replay diverged.
	drewUnlogged bool
	timers       []string // sorted
}

var discardLogger = slog.New(slog.DiscardHandler)

func (e *replayEnv) Self() node.ID                      { return e.self }
func (e *replayEnv) Now() time.Time                     { return e.now }
func (e *replayEnv) Send(node.ID, node.Message)         {}
func (e *replayEnv) SendDatagram(node.ID, node.Message) {}
func (e *replayEnv) TrySend(node.ID, node.Message)      {}
func (e *replayEnv) Logger() *slog.Logger               { return discardLogger }
func (e *replayEnv) TimerScheduled(name string) bool {
	_, ok := slices.BinarySearch(e.timers, name)
	return ok
}
func (e *replayEnv) SetTimer(name string, _ time.Duration) { e.schedule(name) }

func (e *replayEnv) Rand() *node.Rand {
	if !e.hasRnd {
		e.drewUnlogged = true
	}
	return &e.rand
}

func (e *replayEnv) schedule(name string) {
	if i, ok := slices.BinarySearch(e.timers, name); !ok {
		e.timers = slices.Insert(e.timers, i, name)
	}
}

func (e *replayEnv) CancelTimer(name string) {
	if i, ok := slices.BinarySearch(e.timers, name); ok {
		e.timers = slices.Delete(e.timers, i, i+1)
	}
}

var (
	_ node.Env = (*recordEnv)(nil)
	_ node.Env = (*replayEnv)(nil)
)
