package consequence

import (
	"cmp"
	"context"
	"fmt"
	mrand "math/rand/v2"

	"github.com/seed6eee2ec7/crystalball/node"
)

// WalkOptions configure MaceMC's liveness search: random walks and the
// search for the critical transition. The zero value of every field means
// its documented default (DefaultWalkOptions); negative counts are errors.
type WalkOptions[A any] struct {
	// Seed seeds every walk: walk w of a search draws from the stream
	// (Seed, w), so results do not depend on anything else. Zero is a
	// seed like any other.
	Seed uint64
	// Walks is the number of random walks RandomWalks takes from each start
	// state; zero means DefaultWalks.
	Walks int
	// DMax is the length of a walk, in steps; zero means DefaultDMax.
	DMax int
	// DInit is the number of steps after which a walk that reaches a live
	// state counts as live; zero (the default) means any live state
	// counts.
	DInit int
	// K is the number of walks per probe in FindCriticalTransition: a
	// state is judged dead when none of K walks of DMax steps from it
	// reaches a live state. Zero means DefaultK.
	K int
	// Weight biases the choice of the next action: an action is drawn with
	// probability proportional to its weight; actions of weight <= 0 are
	// never taken. Nil weighs every action 1. It must be deterministic.
	Weight func(Action[A]) float64
}

// Defaults of WalkOptions (MaceMC's published settings are of this order).
const (
	// DefaultWalks is WalkOptions.Walks's default.
	DefaultWalks = 100
	// DefaultDMax is WalkOptions.DMax's default, in steps.
	DefaultDMax = 500
	// DefaultK is WalkOptions.K's default, in walks per probe.
	DefaultK = 20
)

// DefaultWalkOptions returns what the zero WalkOptions stand for: seed 0,
// DefaultWalks walks of DefaultDMax steps, any live state counting (DInit
// 0), DefaultK walks per probe, every action weighing 1 (Weight nil).
func DefaultWalkOptions[A any]() WalkOptions[A] {
	return WalkOptions[A]{Walks: DefaultWalks, DMax: DefaultDMax, K: DefaultK}
}

func (o WalkOptions[A]) resolve() (WalkOptions[A], error) {
	if o.Walks < 0 || o.DMax < 0 || o.DInit < 0 || o.K < 0 {
		return o, fmt.Errorf("%w: negative walk option (Walks %d, DMax %d, DInit %d, K %d)", ErrInvalidOptions, o.Walks, o.DMax, o.DInit, o.K)
	}
	d := DefaultWalkOptions[A]()
	o.Walks = cmp.Or(o.Walks, d.Walks)
	o.DMax = cmp.Or(o.DMax, d.DMax)
	o.K = cmp.Or(o.K, d.K)
	return o, nil
}

// Walk is one random walk: its start, the actions it took and the state it
// ended in. Live reports whether it reached a live state (one where every
// liveness property holds) at step DInit or later; it stops there.
type Walk[S, A any] struct {
	Start S
	Path  Path[A]
	State S
	Live  bool
	// Failing are the liveness properties that do not hold in State, in
	// property order, with their errors (empty for a live walk).
	Failing []PropertyError
}

// PropertyError is a property that failed and why.
type PropertyError struct {
	Property string
	Err      error
}

// liveness keeps the liveness properties of props.
func liveness[S any](props []Property[S]) ([]Property[S], error) {
	var out []Property[S]
	for _, p := range props {
		if p.Check == nil || p.Name == "" {
			return nil, fmt.Errorf("%w: property %q is incomplete", ErrInvalidOptions, p.Name)
		}
		if p.Kind == node.Liveness {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no liveness property", ErrInvalidOptions)
	}
	return out, nil
}

// failing returns the liveness properties that do not hold in s.
func failing[S any](props []Property[S], s S) []PropertyError {
	var out []PropertyError
	for _, p := range props {
		if err := p.Check(s); err != nil {
			out = append(out, PropertyError{Property: p.Name, Err: err})
		}
	}
	return out
}

func isLive[S any](props []Property[S], s S) bool {
	for _, p := range props {
		if p.Check(s) != nil {
			return false
		}
	}
	return true
}

// walker takes random walks of one model.
type walker[S, A any] struct {
	ctx   context.Context
	m     Model[S, A]
	props []Property[S]
	opts  WalkOptions[A]
	buf   []Action[A]
	ws    []float64
	err   error // why takeWalk stopped the walks, if not a suspect
}

// walk takes one walk of at most DMax steps from s with the random stream
// (seed, stream), stopping at the first live state at or after step DInit.
// It also stops early in a state without enabled actions.
//
// A panic of the model or a property ends the walk with the error Run
// would return for it (ErrInvalidModel or ErrModelPanic).
func (w *walker[S, A]) walk(s S, stream uint64) (_ Walk[S, A], err error) {
	defer func() {
		if p := recover(); p != nil {
			err = panicError(p, fmt.Sprintf("taking random walk %d", stream))
		}
	}()
	rng := mrand.New(mrand.NewPCG(w.opts.Seed, stream))
	out := Walk[S, A]{Start: s}
	for step := 0; ; step++ {
		if step >= w.opts.DInit && isLive(w.props, s) {
			out.State, out.Live = s, true
			return out, nil
		}
		if step >= w.opts.DMax {
			break
		}
		if step%256 == 0 {
			if err := w.ctx.Err(); err != nil {
				return out, fmt.Errorf("consequence: random walk: %w", err)
			}
		}
		a, ok := w.pick(s, rng)
		if !ok {
			break
		}
		next, enabled := w.m.Next(s, a.Act)
		if !enabled {
			// A listed action turned out disabled: it is a stutter.
			continue
		}
		out.Path = append(out.Path, a)
		s = next
	}
	out.State = s
	out.Failing = failing(w.props, s)
	return out, nil
}

// pick draws an enabled action of s by weight.
func (w *walker[S, A]) pick(s S, rng *mrand.Rand) (Action[A], bool) {
	w.buf = w.m.Actions(s, w.buf[:0])
	if len(w.buf) == 0 {
		return Action[A]{}, false
	}
	if w.opts.Weight == nil {
		return w.buf[rng.IntN(len(w.buf))], true
	}
	w.ws = w.ws[:0]
	total := 0.0
	for _, a := range w.buf {
		x := w.opts.Weight(a)
		if !(x > 0) {
			x = 0
		}
		total += x
		w.ws = append(w.ws, total)
	}
	if !(total > 0) {
		return Action[A]{}, false
	}
	r := rng.Float64() * total
	for i, c := range w.ws {
		if r < c {
			return w.buf[i], true
		}
	}
	return w.buf[len(w.buf)-1], true
}

func newWalker[S, A any](ctx context.Context, m Model[S, A], props []Property[S], opts WalkOptions[A]) (*walker[S, A], error) {
	if m == nil {
		return nil, fmt.Errorf("%w: nil model", ErrInvalidModel)
	}
	o, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	live, err := liveness(props)
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return &walker[S, A]{ctx: ctx, m: m, props: live, opts: o}, nil
}

// WalkResult is what RandomWalks found.
type WalkResult[S, A any] struct {
	// Walks is the number of walks taken; Live how many reached a live
	// state.
	Walks, Live int
	// Suspect is the first walk (in walk order) that did not reach a live
	// state: a suspected liveness violation, to be confirmed with
	// FindCriticalTransition. Nil if every walk was live.
	Suspect *Walk[S, A]
}

// RandomWalks runs MaceMC's random walks: opts.Walks walks of up to
// opts.DMax steps from each of m's start states, in order, each drawing
// from its own stream of opts.Seed; it stops at the first walk that never
// reaches a state where every liveness property of props holds (safety
// properties are ignored). The result is a pure function of the model, the
// properties and the options. Walks run on the calling goroutine.
func RandomWalks[S, A any](ctx context.Context, m Model[S, A], props []Property[S], opts WalkOptions[A]) (*WalkResult[S, A], error) {
	w, err := newWalker(ctx, m, props, opts)
	if err != nil {
		return nil, err
	}
	starts := m.Init()
	res := &WalkResult[S, A]{}
	for i := 0; i < w.opts.Walks; i++ {
		for k, s := range starts {
			if w.takeWalk(res, PathState[S, A]{Start: s, State: s}, uint64(i*len(starts)+k)) {
				return res, w.err
			}
		}
	}
	return res, nil
}

// RandomWalksFrom runs opts.Walks random walks in all from the given
// states, walk i from from[i mod len(from)], typically the periphery of a
// bounded search (Result.Periphery): MaceMC walks from where exhaustive
// search left off, so that walks start deep in the state space. A suspect's
// Start is its state's start state and its Path the state's path followed
// by the walk, so FindCriticalTransition searches the whole path. Walks draw
// from streams disjoint from RandomWalks' and FindCriticalTransition's; the
// result is a pure function of its inputs.
func RandomWalksFrom[S, A any](ctx context.Context, m Model[S, A], props []Property[S], from []PathState[S, A], opts WalkOptions[A]) (*WalkResult[S, A], error) {
	w, err := newWalker(ctx, m, props, opts)
	if err != nil {
		return nil, err
	}
	res := &WalkResult[S, A]{}
	if len(from) == 0 {
		return res, nil
	}
	for i := 0; i < w.opts.Walks; i++ {
		if w.takeWalk(res, from[i%len(from)], 1<<61|uint64(i)) {
			return res, w.err
		}
	}
	return res, nil
}

// takeWalk takes one walk from ps.State on stream and counts it in res. It
// reports whether the walks must stop: at a suspect (recorded in res, its
// path prefixed with ps.Path) or on an error (left in w.err).
func (w *walker[S, A]) takeWalk(res *WalkResult[S, A], ps PathState[S, A], stream uint64) bool {
	walk, err := w.walk(ps.State, stream)
	if err != nil {
		w.err = err
		return true
	}
	res.Walks++
	if walk.Live {
		res.Live++
		return false
	}
	walk.Start = ps.Start
	walk.Path = append(append(make([]Action[A], 0, len(ps.Path)+len(walk.Path)), ps.Path...), walk.Path...)
	res.Suspect = &walk
	return true
}

// Verdict classifies a suspected liveness violation (MaceMC §4.4).
type Verdict uint8

const (
	// C1: the critical transition was found: from the state before it some
	// walk reaches a live state, from the state after it none of K walks
	// does. The violation is very likely real.
	C1 Verdict = iota + 1
	// C2: walks from the end of the suspect path reach a live state: the
	// path was not long enough to tell. Raise DMax.
	C2
)

// String returns "C1" or "C2".
func (v Verdict) String() string {
	switch v {
	case C1:
		return "C1"
	case C2:
		return "C2"
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

// Critical is the result of FindCriticalTransition.
type Critical[S, A any] struct {
	Verdict Verdict
	// Step is the critical transition's position in the path (C1): the
	// state reached by Path[:Step] is live (a walk from it reaches a live
	// state), the state reached by Path[:Step+1] is dead. Step is -1 when
	// the start state itself is dead, and for C2.
	Step int
	// Action is Path[Step] (C1 with Step >= 0).
	Action Action[A]
	// LivePath is the path from the start that shares the suspect path's
	// first Step actions and then follows a walk to a live state: the
	// nearest live path, for comparison. Nil when Step is -1.
	LivePath Path[A]
	// Probes is the number of states probed.
	Probes int
}

// FindCriticalTransition runs MaceMC's search for the critical transition
// along path from start (typically a WalkResult's Suspect): it probes a
// state with opts.K random walks of opts.DMax steps (dead if none reaches a
// live state), first the end of the path (not dead: C2), then states
// exponentially farther back until one is live, then binary search between
// the last live and the first dead state. Probe walks draw from streams of
// opts.Seed derived from the probed position, so the result is a pure
// function of its inputs.
func FindCriticalTransition[S, A any](ctx context.Context, m Model[S, A], props []Property[S], start S, path []Action[A], opts WalkOptions[A]) (*Critical[S, A], error) {
	w, err := newWalker(ctx, m, props, opts)
	if err != nil {
		return nil, err
	}
	// The states along the path.
	states := make([]S, len(path)+1)
	states[0] = start
	for i, a := range path {
		next, ok := m.Next(states[i], a.Act)
		if !ok {
			return nil, fmt.Errorf("%w: step %d (%v) is not enabled", ErrReplay, i+1, a.Act)
		}
		states[i+1] = next
	}
	res := &Critical[S, A]{Step: -1}
	liveWalks := map[int]Walk[S, A]{}
	// probe reports whether some walk from states[i] reaches a live state.
	probe := func(i int) (bool, error) {
		res.Probes++
		for k := 0; k < w.opts.K; k++ {
			// Streams past the ones RandomWalks uses, one block per position.
			walk, err := w.walk(states[i], 1<<62|uint64(i)<<20|uint64(k))
			if err != nil {
				return false, err
			}
			if walk.Live {
				liveWalks[i] = walk
				return true, nil
			}
		}
		return false, nil
	}
	n := len(path)
	live, err := probe(n)
	if err != nil {
		return nil, err
	}
	if live {
		res.Verdict = C2
		return res, nil
	}
	res.Verdict = C1
	// Exponential search back for a live state: dead is the earliest known
	// dead position, lo a live one (or -1: none).
	dead, lo := n, -1
	for back := 1; ; back *= 2 {
		i := n - back
		if i < 0 {
			i = 0
		}
		live, err := probe(i)
		if err != nil {
			return nil, err
		}
		if live {
			lo = i
			break
		}
		dead = i
		if i == 0 {
			break
		}
	}
	if lo < 0 {
		return res, nil // the start state is dead
	}
	for dead-lo > 1 {
		mid := lo + (dead-lo)/2
		live, err := probe(mid)
		if err != nil {
			return nil, err
		}
		if live {
			lo = mid
		} else {
			dead = mid
		}
	}
	res.Step = lo
	res.Action = path[lo]
	res.LivePath = append(append([]Action[A](nil), path[:lo]...), liveWalks[lo].Path...)
	return res, nil
}

// KindWeights returns a WalkOptions.Weight for the actor model that weighs
// each action by its kind (deliveries, timers, application calls, resets,
// breaks, datagram deliveries and drops, refusals, and the lasting faults:
// crashes, restarts, partitions, heals, clock jumps); kinds missing from w weigh 1, and
// a weight of 0 excludes the kind. The map is copied.
func KindWeights(w map[ActorActionKind]float64) func(Action[ActorAction]) float64 {
	var ws [ActClockJump + 1]float64
	for k := range ws {
		ws[k] = 1
	}
	for k, x := range w {
		if int(k) < len(ws) {
			ws[k] = x
		}
	}
	return func(a Action[ActorAction]) float64 {
		if int(a.Act.Kind) < len(ws) {
			return ws[a.Act.Kind]
		}
		return 1
	}
}
