package zoo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// found pins, per case, the depth at which breadth-first search from the
// case's Check configuration first finds its planted bug.
var found = map[string]int{
	"cache":   5,
	"lease":   7,
	"lockd":   8,
	"logship": 8,
	"meter":   4,
	"retry":   10,
}

// timerOrder lists the cases whose fixed twins are safe only under real
// timing, which the explorer's virtual clock does not yet give them. Lease:
// a delivery does not move the receiver's clock, and a reset starts the
// node at the snapshot's latest clock, so after a reset of a holder its
// lapse can be due more than the clock skew after the grantor's expire —
// the twin is reported violated at depth 9 (n2 reset rst, granted again,
// n1's expire, n3 granted). TestTwinsClean skips them; package lease tests
// its twin under the timing deadline order and causality give it.
var timerOrder = map[string]bool{"lease": true}

// also pins further fault budgets under which a case's bug is found (at
// depth), beside its Check's; the twins stay clean under them to
// maxDepth.
var also = map[string][]struct {
	faults          consequence.Faults
	depth, maxDepth int
}{
	"lockd": {
		{consequence.Faults{Resets: 1, Breaks: 1}, 8, 10},
	},
	"logship": {
		{consequence.Faults{Resets: 1, SilentResets: true}, 7, 12},
		{consequence.Faults{Resets: 1, SilentResets: true, StaleConnections: true}, 7, 10},
		{consequence.Faults{Breaks: 1}, 9, 10},
	},
}

// TestCasesAlso: the further fault budgets of also find the bugs at their
// pinned depths, and nothing on the twins.
func TestCasesAlso(t *testing.T) {
	for _, c := range Cases() {
		for _, a := range also[c.Name] {
			t.Run(fmt.Sprintf("%s/%+v", c.Name, a.faults), func(t *testing.T) {
				c.Check.Faults, c.Check.MaxDepth = a.faults, a.maxDepth
				res := search(t, c, false)
				if len(res.Violations) == 0 || res.Violations[0].Property != c.Property || res.Violations[0].Depth != a.depth {
					t.Errorf("bug: %v (%d states), want %q at depth %d", res.Violations, res.Unique, c.Property, a.depth)
				}
				if res := search(t, c, true); len(res.Violations) > 0 {
					t.Errorf("fixed twin violates: %v", res.Violations[0])
				}
			})
		}
	}
}

// search runs the case's offline check on its spec with the bug or fixed.
func search(t *testing.T, c Case, fixed bool) *consequence.Result[*consequence.GlobalState, consequence.ActorAction] {
	t.Helper()
	m, err := consequence.NewActorModel(c.Spec(fixed), consequence.ActorOptions{
		N: c.Check.Nodes, Workload: c.Workload, Faults: c.Check.Faults})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).
		Strategy(consequence.BFS).MaxDepth(c.Check.MaxDepth).MaxStates(2_000_000).
		StopOnViolation(!fixed).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestCasesFound: breadth-first search finds every planted bug, at its
// pinned depth, violating the case's property, and nothing on the twins.
func TestCasesFound(t *testing.T) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			res := search(t, c, false)
			if len(res.Violations) == 0 {
				t.Fatalf("bug not found: %v, %d states, depth %d", res.Stop, res.Unique, res.Depth)
			}
			v := res.Violations[0]
			t.Logf("%v (%d states)", v, res.Unique)
			if v.Property != c.Property || v.Depth != found[c.Name] {
				t.Errorf("found %q at depth %d, want %q at depth %d", v.Property, v.Depth, c.Property, found[c.Name])
			}
		})
	}
}

// TestTwinsClean: the fixed twins have no violation within the budget
// that finds their bugs.
func TestTwinsClean(t *testing.T) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			if timerOrder[c.Name] {
				t.Skip("safe only with timers in deadline order, which the explorer does not follow yet")
			}
			res := search(t, c, true)
			t.Logf("%v, %d states, depth %d", res.Stop, res.Unique, res.Depth)
			for _, v := range res.Violations {
				t.Errorf("fixed twin violates: %v", v)
			}
			if res.Stop != consequence.StopDepthBudget && res.Stop != consequence.StopCompleted {
				t.Errorf("search stopped by %v before depth %d", res.Stop, c.Check.MaxDepth)
			}
		})
	}
}

// emulate runs the case for d of virtual time with its churn and its
// connection breaks: a Poisson process of c.Breaks a minute, each
// breaking the connection between two nodes drawn at random (a pair
// without one is passed over), from a stream of the seed.
func emulate(t *testing.T, c Case, fixed bool, seed uint64, d time.Duration) emulation.Result {
	t.Helper()
	e, err := emulation.New(emulation.Config{
		Spec: c.Spec(fixed), Nodes: c.Nodes, Seed: seed, Duration: d, Workload: c.Workload,
		Churn: emulation.ChurnConfig{Rate: c.Churn},
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Breaks > 0 {
		rng := rand.New(rand.NewPCG(seed, 0xb4ea4))
		at := time.Duration(0)
		for {
			at += time.Duration(rng.ExpFloat64() / c.Breaks * float64(time.Minute))
			if at >= d {
				break
			}
			if err := e.RunUntil(emulation.Epoch.Add(at)); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			a, b := node.ID(1+rng.IntN(c.Nodes)), node.ID(1+rng.IntN(c.Nodes))
			if a != b && e.Live(a) {
				_ = e.BreakConnection(a, b) // fails only when a holds no connection to b
			}
		}
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return r
}

// TestTwinsEmulated: emulated runs of every fixed twin, seeds 1–3 for the
// case's whole Duration with its churn and breaks, violate no safety
// property.
func TestTwinsEmulated(t *testing.T) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			for seed := uint64(1); seed <= 3; seed++ {
				r := emulate(t, c, true, seed, c.Duration)
				for _, s := range r.Safety {
					if s.ViolatedStates > 0 {
						t.Errorf("seed %d: fixed twin violates %s at %v: %s", seed, s.Name, s.FirstViolation, s.FirstError)
					}
				}
			}
		})
	}
}

// shows pins, per case, a seed whose emulated run of the planted bug
// violates the case's property within bugWindow (with the case's churn and
// breaks), and the virtual time of the first violation, rounded down to
// the second.
var shows = map[string]struct {
	seed  uint64
	first time.Duration
}{
	"cache":   {1, 8 * time.Second},
	"lease":   {3, 19 * time.Second},
	"lockd":   {2, 22 * time.Second},
	"logship": {2, 9 * time.Second},
	"meter":   {2, 5 * time.Second},
	"retry":   {1, 8 * time.Second},
}

// bugWindow is the emulated time TestBugsEmulated gives each case.
const bugWindow = 30 * time.Second

// TestBugsEmulated: every planted bug shows in a short emulated run of its
// pinned seed, at the pinned time; the fixed twin of the same run does
// not violate the property.
func TestBugsEmulated(t *testing.T) {
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			want, ok := shows[c.Name]
			if !ok {
				t.Fatal("no seed pinned")
			}
			r := emulate(t, c, false, want.seed, bugWindow)
			s := safety(r, c.Property)
			if s.ViolatedStates == 0 || s.FirstViolation.Truncate(time.Second) != want.first {
				t.Errorf("seed %d: %s violated in %d states, first at %v; want first at %v", want.seed, c.Property, s.ViolatedStates, s.FirstViolation, want.first)
			}
			t.Logf("seed %d: %s first violated at %v by %s: %s", want.seed, c.Property, s.FirstViolation, s.FirstEvent, s.FirstError)
			if s := safety(emulate(t, c, true, want.seed, bugWindow), c.Property); s.ViolatedStates > 0 {
				t.Errorf("seed %d: fixed twin violates %s at %v: %s", want.seed, c.Property, s.FirstViolation, s.FirstError)
			}
		})
	}
}

// safety returns the result of the named safety property of a run.
func safety(r emulation.Result, name string) emulation.SafetyResult {
	for _, s := range r.Safety {
		if s.Name == name {
			return s
		}
	}
	return emulation.SafetyResult{Name: name}
}

// TestCasesContract: the cases are sorted by name and unique, their
// fields complete, their classes known and all covered, both specs valid
// with the same messages and properties; Services serves each as
// "zoo-NAME", with "--fix all" the fixed twin and any other correction an
// error.
func TestCasesContract(t *testing.T) {
	classes := map[string]bool{"timer-race": false, "reordering": false, "reset-rst": false,
		"reset-silent": false, "break": false, "datagram-loss": false, "partition": false, "lease": false}
	cases := Cases()
	for i, c := range cases {
		if i > 0 && cases[i-1].Name >= c.Name {
			t.Errorf("cases not sorted or not unique: %q before %q", cases[i-1].Name, c.Name)
		}
		if c.Bug == "" || c.Fix == "" || c.Spec == nil || c.Workload == nil || c.Nodes < 5 || c.Nodes > 10 ||
			c.Duration <= 0 || c.Churn < 0 || c.Breaks < 0 || c.Check.Nodes <= 0 || c.Check.MaxDepth <= 0 {
			t.Errorf("case %q is incomplete: %+v", c.Name, c)
		}
		for _, k := range c.Covers {
			if _, ok := classes[k]; !ok {
				t.Errorf("case %q covers unknown class %q", c.Name, k)
			}
			classes[k] = true
		}
		bug, fixed := c.Spec(false), c.Spec(true)
		for _, s := range []node.Spec{bug, fixed} {
			if err := s.Validate(); err != nil {
				t.Errorf("case %q: %v", c.Name, err)
			}
		}
		if len(bug.Messages) != len(fixed.Messages) || len(bug.Properties) != len(fixed.Properties) {
			t.Errorf("case %q: the twins differ in messages or properties", c.Name)
		}
		if !slices.ContainsFunc(bug.Properties, func(p node.Property) bool { return p.Name == c.Property && p.Kind == node.Safety }) {
			t.Errorf("case %q: no safety property %q", c.Name, c.Property)
		}
	}
	for k, covered := range classes {
		if !covered {
			t.Errorf("no case covers %q", k)
		}
	}
	services := Services()
	if len(services) != len(cases) {
		t.Fatalf("%d services for %d cases", len(services), len(cases))
	}
	for i, s := range services {
		if s.Name != "zoo-"+cases[i].Name || s.Configure == nil {
			t.Errorf("service %d is %q, want zoo-%s with corrections", i, s.Name, cases[i].Name)
			continue
		}
		fixed, err := s.Configure([]string{"all"}, 5)
		if err != nil || fixed.Options != "fixed" {
			t.Errorf("%s --fix all: %v, options %q", s.Name, err, fixed.Options)
		}
		if plain, err := s.Configure(nil, 5); err != nil || plain.Options != "bug" {
			t.Errorf("%s without --fix: %v, options %q", s.Name, err, plain.Options)
		}
		if _, err := s.Configure([]string{"other"}, 5); err == nil {
			t.Errorf("%s --fix other: no error", s.Name)
		}
	}
}
