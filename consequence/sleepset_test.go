package consequence_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// product is a system of k components, each with a local state 0..7 held
// in 3 bits of the state, and two kinds of actions: local actions of one
// component (up to three labels per local state, pseudo-random by seed)
// and coupled actions that read component c and write component c+1. An
// action touches the components it reads or writes; two actions commute
// exactly when they touch disjoint components, so Commute is exact and the
// search with sleep sets can be compared with the reference, which takes
// every transition.
type product struct {
	seed uint64
	k    int
}

type pAct struct {
	From, To int8 // To == From for a local action
	Label    uint8
}

func (p *product) local(s uint64, c int) uint64 { return s >> (3 * c) & 7 }

func (p *product) with(s uint64, c int, v uint64) uint64 {
	return s&^(7<<(3*c)) | v<<(3*c)
}

func (p *product) h(parts ...uint64) uint64 {
	x := p.seed
	for _, v := range parts {
		x = mix64(x ^ v)
	}
	return x
}

func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (p *product) Init() []uint64 { return []uint64{0} }

func (p *product) Actions(s uint64, out []consequence.Action[pAct]) []consequence.Action[pAct] {
	for c := range p.k {
		for l := range uint8(3) {
			if p.h(1, uint64(c), p.local(s, c), uint64(l))%3 != 0 {
				out = append(out, consequence.Action[pAct]{Node: c, Act: pAct{From: int8(c), To: int8(c), Label: l}})
			}
		}
	}
	for c := 0; c+1 < p.k; c++ {
		if p.h(2, uint64(c), p.local(s, c))%4 == 0 {
			out = append(out, consequence.Action[pAct]{Node: c + 1, Act: pAct{From: int8(c), To: int8(c + 1)}})
		}
	}
	return out
}

func (p *product) Next(s uint64, a pAct) (uint64, bool) {
	from, to := int(a.From), int(a.To)
	if from == to {
		return p.with(s, to, p.h(3, uint64(to), p.local(s, to), uint64(a.Label))%8), true
	}
	return p.with(s, to, p.h(4, uint64(to), p.local(s, from), p.local(s, to))%8), true
}

func (p *product) Fingerprint(s uint64) node.Hash { return node.Hash{Hi: mix64(s), Lo: s} }

func (p *product) LocalFingerprint(s uint64, n int) node.Hash {
	return node.Hash{Hi: mix64(p.local(s, n)), Lo: uint64(n)}
}

func (p *product) Commute(_ uint64, x, y consequence.Action[pAct]) bool {
	a, b := x.Act, y.Act
	return a.From != b.From && a.From != b.To && a.To != b.From && a.To != b.To
}

func (p *product) SameAction(x, y consequence.Action[pAct]) bool { return x.Act == y.Act }

// productProps are global properties: they look at every component, so a
// violating state can lie between two commuting steps.
func productProps(k int) []consequence.Property[uint64] {
	return []consequence.Property[uint64]{
		consequence.Always("SumNot13", func(s uint64) error {
			sum := uint64(0)
			for c := range k {
				sum += s >> (3 * c) & 7
			}
			if sum == 13 {
				return fmt.Errorf("sum is 13")
			}
			return nil
		}),
		consequence.Always("NoTwoSevens", func(s uint64) error {
			n := 0
			for c := range k {
				if s>>(3*c)&7 == 7 {
					n++
				}
			}
			if n >= 2 {
				return fmt.Errorf("%d components at 7", n)
			}
			return nil
		}),
	}
}

// TestSleepSetsVisitEveryState checks partial-order reduction against the
// reference without it: the same unique states and depth counts, the same
// properties violated at the same depths by the same states (with a
// violation budget large enough to record them all), fewer transitions,
// for every worker configuration. The largest product is seed 3's of 5
// components: 7,056 reachable states (seed 2's has 28,672 and cost four
// times as much), whose widest levels (up to 1,232 states) are still
// expanded in parallel with the default threshold.
func TestSleepSetsVisitEveryState(t *testing.T) {
	for _, p := range []*product{{seed: 1, k: 4}, {seed: 3, k: 5}, {seed: 3, k: 3}} {
		props := productProps(p.k)
		want := reference[uint64, pAct](p, props, consequence.Options{MaxViolations: 1 << 20})
		for _, cfg := range configs {
			t.Run(fmt.Sprintf("seed=%d/k=%d/%s", p.seed, p.k, cfg.name), func(t *testing.T) {
				c := consequence.NewChecker(p).Properties(props...).
					WithOptions(consequence.Options{Workers: cfg.workers, MaxViolations: 1 << 20})
				res, err := tune(c, cfg.minParallel, cfg.round).Run(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if res.Unique != want.unique || !slices.Equal(res.DepthCounts, want.depthCounts) {
					t.Fatalf("unique %d depths %v, reference %d %v", res.Unique, res.DepthCounts, want.unique, want.depthCounts)
				}
				if res.Slept == 0 || res.Generated >= want.generated {
					t.Fatalf("generated %d (slept %d), reference %d: no reduction", res.Generated, res.Slept, want.generated)
				}
				if got, ref := violationSet(res.Violations), refViolationSet(want.violations); !slices.Equal(got, ref) {
					t.Fatalf("violations %v, reference %v", got, ref)
				}
			})
		}
	}
}

func violationSet(vs []consequence.Violation[uint64, pAct]) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s@%d:%v", v.Property, v.Depth, v.Fingerprint))
	}
	slices.Sort(out)
	return out
}

func refViolationSet(vs []refViolation[pAct]) []string {
	var out []string
	for _, v := range vs {
		out = append(out, fmt.Sprintf("%s@%d:%v", v.prop, v.depth, v.fp))
	}
	slices.Sort(out)
	return out
}

// TestSleepSetsPinned pins the reduction on one product: the counts a
// change to the engine's sleep sets must explain.
func TestSleepSetsPinned(t *testing.T) {
	p := &product{seed: 2, k: 5}
	want := map[bool]string{
		false: "unique=1167 generated=4838 slept=0 depth=4",
		true:  "unique=1167 generated=2227 slept=2611 depth=4",
	}
	for _, por := range []bool{false, true} {
		res, err := consequence.NewChecker(p).Properties(productProps(p.k)...).DisablePOR(!por).Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("unique=%d generated=%d slept=%d depth=%d", res.Unique, res.Generated, res.Slept, res.Depth)
		if got != want[por] {
			t.Errorf("por=%v: %s, want %s", por, got, want[por])
		}
	}
}

// TestMemoryBudget: a budget below what any process holds stops the search
// at once with StopMemoryBudget and reports the memory seen; a large one
// changes nothing (all 7,056 states of seed 3's 5-component product); a
// negative one is an error.
func TestMemoryBudget(t *testing.T) {
	p := &product{seed: 3, k: 5}
	run := func(max int64) (*consequence.Result[uint64, pAct], error) {
		return consequence.NewChecker(p).MaxMemory(max).Run(context.Background())
	}
	res, err := run(1)
	if err != nil || res.Stop != consequence.StopMemoryBudget || res.PeakMemory == 0 || res.Stop.String() != "memory budget" {
		t.Fatalf("budget of 1 byte: %+v, %v", res, err)
	}
	res, err = run(1 << 50)
	if err != nil || !res.Completed() || res.Unique != 7056 || res.PeakMemory == 0 {
		t.Fatalf("budget of 1 PiB: %+v, %v", res, err)
	}
	if _, err := run(-1); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Fatalf("negative budget: %v", err)
	}
}

// noCarry is the product system with an independence relation that never
// pays: Commute holds as in product, but SameAction never finds an action
// again in a successor, so every successor's actions are listed and
// nothing is ever asleep.
type noCarry struct{ *product }

func (noCarry) SameAction(x, y consequence.Action[pAct]) bool { return false }

// TestSleepSetsWeighed: once a search has made the probe's transitions it
// weighs its sleep sets. The product system's pay (they sleep more than
// half as many transitions as they list successors) and run throughout;
// noCarry's never sleep anything, are switched off at the same depth for
// any number of workers, and the search then takes every transition the
// reference takes. Either way the states, their depths and the violations
// are the reference's. The product is seed 3's of 5 components (7,056
// states, 39,283 transitions taken with sleep sets, well past the probe's
// 2,000).
func TestSleepSetsWeighed(t *testing.T) {
	p := &product{seed: 3, k: 5}
	props := productProps(p.k)
	want := reference[uint64, pAct](p, props, consequence.Options{MaxViolations: 1 << 20})
	for _, tc := range []struct {
		name string
		m    consequence.Model[uint64, pAct]
		off  bool
	}{{"product", p, false}, {"noCarry", noCarry{p}, true}} {
		offAt := -1
		for _, workers := range []int{1, 3} {
			c := consequence.NewChecker(tc.m).Properties(props...).
				WithOptions(consequence.Options{Workers: workers, MaxViolations: 1 << 20})
			consequence.SetPORProbe(consequence.SetMinParallel(c, 16), 2000)
			res, err := c.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if (res.SleepSetsOff > 0) != tc.off || (offAt >= 0 && res.SleepSetsOff != offAt) {
				t.Fatalf("%s, %d workers: sleep sets off at depth %d (with 1 worker: %d), want off %v", tc.name, workers, res.SleepSetsOff, offAt, tc.off)
			}
			offAt = res.SleepSetsOff
			if tc.off && (res.Slept != 0 || res.Generated != want.generated) || !tc.off && res.Slept == 0 {
				t.Fatalf("%s: generated %d, slept %d; reference %d", tc.name, res.Generated, res.Slept, want.generated)
			}
			if !slices.Equal(res.DepthCounts, want.depthCounts) || !slices.Equal(violationSet(res.Violations), refViolationSet(want.violations)) {
				t.Fatalf("%s: depths %v violations %v, reference %v %v", tc.name, res.DepthCounts, violationSet(res.Violations), want.depthCounts, refViolationSet(want.violations))
			}
		}
	}
}
