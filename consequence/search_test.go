package consequence_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// configs are the ways the engine can run a search; all must give the
// reference's results.
var configs = []struct {
	name        string
	workers     int
	minParallel int
	round       int // parallel round size; 0: the default
}{
	{"workers=1", 1, 0, 0},
	{"workers=2", 2, 0, 0},
	{"workers=4/parallel-always", 4, 1, 0},
	{"workers=3/parallel-always", 3, 1, 0},
	{"workers=2/parallel-always/rounds-of-97", 2, 1, 97},
}

// tune applies a config's test-only knobs to c.
func tune[S, A any](c *consequence.Checker[S, A], minParallel, round int) *consequence.Checker[S, A] {
	if minParallel > 0 {
		consequence.SetMinParallel(c, minParallel)
	}
	if round > 0 {
		consequence.SetParallelRound(c, round)
	}
	return c
}

func runGraph(t *testing.T, g *graph, o consequence.Options, workers, minParallel, round int) *consequence.Result[uint64, gAct] {
	t.Helper()
	o.Workers = workers
	c := consequence.NewChecker(g).Properties(graphProps()...).WithOptions(o)
	tune(c, minParallel, round)
	res, err := c.Run(context.Background())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func compare[A comparable](t *testing.T, want refResult[A], got *consequence.Result[uint64, A]) {
	t.Helper()
	if got.Unique != want.unique || got.Generated != want.generated || got.Pruned != want.pruned || got.Stop != want.stop {
		t.Fatalf("unique/generated/pruned/stop = %d/%d/%d/%v, reference %d/%d/%d/%v",
			got.Unique, got.Generated, got.Pruned, got.Stop, want.unique, want.generated, want.pruned, want.stop)
	}
	if !slices.Equal(got.DepthCounts, want.depthCounts) {
		t.Fatalf("depth counts %v, reference %v", got.DepthCounts, want.depthCounts)
	}
	if got.Depth != len(want.depthCounts)-1 {
		t.Fatalf("depth %d, reference %d", got.Depth, len(want.depthCounts)-1)
	}
	if len(got.Violations) != len(want.violations) {
		t.Fatalf("%d violations, reference %d", len(got.Violations), len(want.violations))
	}
	for i, v := range got.Violations {
		w := want.violations[i]
		acts := make([]A, len(v.Path))
		for j, a := range v.Path {
			acts[j] = a.Act
		}
		if v.Property != w.prop || v.Depth != w.depth || v.Fingerprint != w.fp || !slices.Equal(acts, w.path) {
			t.Fatalf("violation %d: %s at depth %d fp %v path %v; reference %s at depth %d fp %v path %v",
				i, v.Property, v.Depth, v.Fingerprint, acts, w.prop, w.depth, w.fp, w.path)
		}
	}
}

// TestMatchesReference checks the engine against the plain sequential
// implementation of Fig. 5 and Fig. 8 on pseudo-random graphs, with every
// worker configuration, with and without budgets.
func TestMatchesReference(t *testing.T) {
	graphs := []*graph{
		{seed: 1, size: 5000, nodes: 3, fanout: 6},
		{seed: 2, size: 20000, nodes: 5, fanout: 4},
		{seed: 3, size: 300, nodes: 2, fanout: 3},
	}
	options := []consequence.Options{
		{},
		{Strategy: consequence.Consequence},
		{MaxViolations: 4},
		{MaxViolations: 1000, Strategy: consequence.Consequence},
		{MaxStates: 1},
		{MaxStates: 2},
		{MaxStates: 777},
		{MaxStates: 3001, Strategy: consequence.Consequence},
		{Strategy: consequence.Consequence, FullDepth: 2},
		{MaxStates: 3001, Strategy: consequence.Consequence, FullDepth: 3},
		{MaxDepth: 3},
		{MaxDepth: 1, MaxStates: 5},
		{StopOnViolation: true},
	}
	for _, g := range graphs {
		for _, o := range options {
			want := reference[uint64, gAct](g, graphProps(), o)
			for _, cfg := range configs {
				name := fmt.Sprintf("seed=%d/%s/full=%d/states=%d/depth=%d/viol=%d/stop=%v/%s",
					g.seed, o.Strategy, o.FullDepth, o.MaxStates, o.MaxDepth, o.MaxViolations, o.StopOnViolation, cfg.name)
				t.Run(name, func(t *testing.T) {
					compare(t, want, runGraph(t, g, o, cfg.workers, cfg.minParallel, cfg.round))
				})
			}
		}
	}
}

// TestReferenceSanity pins a few numbers of the reference itself on the
// first graph, so that engine and reference cannot drift together.
func TestReferenceSanity(t *testing.T) {
	g := &graph{seed: 1, size: 5000, nodes: 3, fanout: 6}
	bfs := reference[uint64, gAct](g, nil, consequence.Options{})
	cp := reference[uint64, gAct](g, nil, consequence.Options{Strategy: consequence.Consequence})
	if bfs.stop != consequence.StopCompleted || cp.stop != consequence.StopCompleted {
		t.Fatalf("stops %v %v", bfs.stop, cp.stop)
	}
	if cp.unique >= bfs.unique || cp.pruned == 0 {
		t.Fatalf("consequence prediction found %d states (pruned %d), BFS %d: want fewer", cp.unique, cp.pruned, bfs.unique)
	}
	t.Logf("bfs: %d unique, %d generated, depths %v; consequence: %d unique, %d pruned, depths %v",
		bfs.unique, bfs.generated, bfs.depthCounts, cp.unique, cp.pruned, cp.depthCounts)
}

// TestConsequencePruning works Fig. 8 by hand on two independent counters
// (node i increments c_i up to 2 with a local action). BFS finds all 9
// states; consequence prediction expands node 0 at (0,0), (1,0), (2,0) only
// where its local state is new, and likewise node 1, so it finds (0,0);
// (1,0), (0,1); (2,0), (0,2) and prunes one local action of each state at
// depths 1 and 2.
func TestConsequencePruning(t *testing.T) {
	m := counters{nodes: 2, max: 2}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			c := consequence.NewChecker(m).Workers(cfg.workers)
			tune(c, cfg.minParallel, cfg.round)
			bfs, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if bfs.Unique != 9 || !slices.Equal(bfs.DepthCounts, []uint64{1, 2, 3, 2, 1}) || bfs.Generated != 13 || bfs.Pruned != 0 {
				t.Fatalf("bfs: unique %d, depths %v, generated %d, pruned %d", bfs.Unique, bfs.DepthCounts, bfs.Generated, bfs.Pruned)
			}
			cp, err := c.Strategy(consequence.Consequence).Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if cp.Unique != 5 || !slices.Equal(cp.DepthCounts, []uint64{1, 2, 2}) || cp.Generated != 5 || cp.Pruned != 4 || !cp.Completed() {
				t.Fatalf("consequence: unique %d, depths %v, generated %d, pruned %d, stop %v", cp.Unique, cp.DepthCounts, cp.Generated, cp.Pruned, cp.Stop)
			}
		})
	}
}

// TestViolationPathReplays checks that every reported path replays, with
// Replay, to the reported state, and that the state violates the property.
func TestViolationPathReplays(t *testing.T) {
	g := &graph{seed: 2, size: 20000, nodes: 5, fanout: 4}
	res := runGraph(t, g, consequence.Options{MaxViolations: 50}, 2, 1, 0)
	if len(res.Violations) < 50 {
		t.Fatalf("only %d violations", len(res.Violations))
	}
	props := map[string]consequence.Property[uint64]{}
	for _, p := range graphProps() {
		props[p.Name] = p
	}
	kinds := map[node.PropertyKind]int{}
	for _, v := range res.Violations {
		s, err := consequence.Replay[uint64, gAct](g, v.Start, v.Path)
		if err != nil {
			t.Fatal(err)
		}
		if s != v.State || g.Fingerprint(s) != v.Fingerprint || len(v.Path) != v.Depth {
			t.Fatalf("%s: replay reached %d, violation says %d (depth %d, path %d)", v.Property, s, v.State, v.Depth, len(v.Path))
		}
		if err := props[v.Property].Check(s); err == nil || err.Error() != v.Err.Error() {
			t.Fatalf("%s: check on replayed state = %v, violation says %v", v.Property, err, v.Err)
		}
		kinds[v.Kind]++
	}
	if kinds[node.Safety] == 0 || kinds[node.Liveness] == 0 {
		t.Fatalf("violations by kind %v: want both", kinds)
	}
	if _, err := consequence.Replay[uint64, gAct](g, 0, []consequence.Action[gAct]{{Act: gAct{To: 16}}}); !errors.Is(err, consequence.ErrReplay) {
		t.Fatalf("replaying a disabled action: %v", err)
	}
}

func TestOptionsValidation(t *testing.T) {
	g := &graph{seed: 1, size: 10, nodes: 1, fanout: 2}
	ok := consequence.Always("p", func(uint64) error { return nil })
	cases := []struct {
		name     string
		c        *consequence.Checker[uint64, gAct]
		sentinel error
	}{
		{"negative states", consequence.NewChecker(g).MaxStates(-1), consequence.ErrInvalidOptions},
		{"negative depth", consequence.NewChecker(g).MaxDepth(-1), consequence.ErrInvalidOptions},
		{"negative time", consequence.NewChecker(g).MaxTime(-time.Second), consequence.ErrInvalidOptions},
		{"negative workers", consequence.NewChecker(g).Workers(-2), consequence.ErrInvalidOptions},
		{"negative violations", consequence.NewChecker(g).MaxViolations(-1), consequence.ErrInvalidOptions},
		{"strategy", consequence.NewChecker(g).Strategy(9), consequence.ErrInvalidOptions},
		{"unnamed", consequence.NewChecker(g).Properties(consequence.Always("", ok.Check)), consequence.ErrInvalidOptions},
		{"no check", consequence.NewChecker(g).Properties(consequence.Always[uint64]("x", nil)), consequence.ErrInvalidOptions},
		{"bad kind", consequence.NewChecker(g).Properties(consequence.Property[uint64]{Name: "x", Check: ok.Check}), consequence.ErrInvalidOptions},
		{"duplicate", consequence.NewChecker(g).Properties(ok, ok), consequence.ErrInvalidOptions},
		{"nil model", consequence.NewChecker[uint64, gAct](nil), consequence.ErrInvalidModel},
		{"no init", consequence.NewChecker(noInit{g}), consequence.ErrInvalidModel},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tc.c.Run(context.Background())
			if !errors.Is(err, tc.sentinel) || res != nil || !strings.HasPrefix(err.Error(), "consequence: ") {
				t.Fatalf("Run = %v, %v; want %v", res, err, tc.sentinel)
			}
		})
	}
	if s, err := consequence.ParseStrategy("consequence"); err != nil || s != consequence.Consequence || s.String() != "consequence" {
		t.Fatalf("ParseStrategy: %v %v", s, err)
	}
	if _, err := consequence.ParseStrategy("dfs"); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Fatalf("ParseStrategy(dfs): %v", err)
	}
}

type noInit struct{ *graph }

func (noInit) Init() []uint64 { return nil }

// TestDepthBudget: states at MaxDepth are generated and checked, not
// expanded.
func TestDepthBudget(t *testing.T) {
	m := counters{nodes: 2, max: 2}
	res, err := consequence.NewChecker(m).MaxDepth(2).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != consequence.StopDepthBudget || !slices.Equal(res.DepthCounts, []uint64{1, 2, 3}) || res.Depth != 2 || res.Unique != 6 {
		t.Fatalf("stop %v, depths %v, depth %d, unique %d", res.Stop, res.DepthCounts, res.Depth, res.Unique)
	}
}

// fakeClock advances by step on every reading.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

// TestTimeBudget uses an injected clock: the search reads it once at the
// start, at every level and every 256 states, and stops when MaxTime has
// passed.
func TestTimeBudget(t *testing.T) {
	g := &graph{seed: 1, size: 5000, nodes: 3, fanout: 6}
	full := runGraph(t, g, consequence.Options{}, 1, 0, 0)
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(1000, 0), step: time.Second}
			c := consequence.NewChecker(g).Workers(cfg.workers).Clock(clk.Now).MaxTime(4 * time.Second)
			tune(c, cfg.minParallel, cfg.round)
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != consequence.StopTimeBudget || res.Unique == 0 || res.Unique >= full.Unique {
				t.Fatalf("stop %v with %d of %d states", res.Stop, res.Unique, full.Unique)
			}
			if res.Elapsed < 4*time.Second {
				t.Fatalf("elapsed %v on the fake clock", res.Elapsed)
			}
			var sum uint64
			for _, n := range res.DepthCounts {
				sum += n
			}
			if sum != res.Unique {
				t.Fatalf("depth counts %v sum to %d, unique %d", res.DepthCounts, sum, res.Unique)
			}
		})
	}
}

// TestTimeBudgetKeepsFinishedRounds: a parallel level is expanded in rounds,
// and a time budget that runs out part-way through a level keeps the rounds
// already done: the result is always a prefix of the full search in BFS
// order, and for some budgets it ends inside a level rather than at its
// boundary.
func TestTimeBudgetKeepsFinishedRounds(t *testing.T) {
	g := &graph{seed: 2, size: 20000, nodes: 5, fanout: 4}
	full, err := consequence.NewChecker(g).Workers(1).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	partial := 0
	for budget := 3; budget <= 40; budget++ {
		clk := &fakeClock{now: time.Unix(1000, 0), step: time.Second}
		c := consequence.NewChecker(g).Workers(2).Clock(clk.Now).MaxTime(time.Duration(budget) * time.Second)
		res, err := tune(c, 1, 97).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		last := len(res.DepthCounts) - 1
		if !slices.Equal(res.DepthCounts[:last], full.DepthCounts[:last]) || res.DepthCounts[last] > full.DepthCounts[last] {
			t.Fatalf("budget %ds: depth counts %v are not a prefix of %v", budget, res.DepthCounts, full.DepthCounts)
		}
		if res.DepthCounts[last] < full.DepthCounts[last] {
			partial++
		}
	}
	if partial == 0 {
		t.Fatalf("no budget ended inside a level; full depth counts %v", full.DepthCounts)
	}
}

func TestCancel(t *testing.T) {
	g := &graph{seed: 2, size: 20000, nodes: 5, fanout: 4}
	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := consequence.NewChecker(g).Run(ctx)
		if !errors.Is(err, context.Canceled) || res == nil || res.Stop != consequence.StopCanceled || res.Unique != 2 {
			t.Fatalf("Run = %+v, %v", res, err)
		}
	})
	for _, cfg := range configs {
		t.Run("during/"+cfg.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			h := &hooked[uint64, gAct]{Model: g}
			h.hook = func(call int64, _ uint64) {
				if call == 3000 {
					cancel()
				}
			}
			c := consequence.NewChecker(h).Workers(cfg.workers)
			tune(c, cfg.minParallel, cfg.round)
			res, err := c.Run(ctx)
			if !errors.Is(err, context.Canceled) || res == nil || res.Stop != consequence.StopCanceled {
				t.Fatalf("Run = %v, %v", res, err)
			}
			if res.Unique == 0 || res.Unique >= 10000 {
				t.Fatalf("canceled after %d states", res.Unique)
			}
		})
	}
}

// TestModelPanic: a panic in the model, on any worker, becomes an error and
// every worker exits (goleak checks the latter for the whole package).
func TestModelPanic(t *testing.T) {
	g := &graph{seed: 2, size: 20000, nodes: 5, fanout: 4}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			h := &hooked[uint64, gAct]{Model: g}
			h.hook = func(call int64, _ uint64) {
				if call == 5000 {
					panic("boom")
				}
			}
			c := consequence.NewChecker(h).Workers(cfg.workers)
			tune(c, cfg.minParallel, cfg.round)
			res, err := c.Run(context.Background())
			if !errors.Is(err, consequence.ErrModelPanic) || res != nil || !strings.Contains(err.Error(), "boom") {
				t.Fatalf("Run = %v, %v", res, err)
			}
		})
	}
	t.Run("property", func(t *testing.T) {
		p := consequence.Always("explodes", func(s uint64) error {
			if s == 4242 {
				panic("property boom")
			}
			return nil
		})
		_, err := consequence.NewChecker(g).Properties(p).Workers(2).Run(context.Background())
		if !errors.Is(err, consequence.ErrModelPanic) {
			t.Fatalf("Run: %v", err)
		}
	})
}

// TestNondeterministicModel: a model whose action order changes between
// the search and the replay of a path is reported, not trusted.
func TestNondeterministicModel(t *testing.T) {
	g := &graph{seed: 2, size: 20000, nodes: 5, fanout: 4}
	var flip atomic.Bool
	h := &hooked[uint64, gAct]{Model: g}
	h.actions = func(_ int64, acts []consequence.Action[gAct]) []consequence.Action[gAct] {
		if flip.Load() {
			slices.Reverse(acts)
		}
		return acts
	}
	p := consequence.Always("not97", func(s uint64) error {
		if s != 0 && s%97 == 0 {
			flip.Store(true) // from now on, Actions lists in reverse
			return errors.New("divisible by 97")
		}
		return nil
	})
	_, err := consequence.NewChecker(h).Properties(p).Workers(1).Run(context.Background())
	if !errors.Is(err, consequence.ErrNondeterministic) {
		t.Fatalf("Run: %v", err)
	}
}

// TestStopRules: MaxViolations and StopOnViolation.
func TestStopRules(t *testing.T) {
	m := counters{nodes: 3, max: 3}
	odd := consequence.Always("odd-sum", func(s uint64) error {
		if (s&0xff+s>>8&0xff+s>>16&0xff)%2 == 1 {
			return errors.New("odd")
		}
		return nil
	})
	res, err := consequence.NewChecker(m).Properties(odd).MaxViolations(4).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Depth 1 has 3 odd states, depth 2 has 6 even ones, depth 3 has 10 odd
	// ones: the fourth violation is found at depth 3, where the search stops.
	if len(res.Violations) != 4 || res.Stop != consequence.StopViolations || res.Depth != 3 {
		t.Fatalf("%d violations, stop %v at depth %d", len(res.Violations), res.Stop, res.Depth)
	}
	for i, want := range []int{1, 1, 1, 3} {
		if res.Violations[i].Depth != want {
			t.Fatalf("violation %d at depth %d, want %d", i, res.Violations[i].Depth, want)
		}
	}
	res, err = consequence.NewChecker(m).Properties(odd, consequence.Always("never", func(uint64) error { return nil })).
		StopOnViolation(true).MaxViolations(2).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 2 || res.Stop != consequence.StopViolations || res.Depth != 1 {
		t.Fatalf("%d violations, stop %v at depth %d", len(res.Violations), res.Stop, res.Depth)
	}
	if v, ok := res.Violated("odd-sum"); !ok || v.Depth != 1 || v.Kind != node.Safety {
		t.Fatalf("Violated: %+v %v", v, ok)
	}
}

// TestLivenessOnQuiescentStates: counters stop at max, so the state with
// every counter at max is the only quiescent one, and a liveness property
// failing there is reported with its path; one that holds there is not.
func TestLivenessOnQuiescentStates(t *testing.T) {
	m := counters{nodes: 2, max: 2}
	props := []consequence.Property[uint64]{
		consequence.Eventually("never-done", func(s uint64) error {
			if s == 0x0202 {
				return errors.New("stuck at the end")
			}
			return nil
		}),
		consequence.Eventually("done", func(s uint64) error {
			if s != 0x0202 {
				return errors.New("not done")
			}
			return nil
		}),
	}
	res, err := consequence.NewChecker(m).Properties(props...).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 1 || res.Stop != consequence.StopCompleted {
		t.Fatalf("violations %+v, stop %v", res.Violations, res.Stop)
	}
	v := res.Violations[0]
	if v.Property != "never-done" || v.Kind != node.Liveness || v.Depth != 4 || v.State != 0x0202 {
		t.Fatalf("violation %+v", v)
	}
	if got := fmt.Sprint(v.Path[0].Act, v.Path[1].Act, v.Path[2].Act, v.Path[3].Act); got != "{0} {0} {1} {1}" {
		t.Fatalf("path %s", got)
	}
}

// zeroFP has a state whose fingerprint is the reserved {0, 0}.
type zeroFP struct{ counters }

func (z zeroFP) Fingerprint(s uint64) node.Hash {
	if s == 0x0101 {
		return node.Hash{}
	}
	return z.counters.Fingerprint(s)
}

func TestZeroFingerprint(t *testing.T) {
	res, err := consequence.NewChecker(zeroFP{counters{nodes: 2, max: 2}}).Run(context.Background())
	if err != nil || res.Unique != 9 {
		t.Fatalf("Run: %v unique, %v", res.Unique, err)
	}
}

// TestMemoryReport checks the memory figures: 64-byte buckets of 8-byte
// keys, at most 7/8 full, so between 8/0.875 and 64 bytes per state (shard
// headers included) once the tables are large; parent links of 4 bytes a
// state when a level's parent and action positions fit one word, else 6.
func TestMemoryReport(t *testing.T) {
	g := &graph{seed: 2, size: 20000, nodes: 5, fanout: 4}
	res, err := consequence.NewChecker(g).Workers(1).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Unique < 10000 {
		t.Fatalf("only %d states", res.Unique)
	}
	if res.VisitedBytes%64 != 0 || res.BytesPerState() < 8/0.875 || res.BytesPerState() > 64 ||
		res.TraceBytes < 4*res.Unique || res.TraceBytes > 6*res.Unique {
		t.Fatalf("visited %d B for %d states (%.1f B/state), trace %d B", res.VisitedBytes, res.Unique, res.BytesPerState(), res.TraceBytes)
	}
	if res.StatesPerSecond() <= 0 || res.Workers != 1 || res.Strategy != consequence.BFS {
		t.Fatalf("result %+v", res)
	}
}

// wide has a start state with more actions than MaxActions.
type wide struct{ counters }

func (w wide) Actions(s uint64, out []consequence.Action[cAct]) []consequence.Action[cAct] {
	for range consequence.MaxActions + 1 {
		out = append(out, consequence.Action[cAct]{Act: cAct{Node: 0}})
	}
	return out
}

func TestTooManyActions(t *testing.T) {
	for _, cfg := range configs {
		c := consequence.NewChecker(wide{counters{nodes: 1, max: 1}}).Workers(cfg.workers)
		tune(c, cfg.minParallel, cfg.round)
		if _, err := c.Run(context.Background()); !errors.Is(err, consequence.ErrInvalidModel) {
			t.Fatalf("%s: Run: %v", cfg.name, err)
		}
	}
}

// TestConcurrentRuns: one configured checker runs several searches at once
// (Run does not modify it), with the same results.
func TestConcurrentRuns(t *testing.T) {
	g := &graph{seed: 1, size: 5000, nodes: 3, fanout: 6}
	c := consequence.SetMinParallel(consequence.NewChecker(g).Properties(graphProps()...).MaxViolations(5).Workers(2), 1)
	var wg sync.WaitGroup
	results := make([]*consequence.Result[uint64, gAct], 4)
	for i := range results {
		wg.Go(func() {
			res, err := c.Run(context.Background())
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	for _, r := range results[1:] {
		if r.Unique != results[0].Unique || fmt.Sprint(r.Violations) != fmt.Sprint(results[0].Violations) {
			t.Fatalf("runs differ: %d %v vs %d %v", r.Unique, r.Violations, results[0].Unique, results[0].Violations)
		}
	}
}

// TestProgress: the hook sees every completed level, in order, on the
// calling goroutine.
func TestProgress(t *testing.T) {
	var got []string
	clk := &fakeClock{now: time.Unix(0, 0), step: time.Millisecond}
	res, err := consequence.NewChecker(counters{nodes: 2, max: 2}).Clock(clk.Now).
		Progress(func(p consequence.Progress) {
			got = append(got, fmt.Sprintf("d%d f%d u%d g%d %v", p.Depth, p.Frontier, p.Unique, p.Generated, p.Elapsed))
		}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"d0 f1 u1 g1 1ms", "d1 f2 u3 g3 2ms", "d2 f3 u6 g7 3ms", "d3 f2 u8 g11 4ms", "d4 f1 u9 g13 5ms"}
	if !slices.Equal(got, want) || res.Elapsed != 6*time.Millisecond {
		t.Fatalf("progress %q, elapsed %v; want %q", got, res.Elapsed, want)
	}
}
