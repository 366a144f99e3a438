package consequence_test

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// fan is a model whose start state has width actions, each to a distinct
// dead-end state: the shape of a global state of many nodes, whose one
// expansion is the whole first level.
type fan struct{ width int }

func (f fan) Init() []int { return []int{0} }
func (f fan) Actions(s int, out []consequence.Action[int]) []consequence.Action[int] {
	if s != 0 {
		return out
	}
	for k := range f.width {
		out = append(out, consequence.Action[int]{Node: k, Act: k + 1})
	}
	return out
}
func (f fan) Next(s, a int) (int, bool)   { return a, s == 0 }
func (f fan) Fingerprint(s int) node.Hash { return node.Hash{Hi: 7, Lo: uint64(s) + 1} }
func (f fan) LocalFingerprint(s int, n int) node.Hash {
	return node.Hash{Hi: uint64(n), Lo: uint64(s) + 1}
}

// TestBudgetsInsideOneExpansion: the time budget is honoured inside the
// expansion of one state with many actions. main looked at it only between
// states, so `check --nodes 65536 --budget 5s` went on for as long as one
// state's expansion took (and as much memory: each successor copies the
// node list).
func TestBudgetsInsideOneExpansion(t *testing.T) {
	for _, workers := range []int{1, 2} {
		clk := &fakeClock{now: time.Unix(1000, 0), step: time.Second}
		res, err := consequence.NewChecker(fan{width: 20000}).Workers(workers).Clock(clk.Now).MaxTime(10 * time.Second).
			Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Stop != consequence.StopTimeBudget || res.Unique > 1000 {
			t.Fatalf("%d workers: stop %v after %d of 20,001 states", workers, res.Stop, res.Unique)
		}
	}
}
