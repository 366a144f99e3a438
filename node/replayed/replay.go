package replayed

import (
	"fmt"
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/zeebo/xxh3"
)

// rebuild builds node self's object from base (durable bytes or an image
// taken with timers scheduled) and replays log into it, checking the last
// input's observation (with checkAll, every input's: Config.CheckEveryInput,
// which costs an observation per input). A handler that panics, draws
// random numbers the live one did not, or leaves an observation other
// than the logged one makes it fail with ErrDiverged.
//
// It also returns the timer names scheduled after the replay.
func (a *Adapter[O]) rebuild(self node.ID, base []byte, timers []string, log []*input, checkAll bool) (obj Object[O], _ []string, err error) {
	obj, err = a.build(self, base)
	if err != nil {
		return nil, nil, fmt.Errorf("building the object from a base of %d bytes: %w", len(base), err)
	}
	if obj == nil {
		return nil, nil, fmt.Errorf("Config.New returned a nil object")
	}
	if len(log) == 0 {
		return obj, timers, nil
	}
	a.stats.replays.Add(1)
	a.stats.replayed.Add(int64(len(log)))
	env := &replayEnv{self: self, timers: slices.Clone(timers)}
	for i, in := range log {
		if err := a.replayOne(obj, env, in); err != nil {
			return nil, nil, fmt.Errorf("%w at input %d of %d (%v): %w", ErrDiverged, i+1, len(log), in, err)
		}
		if checkAll || i == len(log)-1 {
			if err := a.checkObservation(obj, in); err != nil {
				return nil, nil, fmt.Errorf("%w at input %d of %d (%v): %w", ErrDiverged, i+1, len(log), in, err)
			}
		}
	}
	return obj, env.timers, nil
}

// replayOne makes the handler call of in on obj, effects discarded.
func (a *Adapter[O]) replayOne(obj Object[O], env *replayEnv, in *input) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the handler panicked: %v", p)
		}
	}()
	env.now, env.rand, env.hasRnd, env.drewUnlogged = in.at, in.rand, in.hasRand, false
	switch in.kind {
	case node.EventInit:
		env.timers = env.timers[:0]
		obj.Init(env)
	case node.EventMessage:
		obj.HandleMessage(env, in.peer, in.msg)
	case node.EventTimer:
		if !env.TimerScheduled(in.timer) {
			return fmt.Errorf("timer %q fired but the replay never set it", in.timer)
		}
		env.CancelTimer(in.timer)
		obj.HandleTimer(env, in.timer)
	case node.EventApp:
		obj.HandleApp(env, in.msg)
	case node.EventTransportError:
		obj.HandleTransportError(env, in.peer)
	case node.EventSendRefused:
		if h, ok := obj.(SendRefusedObject); ok {
			h.HandleSendRefused(env, in.peer, in.msg)
		}
	}
	if env.drewUnlogged {
		return fmt.Errorf("the handler drew random numbers the live one did not")
	}
	return nil
}

// checkObservation compares obj's observation with the one logged after
// in.
func (a *Adapter[O]) checkObservation(obj Object[O], in *input) error {
	fp, err := node.AppendCanonical(nil, obj.Observe())
	if err != nil {
		return fmt.Errorf("encoding the observation: %w", err)
	}
	if h := xxh3.Hash(fp); h != in.obs {
		return fmt.Errorf("observation hash %016x, the live object's was %016x", h, in.obs)
	}
	return nil
}

// build calls Config.New, whose durable bytes may come from a checkpoint:
// a panic there is an error too.
func (a *Adapter[O]) build(self node.ID, base []byte) (obj Object[O], err error) {
	defer func() {
		if p := recover(); p != nil {
			obj, err = nil, fmt.Errorf("Config.New panicked: %v", p)
		}
	}()
	return a.cfg.New(self, base)
}
