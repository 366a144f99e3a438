package consequence

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// How the engine works.
//
// The search is level-synchronous BFS. The frontier (cur) holds the states
// first found at depth d with their fingerprints; expanding it produces the
// level d+1 (next) and its parent links. Everything is ordered by the
// "global order" of candidates — parent position in the frontier, then the
// action's position in the parent's Actions list — and the first candidate
// in that order wins whenever several reach the same new state. That order is
// exactly the FIFO order of the paper's sequential Fig. 5 and Fig. 8, so
// every result equals that of a sequential search, whatever the number of
// workers.
//
// A level is expanded in one of two ways:
//
//   - direct (one worker, small frontiers, and the level at which the state
//     budget runs out): states are expanded in order on the calling goroutine
//     and each successor is inserted into the visited set at once;
//   - parallel: the frontier is cut into chunks that workers take in any
//     order (phase A: expand, drop stutters and already-visited successors,
//     keep the rest as candidates binned by visited-set shard group); then
//     each worker inserts the candidates of its own shard group, walking the
//     chunks in order (phase B: the first candidate in global order wins);
//     then each chunk copies its winners to their places in the next level
//     and checks properties on them (phase C).
//
// Consequence prediction first plans the level: the local fingerprints of
// every node with a local action are computed in parallel and inserted into
// localExplored in global order, which decides, for every (state, node), if
// that node's local actions are expanded there.

// parallelMinStates is the smallest frontier expanded in parallel; smaller
// ones are not worth the goroutines.
const parallelMinStates = 512

// checkEvery is how many states a worker expands between looks at the
// clock and the context.
const checkEvery = 256

// bigStateCheck is how many successors the expansion of a state with more
// than checkEvery actions makes between looks at the budgets.
const bigStateCheck = 16

// directBatch is how many successors direct mode collects, from
// consecutive frontier states, before it inserts them (touching their
// buckets first).
const directBatch = 32

// touchBatch is how many visited-set buckets phase B touches ahead of
// inserting into them.
const touchBatch = 16

// parallelRound is the most frontier states one parallel round expands. A
// level is expanded round by round, in frontier order, so a time budget or a
// cancellation that ends a level part-way keeps the rounds already done (a
// prefix of the level, as a sequential search would keep) instead of
// dropping the whole level.
const parallelRound = 1 << 15

// pending is a violation as the search finds it, before its path is rebuilt.
type pending[S any] struct {
	prop  int
	depth int
	index int
	state S
	fp    node.Hash
	err   error
}

// localKey is a node's local fingerprint mixed with its node index.
type localKey struct {
	node int
	key  node.Hash
}

// localPlan records consequence prediction's decisions for the frontier:
// state i's local nodes, in the order they first appear in its Actions list,
// are nodes[off[i]:off[i+1]], and allowed says whether their local actions
// are expanded.
type localPlan struct {
	off     []uint32
	nodes   []int
	allowed []bool
}

type cand[S any] struct {
	state  S      // a model that does not pack
	woff   uint32 // a packing model: the candidate's words in chunk.cwords
	wlen   uint32
	fp     node.Hash
	sleep  uint64 // the sleep set this path gives the state
	at     uint32 // a winner's position in the next level (phase C)
	parent uint32
	ord    uint16
}

// chunk is a contiguous part of the frontier and everything a worker
// produced from it. Chunks are reused across levels.
type chunk[S any] struct {
	lo, hi int
	// consequence planning
	lkeys  []localKey
	lcount []uint32
	// phase A
	cands       []cand[S]
	cwords      []uint32   // a packing model: the candidates packed
	groups      [][]uint32 // candidate indices per shard group
	gen, pruned uint64
	slept       uint64
	listed      uint64 // successors' Actions listed for their sleep sets
	// phase B
	isNew  []bool
	newCnt []int // per shard group
	// phase C
	off    int
	words  []uint32 // the winners packed, in order (a packing model)
	wlen   []uint32 // each winner's number of words
	viols  []pending[S]
	vcount []int // per property
}

func (c *chunk[S]) reset(lo, hi, groups, props int) {
	c.lo, c.hi = lo, hi
	c.lkeys, c.lcount = c.lkeys[:0], c.lcount[:0]
	clear(c.cands) // drop references to the previous level's states
	c.cands = c.cands[:0]
	c.cwords = c.cwords[:0]
	if len(c.groups) != groups {
		c.groups = make([][]uint32, groups)
		c.newCnt = make([]int, groups)
	}
	for g := range c.groups {
		c.groups[g] = c.groups[g][:0]
		c.newCnt[g] = 0
	}
	c.gen, c.pruned, c.slept, c.listed = 0, 0, 0, 0
	c.off = 0
	c.words, c.wlen = c.words[:0], c.wlen[:0]
	clear(c.viols)
	c.viols = c.viols[:0]
	if len(c.vcount) != props {
		c.vcount = make([]int, props)
	}
	clear(c.vcount)
}

// worker holds one goroutine's scratch memory.
type worker[S, A any] struct {
	acts  []Action[A]
	sacts []Action[A] // partial-order reduction: a successor's actions
	// bits holds, while a state is expanded with partial-order reduction,
	// each action's bit in a sleep set (sleepKeys).
	bits []uint64
	// listed counts the successors whose Actions sleepAfter listed.
	listed uint64
	marks  nodeMarks
	succ   []cand[S] // direct mode: successors waiting to be inserted (directBatch)
	sink   uint64    // keeps bucket touches from being optimised away
}

type run[S, A any] struct {
	ctx      context.Context
	done     <-chan struct{}
	m        Model[S, A]
	props    []Property[S]
	safety   []int
	live     []int
	opts     Options
	groups   int
	start    time.Time
	deadline time.Time // zero: no time budget
	minPar   int
	// candRatio estimates candidates per frontier state (phase A output);
	// growth is the last level's ratio of new states to frontier states.
	candRatio float64
	growth    float64

	visited *fpSet
	local   *fpSet // localExplored; nil unless Consequence
	// por is the model's independence relation when the search uses sleep
	// sets (BFS, unless Options.DisablePOR); index then finds a state of
	// the next level by fingerprint, one per shard group.
	por   Commuter[S, A]
	keyed KeyedCommuter[S, A] // por's keys, if it has them and keys are not off
	// listed counts the successors whose Actions were listed for their
	// sleep sets, and porDecided says whether the search has weighed them
	// against the transitions slept (porPays).
	listed     uint64
	porDecided bool
	index      []levelIndex
	nextFP     func(int) node.Hash // the fingerprint of a state of next
	// packer keeps the levels of a PackingModel as words (nil: as states).
	packer Packer[S]
	// frontierPeak is the most memory the two levels and the packer's
	// tables held at a level's end (Result.FrontierBytes).
	frontierPeak uint64

	starts []S
	links  []levelLinks
	cur    level[S]
	next   level[S]
	plan   localPlan
	depth  int

	res        Result[S, A]
	found      []int // violations recorded per property
	viols      []pending[S]
	levelViols int
	refused    bool // the state budget refused a new state
	stop       StopReason

	workers []*worker[S, A]
	chunks  []*chunk[S]

	abort    atomic.Bool
	abortWhy atomic.Uint32
	peak     atomic.Uint64 // the largest memory reading (Options.MaxMemory)
	failMu   sync.Mutex
	failErr  error
}

func newRun[S, A any](ctx context.Context, m Model[S, A], props []Property[S], opts Options) *run[S, A] {
	r := &run[S, A]{
		ctx:     ctx,
		done:    ctx.Done(),
		m:       m,
		props:   props,
		opts:    opts,
		groups:  min(opts.Workers, 1<<visitedShards(opts)),
		minPar:  parallelMinStates,
		visited: newFPSet(visitedShards(opts)),
		found:   make([]int, len(props)),
	}
	if opts.minParallel > 0 {
		r.minPar = opts.minParallel
	}
	for i, p := range props {
		if p.Kind == node.Safety {
			r.safety = append(r.safety, i)
		} else {
			r.live = append(r.live, i)
		}
	}
	if opts.Strategy == Consequence {
		r.local = newFPSet(0)
	}
	if pm, ok := m.(PackingModel[S, A]); ok && packs(opts) {
		r.packer = pm.NewPacker()
	}
	if c, ok := m.(Commuter[S, A]); ok && opts.Strategy == BFS && !opts.DisablePOR {
		r.por = c
		if k, ok := c.(KeyedCommuter[S, A]); ok && opts.sleepByPosition == 0 {
			r.keyed = k
		}
		r.index = make([]levelIndex, r.groups)
		r.nextFP = func(i int) node.Hash { return r.fpAt(&r.next, i) }
	}
	for range opts.Workers {
		r.workers = append(r.workers, &worker[S, A]{})
	}
	return r
}

// search runs the whole search on the calling goroutine (starting workers
// for parallel levels) and assembles the result.
func (r *run[S, A]) search() (res *Result[S, A], err error) {
	r.start = r.opts.Clock()
	if r.opts.MaxTime > 0 {
		r.deadline = r.start.Add(r.opts.MaxTime)
	}
	defer func() {
		if p := recover(); p != nil {
			res, err = nil, r.panicError(p)
		}
	}()
	if err := r.initLevel(); err != nil {
		return nil, err
	}
	for r.stop == 0 {
		if err := r.step(); err != nil {
			return nil, err
		}
	}
	return r.result()
}

// initLevel builds depth 0 from Model.Init.
func (r *run[S, A]) initLevel() error {
	r.starts = r.m.Init()
	if len(r.starts) == 0 {
		return fmt.Errorf("%w: Init returned no states", ErrInvalidModel)
	}
	if len(r.starts) > 1<<32-1 {
		return fmt.Errorf("%w: Init returned %d states", ErrInvalidModel, len(r.starts))
	}
	r.res.Generated = uint64(len(r.starts))
	r.links = append(r.links, levelLinks{})
	for i, s := range r.starts {
		fp := normFP(r.m.Fingerprint(s))
		added, present := r.visited.insert(fp, r.roomFor(1))
		if !added {
			if !present {
				r.refused = true
				break
			}
			continue
		}
		r.res.Unique++
		k := r.cur.len()
		r.appendEntry(&r.cur, s, fp, 0)
		r.links[0].parent = append(r.links[0].parent, uint32(i))
		r.links[0].ord = append(r.links[0].ord, 0)
		r.checkSafety(nil, s, fp, 0, k)
	}
	r.res.DepthCounts = append(r.res.DepthCounts, uint64(r.cur.len()))
	r.progress()
	r.endLevel(r.cur.len())
	return nil
}

// progress reports a completed level to Options.Progress.
func (r *run[S, A]) progress() {
	if r.opts.Progress == nil || r.cur.len() == 0 {
		return
	}
	r.opts.Progress(Progress{
		Depth:      r.depth,
		Frontier:   r.cur.len(),
		Unique:     r.res.Unique,
		Generated:  r.res.Generated,
		Pruned:     r.res.Pruned,
		Violations: len(r.viols),
		Elapsed:    r.opts.Clock().Sub(r.start),
	})
}

// roomFor reports whether n more unique states fit the state budget.
func (r *run[S, A]) roomFor(n int) bool {
	return r.opts.MaxStates == 0 || r.res.Unique+uint64(n) <= uint64(r.opts.MaxStates)
}

// endLevel decides, after a level with size new states was added, whether
// the search stops.
func (r *run[S, A]) endLevel(size int) {
	switch {
	case r.abort.Load():
		r.stop = StopReason(r.abortWhy.Load())
	case r.refused:
		r.stop = StopStateBudget
	case r.opts.StopOnViolation && r.levelViols > 0:
		r.stop = StopViolations
	case r.allViolated():
		r.stop = StopViolations
	case size == 0:
		r.stop = StopCompleted
	}
	r.levelViols = 0
}

func (r *run[S, A]) allViolated() bool {
	if len(r.props) == 0 {
		return false
	}
	for _, n := range r.found {
		if n < r.opts.MaxViolations {
			return false
		}
	}
	return true
}

// step expands the frontier at r.depth into the next level.
func (r *run[S, A]) step() error {
	if r.opts.MaxDepth > 0 && r.depth >= r.opts.MaxDepth {
		r.stop = StopDepthBudget
		return nil
	}
	if r.expired() {
		r.endLevel(-1)
		return nil
	}
	n := r.cur.len()
	parallel := len(r.workers) > 1 && n >= r.minPar
	if parallel && r.local != nil {
		// Consequence prediction plans the whole level in chunks; the
		// candidate buffers are sized later, per round (expandParallel).
		r.cutChunks(0, n, false)
	}
	if r.local != nil {
		if err := r.planLocal(parallel); err != nil {
			return err
		}
		if r.abort.Load() {
			r.endLevel(-1)
			return nil
		}
	}
	r.resetLevel(&r.next)
	for g := range r.index {
		r.index[g].reset()
	}
	r.links = append(r.links, levelLinks{})
	r.presize(n)
	from := 0
	if parallel {
		var err error
		if from, err = r.expandParallel(); err != nil {
			return err
		}
	}
	if from < n && !r.abort.Load() {
		r.expandDirect(from)
	}
	size := r.next.len()
	r.noteFrontier()
	r.growth = float64(size) / float64(n)
	if size > 0 {
		r.res.DepthCounts = append(r.res.DepthCounts, uint64(size))
		r.res.Depth = r.depth + 1
		r.links[r.depth+1].compact()
		r.depth++
		r.cur, r.next = r.next, r.cur
		r.weighPOR()
		r.progress()
	} else {
		r.links = r.links[:len(r.links)-1]
	}
	r.endLevel(size)
	return nil
}

// presize gives the next level and its links room for the number of states
// the last level's growth predicts, so that expansion rarely grows a slice
// (fresh allocations: nothing needs copying, and no copied-from array is
// left as garbage for the collector; at 2PC-10 a level is 8 million
// states).
func (r *run[S, A]) presize(n int) {
	want := int(r.growth*float64(n)*1.125) + 16
	if cap(r.next.fps) < want && cap(r.next.states) < want {
		if r.packer == nil {
			r.next.states = make([]S, 0, want)
		} else {
			r.next.fps = make([]node.Hash, 0, want)
			r.next.off = make([]uint32, 1, want+1)
		}
		if r.por != nil {
			r.next.sleep = make([]uint64, 0, want)
		}
	}
	l := &r.links[r.depth+1]
	l.parent = make([]uint32, 0, want)
	l.ord = make([]uint16, 0, want)
}

// expired reports whether the search must stop now (canceled, out of time,
// or a worker failed), recording why.
func (r *run[S, A]) expired() bool {
	if r.abort.Load() {
		return true
	}
	select {
	case <-r.done:
		r.abortWith(StopCanceled)
		return true
	default:
	}
	if !r.deadline.IsZero() && !r.opts.Clock().Before(r.deadline) {
		r.abortWith(StopTimeBudget)
		return true
	}
	if r.overMemory() {
		r.abortWith(StopMemoryBudget)
		return true
	}
	return false
}

func (r *run[S, A]) abortWith(why StopReason) {
	r.abortWhy.CompareAndSwap(0, uint32(why))
	r.abort.Store(true)
}

// panicError turns a recovered panic into the error Run returns.
func (r *run[S, A]) panicError(p any) error {
	return panicError(p, fmt.Sprintf("expanding depth %d", r.depth))
}

// panicError turns a panic recovered while doing what into an error: a
// panic with an error wrapping ErrInvalidModel or ErrNotDeterministic (a
// model reporting that the system breaks its contract, such as a send
// outside Spec.Messages) is returned as it is, anything else wrapped in ErrModelPanic.
func panicError(p any, what string) error {
	if err, ok := p.(error); ok && (errors.Is(err, ErrInvalidModel) || errors.Is(err, ErrNotDeterministic)) {
		return err
	}
	return fmt.Errorf("%w while %s: %v", ErrModelPanic, what, p)
}

// fail records the first worker failure and stops the other workers.
func (r *run[S, A]) fail(p any) {
	err := r.panicError(p)
	r.failMu.Lock()
	if r.failErr == nil {
		r.failErr = err
	}
	r.failMu.Unlock()
	r.abortWith(StopCanceled)
}

// parallel runs fn(w, t) for every task t in [0, tasks) on the workers, each
// task exactly once, and returns when all workers have exited.
func (r *run[S, A]) parallel(tasks int, fn func(w *worker[S, A], t int)) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	for _, w := range r.workers[:min(len(r.workers), tasks)] {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					r.fail(p)
				}
			}()
			for !r.abort.Load() {
				t := int(next.Add(1) - 1)
				if t >= tasks {
					return
				}
				fn(w, t)
			}
		})
	}
	wg.Wait()
	r.failMu.Lock()
	defer r.failMu.Unlock()
	return r.failErr
}

// cutChunks splits the frontier states [lo, hi) into chunks: several per
// worker, so that uneven states balance out. With sizeCands it also sizes
// their candidate buffers for that range: only a round's range, never a
// whole level's, since the buffers live as long as the run (at 2PC-9,
// sizing them per level made them 71% of the heap).
func (r *run[S, A]) cutChunks(lo, hi int, sizeCands bool) {
	n := hi - lo
	count := min(max(n/checkEvery, 1), 8*len(r.workers))
	for len(r.chunks) < count {
		r.chunks = append(r.chunks, &chunk[S]{})
	}
	r.chunks = r.chunks[:count]
	for i, c := range r.chunks {
		c.reset(lo+n*i/count, lo+n*(i+1)/count, r.groups, len(r.props))
		if !sizeCands {
			continue
		}
		// Size the candidate buffers from the previous level's ratio of
		// candidates to states, so phase A rarely grows a slice.
		// (Fresh allocations: slices.Grow would copy the old capacity.)
		if want := int(r.candRatio * float64(c.hi-c.lo)); want > cap(c.cands) {
			c.cands = make([]cand[S], 0, want)
			for g := range c.groups {
				c.groups[g] = make([]uint32, 0, want/r.groups+want/8)
			}
		}
	}
}

// --- consequence prediction's plan -------------------------------------

// mixNode folds a node index into its local fingerprint, so that equal
// local states of different nodes are different localExplored keys.
func mixNode(h node.Hash, n int) node.Hash {
	x := uint64(n)
	return normFP(node.Hash{Hi: h.Hi ^ splitmix(x), Lo: h.Lo ^ splitmix(x^0x5851f42d4c957f2d)})
}

func splitmix(x uint64) uint64 { return node.Mix64(x + node.Golden64) }

// localKeys appends the localExplored keys of state i: one per node with a
// local action, in the order the nodes first appear in its Actions list.
func (r *run[S, A]) localKeys(w *worker[S, A], i int, out []localKey) []localKey {
	s := r.stateAt(&r.cur, i)
	w.acts = r.m.Actions(s, w.acts[:0])
	w.marks.reset()
	for k := range w.acts {
		a := &w.acts[k]
		if !a.Local {
			continue
		}
		if _, ok := w.marks.get(a.Node); ok {
			continue
		}
		w.marks.put(a.Node, true)
		out = append(out, localKey{node: a.Node, key: mixNode(r.m.LocalFingerprint(s, a.Node), a.Node)})
	}
	return out
}

// planLocal decides for every (frontier state, node with local actions)
// whether the node's local actions are expanded: only where its local state
// enters localExplored (Fig. 8, lines 17 and 20). Above Options.FullDepth
// expandOne also runs the local actions that are not faults where the plan
// says no.
func (r *run[S, A]) planLocal(parallel bool) error {
	p := &r.plan
	p.off, p.nodes, p.allowed = append(p.off[:0], 0), p.nodes[:0], p.allowed[:0]
	admit := func(keys []localKey) {
		for _, k := range keys {
			added, _ := r.local.insert(k.key, true)
			p.nodes = append(p.nodes, k.node)
			p.allowed = append(p.allowed, added)
		}
	}
	if !parallel {
		w := r.workers[0]
		var keys []localKey
		for i := range r.cur.len() {
			if i%checkEvery == 0 && r.expired() {
				return nil
			}
			keys = r.localKeys(w, i, keys[:0])
			admit(keys)
			p.off = append(p.off, uint32(len(p.nodes)))
		}
		return nil
	}
	err := r.parallel(len(r.chunks), func(w *worker[S, A], t int) {
		c := r.chunks[t]
		for i := c.lo; i < c.hi; i++ {
			if (i-c.lo)%checkEvery == 0 && r.expired() {
				return
			}
			before := len(c.lkeys)
			c.lkeys = r.localKeys(w, i, c.lkeys)
			c.lcount = append(c.lcount, uint32(len(c.lkeys)-before))
		}
	})
	if err != nil || r.abort.Load() {
		return err
	}
	for _, c := range r.chunks {
		at := 0
		for _, cnt := range c.lcount {
			admit(c.lkeys[at : at+int(cnt)])
			at += int(cnt)
			p.off = append(p.off, uint32(len(p.nodes)))
		}
	}
	return nil
}

// --- expansion -----------------------------------------------------------

// expandOne expands frontier state i. With c == nil (direct mode) it inserts
// successors into the visited set and the next level at once and reports
// whether the state budget refused one; otherwise it appends candidates to c.
func (r *run[S, A]) expandOne(w *worker[S, A], i int, c *chunk[S]) (refused bool) {
	s := r.stateAt(&r.cur, i)
	pfp := r.fpAt(&r.cur, i)
	w.acts = r.m.Actions(s, w.acts[:0])
	acts := w.acts
	if len(acts) > MaxActions {
		panic(fmt.Errorf("%w: a state at depth %d has %d actions, more than MaxActions (%d)", ErrInvalidModel, r.depth, len(acts), MaxActions))
	}
	var asleep uint64
	if r.por != nil {
		// Keys of actions no longer enabled are dropped here, so that
		// they are never candidates of Commute (keyed sleep sets carry
		// them).
		asleep = r.cur.sleep[i] & r.sleepKeys(w, acts)
	}
	var planAt uint32
	full := r.depth < r.opts.FullDepth
	if r.local != nil {
		planAt = r.plan.off[i]
		w.marks.reset()
	}
	var gen, pruned, slept uint64
	listed := w.listed
	var taken uint64 // the sleep-set bits of the actions taken so far
	moved := false
	mark := len(w.succ) // direct mode: the successors of earlier states wait there
	// A state with many actions is a large state (an action per node at
	// least), and each successor copies its node list: its expansion
	// alone can outgrow the budgets, which are otherwise looked at
	// between states (checkEvery). Such an expansion looks every
	// bigStateCheck successors, and stops where the search is aborted.
	watch := len(acts) > checkEvery
	for k := range acts {
		if watch && k%bigStateCheck == bigStateCheck-1 && r.expired() {
			clear(w.succ[mark:])
			w.succ = w.succ[:mark]
			return false
		}
		a := &acts[k]
		var bit uint64
		if r.por != nil {
			bit = w.bits[k]
		}
		if asleep&bit != 0 {
			slept++
			continue
		}
		if a.Local && r.local != nil && !r.localAllowed(w, i, &planAt, a, full) {
			pruned++
			continue
		}
		succ, ok := r.m.Next(s, a.Act)
		if !ok {
			continue
		}
		gen++
		fp := normFP(r.m.Fingerprint(succ))
		var z uint64
		if fp != pfp && r.por != nil {
			z = r.sleepAfter(w, s, acts, k, asleep|taken, succ)
		}
		taken |= bit
		if fp == pfp {
			continue // stutter
		}
		moved = true
		r.addSucc(w, c, succ, fp, z, i, k)
	}
	// Direct mode inserts the successors of several states at once (the
	// more cache misses overlap, the fewer stalls), but never past a
	// state whose successors might exceed the state budget: the budget
	// can then refuse only the last state's, as if each state's were
	// inserted after its expansion.
	if c == nil && (len(w.succ) >= directBatch || !r.roomFor(len(w.succ))) {
		refused = r.insertDirect(w)
	}
	r.count(c, gen, pruned, slept, w.listed-listed)
	if !moved && pruned == 0 && len(r.live) > 0 && (slept == 0 || !r.sleepersMove(w, s, pfp, acts, asleep)) {
		r.checkLiveness(c, s, pfp, r.depth, i)
	}
	return refused
}

// addSucc keeps successor succ (fingerprint fp, sleep set z) of frontier
// state i by its k-th action: as a candidate of chunk c, or in direct
// mode (c == nil) among the worker's successors waiting to be inserted.
func (r *run[S, A]) addSucc(w *worker[S, A], c *chunk[S], succ S, fp node.Hash, z uint64, i, k int) {
	if c == nil {
		w.succ = append(w.succ, cand[S]{state: succ, fp: fp, sleep: z, parent: uint32(i), ord: uint16(k)})
		return
	}
	c.cands = append(c.cands, r.newCand(c, succ, fp, z, i, k))
	g := r.visited.shard(fp) % r.groups
	c.groups[g] = append(c.groups[g], uint32(len(c.cands)-1))
}

// count adds one state's expansion counts to its chunk's (to the result's
// in direct mode).
func (r *run[S, A]) count(c *chunk[S], gen, pruned, slept, listed uint64) {
	if c != nil {
		c.gen += gen
		c.pruned += pruned
		c.slept += slept
		c.listed += listed
		return
	}
	r.res.Generated += gen
	r.res.Pruned += pruned
	r.res.Slept += slept
	r.listed += listed
}

// localAllowed reports whether consequence prediction's plan lets the local
// action a of frontier state i run (Fig. 8; above Options.FullDepth every
// local action but a fault runs), advancing the plan's cursor at the
// first local action of each node.
func (r *run[S, A]) localAllowed(w *worker[S, A], i int, planAt *uint32, a *Action[A], full bool) bool {
	allowed, ok := w.marks.get(a.Node)
	if !ok {
		if *planAt >= r.plan.off[i+1] || r.plan.nodes[*planAt] != a.Node {
			panic(fmt.Errorf("%w: Actions of a state at depth %d changed between two calls", ErrNondeterministic, r.depth))
		}
		allowed = r.plan.allowed[*planAt]
		*planAt++
		w.marks.put(a.Node, allowed)
	}
	return allowed || (!a.Fault && full)
}

// insertDirect inserts the successors collected in w.succ (of one or more
// frontier states, in global order) into the visited set and the next
// level, and empties w.succ. It first touches every successor's home
// bucket, so that the cache misses overlap instead of coming one after the
// other. It reports whether the state budget refused a new state.
func (r *run[S, A]) insertDirect(w *worker[S, A]) (refused bool) {
	defer func() {
		clear(w.succ) // drop references to states
		w.succ = w.succ[:0]
	}()
	for j := range w.succ {
		w.sink += r.visited.touch(w.succ[j].fp)
		if r.por != nil {
			w.sink += uint64(r.index[r.visited.shard(w.succ[j].fp)%r.groups].touch(w.succ[j].fp))
		}
	}
	for j := range w.succ {
		sc := &w.succ[j]
		added, present := r.visited.insert(sc.fp, r.roomFor(1))
		if !added {
			if !present {
				return true
			}
			if r.por != nil {
				r.mergeSleep(r.visited.shard(sc.fp)%r.groups, sc.fp, 0, false, sc.sleep)
			}
			continue
		}
		r.res.Unique++
		at := r.next.len()
		r.appendEntry(&r.next, sc.state, sc.fp, sc.sleep)
		if r.por != nil {
			r.mergeSleep(r.visited.shard(sc.fp)%r.groups, sc.fp, at, true, sc.sleep)
		}
		l := &r.links[r.depth+1]
		l.parent = append(l.parent, sc.parent)
		l.ord = append(l.ord, sc.ord)
		r.checkSafety(nil, sc.state, sc.fp, r.depth+1, at)
	}
	return false
}

// expandDirect expands the frontier from state from on, in order, on the
// calling goroutine.
func (r *run[S, A]) expandDirect(from int) {
	w := r.workers[0]
	i := from
	if r.opts.onDirect != nil {
		defer func() { r.opts.onDirect(i - from) }()
	}
	defer func() {
		// The states expanded whole before a stop keep their successors.
		if len(w.succ) > 0 && r.insertDirect(w) {
			r.refused = true
		}
	}()
	for ; i < r.cur.len(); i++ {
		if (i-from)%checkEvery == 0 && r.expired() {
			return
		}
		if r.expandOne(w, i, nil) {
			r.refused = true
			return
		}
		if r.abort.Load() { // stopped inside the state's expansion
			return
		}
	}
}

// expandParallel expands the frontier in rounds of at most parallelRound
// states and returns the index of the first state it did not expand:
// len(frontier) when it expanded all, the start of a round that might
// exceed the state budget or that the budget leaves too small to be worth
// a parallel round (the caller expands the rest directly and so stops at
// exactly the state a sequential search would), or the start of the round
// during which the search was aborted (that round is dropped whole).
func (r *run[S, A]) expandParallel() (int, error) {
	n := r.cur.len()
	for lo := 0; lo < n; {
		if lo > 0 && r.expired() {
			return lo, nil
		}
		size := r.roundSize()
		if size == 0 {
			return lo, nil
		}
		hi := min(lo+size, n)
		r.cutChunks(lo, hi, true)
		ok, err := r.expandRound()
		if err != nil || !ok || r.abort.Load() {
			return lo, err
		}
		lo = hi
	}
	return n, nil
}

// roundSize is how many frontier states the next parallel round expands:
// parallelRound, or, when a state budget is near, as many as the budget's
// room is likely to take whole (room over candRatio, which overestimates
// the candidates per state). A round whose candidates might exceed the
// room is refused and left to expandDirect, so without this the level that
// meets the budget — often the largest, a quarter of a 1 M-state search's
// expansions — ran on one core. Rounds shrink with the room; 0 means the
// room is too small for a parallel round (below the parallel threshold).
// The size affects speed only: every round keeps the global order.
func (r *run[S, A]) roundSize() int {
	size := parallelRound
	if r.opts.parallelRound > 0 {
		size = r.opts.parallelRound
	}
	if r.opts.MaxStates == 0 || r.candRatio == 0 {
		return size
	}
	room := float64(uint64(r.opts.MaxStates) - min(r.res.Unique, uint64(r.opts.MaxStates)))
	fit := int(room / r.candRatio)
	if fit < r.minPar {
		return 0
	}
	return min(size, fit)
}

// expandRound expands the chunks' part of the frontier with phases A, B and
// C, appending to the next level. It returns false, having changed
// nothing, when the round might exceed the state budget.
func (r *run[S, A]) expandRound() (bool, error) {
	// Phase A: expand chunks into candidates.
	err := r.parallel(len(r.chunks), func(w *worker[S, A], t int) {
		c := r.chunks[t]
		for i := c.lo; i < c.hi; i++ {
			if (i-c.lo)%checkEvery == 0 && r.expired() {
				return
			}
			r.expandOne(w, i, c)
		}
	})
	if err != nil || r.abort.Load() {
		return true, err // an aborted round is dropped whole
	}
	total, states := 0, 0
	for _, c := range r.chunks {
		total += len(c.cands)
		states += c.hi - c.lo
	}
	r.candRatio = 1.125*float64(total)/float64(states) + 0.5
	if !r.roomFor(total) {
		return false, nil
	}
	// Phase B: each shard group inserts its candidates in global order.
	for _, c := range r.chunks {
		if cap(c.isNew) < len(c.cands) {
			c.isNew = make([]bool, len(c.cands))
		}
		c.isNew = c.isNew[:len(c.cands)]
		clear(c.isNew)
	}
	err = r.parallel(r.groups, func(w *worker[S, A], g int) {
		for _, c := range r.chunks {
			idxs := c.groups[g]
			for len(idxs) > 0 {
				batch := idxs[:min(len(idxs), touchBatch)]
				idxs = idxs[len(batch):]
				for _, idx := range batch {
					w.sink += r.visited.touch(c.cands[idx].fp)
				}
				for _, idx := range batch {
					if added, _ := r.visited.insert(c.cands[idx].fp, true); added {
						c.isNew[idx] = true
						c.newCnt[g]++
					}
				}
			}
		}
	})
	if err != nil {
		return true, err
	}
	size := 0
	for _, c := range r.chunks {
		c.off = size
		for _, n := range c.newCnt {
			size += n
		}
	}
	base := r.next.len()
	if r.packer == nil {
		r.next.states = slices.Grow(r.next.states, size)[:base+size]
	}
	if r.packer != nil {
		r.next.fps = slices.Grow(r.next.fps, size)[:base+size]
	}
	if r.por != nil {
		r.next.sleep = slices.Grow(r.next.sleep, size)[:base+size]
	}
	l := &r.links[r.depth+1]
	l.parent = slices.Grow(l.parent, size)[:base+size]
	l.ord = slices.Grow(l.ord, size)[:base+size]
	// Phase C: place the winners and check them.
	err = r.parallel(len(r.chunks), func(_ *worker[S, A], t int) {
		c := r.chunks[t]
		at := base + c.off
		for idx := range c.cands {
			if !c.isNew[idx] {
				continue
			}
			cd := &c.cands[idx]
			st := cd.state
			if r.packer == nil {
				r.next.states[at] = st
			} else {
				st = r.keepPacked(c, cd)
			}
			if r.packer != nil {
				r.next.fps[at] = cd.fp
			}
			if r.por != nil {
				r.next.sleep[at] = cd.sleep
				cd.at = uint32(at)
			}
			l.parent[at] = cd.parent
			l.ord[at] = cd.ord
			r.checkSafety(c, st, cd.fp, r.depth+1, at)
			at++
		}
	})
	if err != nil {
		return true, err
	}
	r.appendPacked()
	if err := r.mergeRoundSleep(); err != nil {
		return true, err
	}
	r.res.Unique += uint64(size)
	for _, c := range r.chunks {
		r.res.Generated += c.gen
		r.res.Pruned += c.pruned
		r.res.Slept += c.slept
		r.listed += c.listed
		for _, p := range c.viols {
			r.record(p)
		}
	}
	return true, nil
}

// mergeRoundSleep is phase D of a round with partial-order reduction: each
// shard group indexes its winners and intersects the sleep sets of the
// candidates that reached a state of this level again, in global order.
func (r *run[S, A]) mergeRoundSleep() error {
	if r.por == nil {
		return nil
	}
	return r.parallel(r.groups, func(_ *worker[S, A], g int) {
		for _, c := range r.chunks {
			for _, idx := range c.groups[g] {
				cd := &c.cands[idx]
				r.mergeSleep(g, cd.fp, int(cd.at), c.isNew[idx], cd.sleep)
			}
		}
	})
}

// --- properties ----------------------------------------------------------

// checkSafety evaluates the safety properties on a new state. With c == nil
// the violations are recorded at once, otherwise in the chunk (in order, up
// to MaxViolations per property) for the level's merge.
func (r *run[S, A]) checkSafety(c *chunk[S], s S, fp node.Hash, depth, index int) {
	for _, pi := range r.safety {
		r.checkProp(c, pi, s, fp, depth, index)
	}
}

// checkLiveness evaluates the liveness properties on a quiescent state.
func (r *run[S, A]) checkLiveness(c *chunk[S], s S, fp node.Hash, depth, index int) {
	for _, pi := range r.live {
		r.checkProp(c, pi, s, fp, depth, index)
	}
}

func (r *run[S, A]) checkProp(c *chunk[S], pi int, s S, fp node.Hash, depth, index int) {
	// r.found changes only between parallel phases, so reading it here is
	// safe; a property with all its violations recorded need not be checked.
	if r.found[pi] >= r.opts.MaxViolations || (c != nil && c.vcount[pi] >= r.opts.MaxViolations) {
		return
	}
	err := r.props[pi].Check(s)
	if err == nil {
		return
	}
	p := pending[S]{prop: pi, depth: depth, index: index, state: s, fp: fp, err: err}
	if c == nil {
		r.record(p)
		return
	}
	c.vcount[pi]++
	c.viols = append(c.viols, p)
}

// record keeps a violation if its property has fewer than MaxViolations.
func (r *run[S, A]) record(p pending[S]) {
	if r.found[p.prop] >= r.opts.MaxViolations {
		return
	}
	r.found[p.prop]++
	r.levelViols++
	r.viols = append(r.viols, p)
}

// --- result ----------------------------------------------------------------

func (r *run[S, A]) result() (*Result[S, A], error) {
	res := &r.res
	res.Strategy = r.opts.Strategy
	res.Workers = len(r.workers)
	res.Stop = r.stop
	res.VisitedBytes = r.visited.bytes()
	res.PeakMemory = r.peak.Load()
	res.OmissionProbability = r.visited.omissionProbability()
	res.KeyBits = int(r.visited.keyBits())
	res.FrontierBytes = r.frontierPeak
	for i := range r.links {
		res.TraceBytes += r.links[i].bytes()
	}
	if r.local != nil {
		res.LocalBytes = r.local.bytes()
		res.OmissionProbability += r.local.omissionProbability()
	}
	slices.SortStableFunc(r.viols, func(a, b pending[S]) int {
		return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.index, b.index), cmp.Compare(a.prop, b.prop))
	})
	for _, p := range r.viols {
		v, err := r.rebuild(p)
		if err != nil {
			return nil, err
		}
		res.Violations = append(res.Violations, v)
	}
	if r.opts.Periphery > 0 {
		ps, err := r.periphery()
		if err != nil {
			return nil, err
		}
		res.Periphery = ps
	}
	res.Elapsed = r.opts.Clock().Sub(r.start)
	if r.stop == StopCanceled && r.ctx.Err() != nil {
		return res, fmt.Errorf("consequence: search canceled at depth %d: %w", r.depth, r.ctx.Err())
	}
	return res, nil
}

// rebuild reconstructs a violation's path from the parent links.
func (r *run[S, A]) rebuild(p pending[S]) (Violation[S, A], error) {
	v := Violation[S, A]{
		Property:    r.props[p.prop].Name,
		Kind:        r.props[p.prop].Kind,
		Err:         p.err,
		Depth:       p.depth,
		State:       r.detach(p.state),
		Fingerprint: p.fp,
	}
	ps, err := r.pathTo(p.depth, p.index, p.fp)
	if err != nil {
		return v, fmt.Errorf("replaying %q: %w", v.Property, err)
	}
	v.Start, v.Path = ps.Start, ps.Path
	return v, nil
}

// periphery samples up to Options.Periphery states of the current (deepest)
// level evenly and rebuilds their paths.
func (r *run[S, A]) periphery() ([]PathState[S, A], error) {
	n := r.cur.len()
	k := min(r.opts.Periphery, n)
	out := make([]PathState[S, A], 0, k)
	for j := range k {
		i := j * n / k
		ps, err := r.pathTo(r.depth, i, r.fpAt(&r.cur, i))
		if err != nil {
			return nil, fmt.Errorf("periphery state %d: %w", j, err)
		}
		out = append(out, ps)
	}
	return out, nil
}

// pathTo reconstructs the path to state index of level depth from the
// parent links by replaying the recorded action positions from its start
// state, and checks that it ends at fingerprint fp.
func (r *run[S, A]) pathTo(depth, index int, fp node.Hash) (PathState[S, A], error) {
	ords := make([]uint16, depth)
	i := index
	for d := depth; d > 0; d-- {
		parent, ord := r.links[d].at(i)
		ords[d-1] = ord
		i = int(parent)
	}
	first, _ := r.links[0].at(i)
	start := r.starts[first]
	ps := PathState[S, A]{Start: start, Path: make([]Action[A], depth)}
	s := start
	var acts []Action[A]
	for d, o := range ords {
		acts = r.m.Actions(s, acts[:0])
		if int(o) >= len(acts) {
			return ps, fmt.Errorf("%w: step %d has %d actions, the search took number %d", ErrNondeterministic, d+1, len(acts), o)
		}
		a := acts[o]
		next, ok := r.m.Next(s, a.Act)
		if !ok {
			return ps, fmt.Errorf("%w: step %d (%v) is disabled", ErrNondeterministic, d+1, a.Act)
		}
		ps.Path[d] = a
		s = next
	}
	if got := normFP(r.m.Fingerprint(s)); got != fp {
		return ps, fmt.Errorf("%w: the path reached fingerprint %v, the search had %v", ErrNondeterministic, got, fp)
	}
	ps.State = s
	return ps, nil
}

// --- small helpers -------------------------------------------------------

// nodeMarks maps the nodes seen in one state to a flag: a slice for the
// common few nodes, a map beyond that.
type nodeMarks struct {
	last  int
	lastV bool
	has   bool
	nodes []int
	vals  []bool
	big   map[int]bool
}

const nodeMarksSmall = 32

func (m *nodeMarks) reset() {
	m.has = false
	m.nodes, m.vals = m.nodes[:0], m.vals[:0]
	if m.big != nil {
		clear(m.big)
	}
}

func (m *nodeMarks) get(n int) (v, ok bool) {
	if m.has && m.last == n {
		return m.lastV, true
	}
	if len(m.nodes) >= nodeMarksSmall {
		v, ok = m.big[n]
	} else {
		for i, x := range m.nodes {
			if x == n {
				v, ok = m.vals[i], true
				break
			}
		}
	}
	if ok {
		m.last, m.lastV, m.has = n, v, true
	}
	return v, ok
}

func (m *nodeMarks) put(n int, v bool) {
	m.last, m.lastV, m.has = n, v, true
	if len(m.nodes) < nodeMarksSmall {
		m.nodes = append(m.nodes, n)
		m.vals = append(m.vals, v)
		if len(m.nodes) < nodeMarksSmall {
			return
		}
		if m.big == nil {
			m.big = make(map[int]bool)
		}
		for i, x := range m.nodes {
			m.big[x] = m.vals[i]
		}
		return
	}
	m.big[n] = v
}
