package replayed

import "sync/atomic"

// slot holds the materialised object of one service value, or nothing.
// Taking empties it atomically, so an object has one owner even when
// explorer workers clone the same state concurrently.
type slot[O any] struct {
	p atomic.Pointer[holder[O]]
}

type holder[O any] struct{ obj Object[O] }

// take removes and returns the object, or nil.
func (s *slot[O]) take() Object[O] {
	if s == nil {
		return nil
	}
	if h := s.p.Swap(nil); h != nil {
		return h.obj
	}
	return nil
}

// put stores obj (replacing any object there).
func (s *slot[O]) put(obj Object[O]) { s.p.Store(&holder[O]{obj}) }

// giveBack stores obj if the slot is empty: an object borrowed read-only
// returns where it came from.
func (s *slot[O]) giveBack(obj Object[O]) {
	if s != nil {
		s.p.CompareAndSwap(nil, &holder[O]{obj})
	}
}

// counters are an Adapter's statistics.
type counters struct {
	steps, logged, takes, replays, replayed, images, rebases atomic.Int64
}

// Stats are an Adapter's counts since it was made, summed over every
// service value it built.
type Stats struct {
	// Steps are handler calls on live objects; Logged those whose input
	// the log kept.
	Steps, Logged int64
	// Takes are steps of a clone that took its parent's object; Replays
	// the objects rebuilt by replay (a clone, a checkpoint decoded, a
	// reset's durable read), and ReplayedInputs the handler calls they
	// made.
	Takes, Replays, ReplayedInputs int64
	// Images are the images a Rebaser wrote; Rebases those that became a
	// base (the object built from them observed the same).
	Images, Rebases int64
}

// Stats returns the adapter's counts. Safe for concurrent use.
func (a *Adapter[O]) Stats() Stats {
	c := &a.stats
	return Stats{Steps: c.steps.Load(), Logged: c.logged.Load(), Takes: c.takes.Load(),
		Replays: c.replays.Load(), ReplayedInputs: c.replayed.Load(), Images: c.images.Load(), Rebases: c.rebases.Load()}
}
