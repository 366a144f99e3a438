package consequence

import (
	"context"
	"fmt"
)

// DefaultMaxSuspects is LivenessOptions.MaxSuspects's default.
const DefaultMaxSuspects = 10

// LivenessOptions configure FindLivenessViolation.
type LivenessOptions[A any] struct {
	// Walk configures the random walks and every critical-transition
	// search.
	Walk WalkOptions[A]
	// MaxSuspects is the most suspects whose critical transition is
	// searched: a suspect judged C2 (its walk was too short to tell) is
	// passed over and the walks go on, since under faults the first
	// suspect is often slow convergence and a real violation comes later.
	// Zero means DefaultMaxSuspects; 1 stops at the first suspect, as
	// RandomWalks does. Negative is an error.
	MaxSuspects int
}

// LivenessResult is what FindLivenessViolation found.
type LivenessResult[S, A any] struct {
	// Walks is the number of walks taken; Live how many reached a live
	// state.
	Walks, Live int
	// Suspects is the number of suspects judged, C2 how many of them
	// were judged C2.
	Suspects, C2 int
	// Suspect is the reported suspect: the first one judged C1, else the
	// first suspect (judged C2); nil when every walk was live.
	Suspect *Walk[S, A]
	// Critical is Suspect's critical-transition search.
	Critical *Critical[S, A]
}

// FindLivenessViolation runs MaceMC's liveness search to a verdict: the
// random walks of RandomWalks (opts.Walk.Walks from each start state, on
// the same streams, so its first suspect is RandomWalks' Suspect), then
// those of RandomWalksFrom from the given states (none when from is
// empty); each suspect's critical transition is searched at once
// (FindCriticalTransition), and the search stops at the first C1 or when
// MaxSuspects suspects were judged. The result is a pure function of its
// inputs.
func FindLivenessViolation[S, A any](ctx context.Context, m Model[S, A], props []Property[S], from []PathState[S, A], opts LivenessOptions[A]) (*LivenessResult[S, A], error) {
	if opts.MaxSuspects < 0 {
		return nil, fmt.Errorf("%w: negative MaxSuspects %d", ErrInvalidOptions, opts.MaxSuspects)
	}
	if opts.MaxSuspects == 0 {
		opts.MaxSuspects = DefaultMaxSuspects
	}
	w, err := newWalker(ctx, m, props, opts.Walk)
	if err != nil {
		return nil, err
	}
	ls := &livenessSearch[S, A]{w: w, props: props, opts: opts, res: &LivenessResult[S, A]{}}
	starts := m.Init()
	for i := 0; i < w.opts.Walks; i++ {
		for k, s := range starts {
			if done, err := ls.walk(PathState[S, A]{Start: s, State: s}, uint64(i*len(starts)+k)); done || err != nil {
				return ls.res, err
			}
		}
	}
	for i := 0; len(from) > 0 && i < w.opts.Walks; i++ {
		// RandomWalksFrom's streams.
		if done, err := ls.walk(from[i%len(from)], 1<<61|uint64(i)); done || err != nil {
			return ls.res, err
		}
	}
	return ls.res, nil
}

// livenessSearch is one FindLivenessViolation.
type livenessSearch[S, A any] struct {
	w     *walker[S, A]
	props []Property[S]
	opts  LivenessOptions[A]
	res   *LivenessResult[S, A]
}

// walk takes one walk from ps on stream and judges it if it is a suspect.
// It reports whether the search is over (a C1, or the suspect budget
// spent).
func (ls *livenessSearch[S, A]) walk(ps PathState[S, A], stream uint64) (bool, error) {
	var one WalkResult[S, A]
	if ls.w.takeWalk(&one, ps, stream) && ls.w.err != nil {
		return true, ls.w.err
	}
	ls.res.Walks += one.Walks
	ls.res.Live += one.Live
	if one.Suspect == nil {
		return false, nil
	}
	ls.res.Suspects++
	crit, err := FindCriticalTransition(ls.w.ctx, ls.w.m, ls.props, one.Suspect.Start, one.Suspect.Path, ls.opts.Walk)
	if err != nil {
		return true, err
	}
	if crit.Verdict == C2 {
		ls.res.C2++
	}
	if crit.Verdict == C1 || ls.res.Suspect == nil {
		ls.res.Suspect, ls.res.Critical = one.Suspect, crit
	}
	return crit.Verdict == C1 || ls.res.Suspects >= ls.opts.MaxSuspects, nil
}
