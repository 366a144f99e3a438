package consequence

import (
	"context"
	"fmt"
	mrand "math/rand/v2"

	"github.com/seed6eee2ec7/crystalball/node"
)

// UnsafeWalk is a random walk that reached a state violating a safety
// property: its start, the actions it took and the violating state it
// stopped in.
type UnsafeWalk[S, A any] struct {
	Start     S
	Path      Path[A]
	State     S
	Violation PropertyError
}

// SafetyWalkResult is what SafetyWalks found.
type SafetyWalkResult[S, A any] struct {
	// Walks counts the walks taken, Steps the steps they took.
	Walks, Steps int
	// Unsafe are the walks that reached a violating state, in walk order,
	// at most the maxUnsafe the call allowed.
	Unsafe []UnsafeWalk[S, A]
}

// SafetyWalks takes opts.Walks random walks of up to opts.DMax steps from
// m's start states (walk i from start i mod len(Init)), drawn by
// opts.Weight, checking the safety properties of props in every state a
// walk reaches; a walk stops at its first violating state and is recorded
// in Unsafe, and the walks stop once maxUnsafe are recorded (maxUnsafe
// <= 0: one). Liveness properties are ignored, as are opts.DInit and
// opts.K.
//
// It is the deep, unpruned complement of a consequence search: the
// search expands a node's local actions (timers, application calls) only
// the first time it meets the node's local state, and stops at its state
// budget a few levels down, so a race that needs a timer to fire again in
// a local state the node has been in before, or depth beyond the budget,
// escapes it; a walk takes every enabled action at every step, however
// deep, at the cost of covering the space sparsely. Walks draw from the
// streams (opts.Seed, 1<<60|i), disjoint from RandomWalks' and
// FindCriticalTransition's, so the result is a pure function of the
// model, the properties and the options. A panic of the model or a
// property ends the walks with the error Run would return for it. Walks
// run on the calling goroutine.
func SafetyWalks[S, A any](ctx context.Context, m Model[S, A], props []Property[S], opts WalkOptions[A], maxUnsafe int) (*SafetyWalkResult[S, A], error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInvalidModel)
	}
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	safety, err := safetyOnly(props)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	w := &walker[S, A]{ctx: ctx, m: m, opts: o}
	starts := m.Init()
	res := &SafetyWalkResult[S, A]{}
	if len(starts) == 0 {
		return res, nil
	}
	maxUnsafe = max(maxUnsafe, 1)
	for i := 0; i < o.Walks && len(res.Unsafe) < maxUnsafe; i++ {
		u, steps, err := w.safetyWalk(starts[i%len(starts)], safety, 1<<60|uint64(i))
		res.Steps += steps
		if err != nil {
			return res, err
		}
		res.Walks++
		if u != nil {
			res.Unsafe = append(res.Unsafe, *u)
		}
	}
	return res, nil
}

// safetyOnly keeps the safety properties of props; it is an error if
// there are none or one is incomplete.
func safetyOnly[S any](props []Property[S]) ([]Property[S], error) {
	var out []Property[S]
	for _, p := range props {
		if p.Check == nil || p.Name == "" {
			return nil, fmt.Errorf("%w: property %q is incomplete", ErrInvalidOptions, p.Name)
		}
		if p.Kind != node.Liveness {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no safety property", ErrInvalidOptions)
	}
	return out, nil
}

// safetyWalk takes one walk of at most DMax steps from s on stream and
// returns it if it reached a state violating one of props (nil if not),
// with the steps it took.
func (w *walker[S, A]) safetyWalk(s S, props []Property[S], stream uint64) (_ *UnsafeWalk[S, A], steps int, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p, fmt.Sprintf("taking safety walk %d", stream&^(1<<60)))
		}
	}()
	rng := mrand.New(mrand.NewPCG(w.opts.Seed, stream))
	start := s
	var path Path[A]
	for steps < w.opts.DMax {
		if steps%256 == 0 {
			if err := w.ctx.Err(); err != nil {
				return nil, steps, fmt.Errorf("consequence: safety walk: %w", err)
			}
		}
		a, ok := w.pick(s, rng)
		if !ok {
			return nil, steps, nil
		}
		steps++
		next, enabled := w.m.Next(s, a.Act)
		if !enabled {
			continue // a listed action turned out disabled: a stutter
		}
		path = append(path, a)
		s = next
		for _, p := range props {
			if verr := p.Check(s); verr != nil {
				return &UnsafeWalk[S, A]{Start: start, Path: path, State: s, Violation: PropertyError{Property: p.Name, Err: verr}}, steps, nil
			}
		}
	}
	return nil, steps, nil
}
