package consequence_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
)

// TestKeyedSleepSetsSameAsPositions: sleep sets kept as a KeyedCommuter's
// keys take exactly the transitions that sleep sets kept as positions in
// the Actions list take — same generated, slept, per-depth counts and
// violations — on two-phase commit with and without its planted bug (3 to
// 5 resource managers), on one and on several workers, and with a state
// budget that cuts a level of 6. The complete search of 6 cost half the
// test: TestKeyedSleepSetsSameAsPositionsSix (keyedsleep_long_test.go)
// runs it.
func TestKeyedSleepSetsSameAsPositions(t *testing.T) {
	checkKeyedSleepSets(t, []keyedCase{{3, 0, false}, {5, 0, false}, {4, 0, true}, {6, 20000, false}})
}

// keyedCase is a two-phase commit configuration of
// checkKeyedSleepSets: rms resource managers, a state budget (0: none),
// the planted bug.
type keyedCase struct {
	rms, maxStates int
	bug            bool
}

// checkKeyedSleepSets compares keyed and positional sleep sets on every
// case with 1 and 3 workers.
func checkKeyedSleepSets(t *testing.T, cases []keyedCase) {
	for _, c := range cases {
		for _, workers := range []int{1, 3} {
			t.Run(fmt.Sprintf("rms=%d/bug=%v/max=%d/workers=%d", c.rms, c.bug, c.maxStates, workers), func(t *testing.T) {
				m, err := twophase.New(twophase.Options{RMs: c.rms, BugCommitWithoutMsg: c.bug})
				if err != nil {
					t.Fatal(err)
				}
				run := func(byPosition bool) string {
					ch := consequence.NewChecker(m).Properties(m.Properties()...).Workers(workers).
						MaxViolations(1 << 20).MaxStates(c.maxStates)
					consequence.SetMinParallel(ch, 64)
					if byPosition {
						consequence.SetSleepByPosition(ch)
					}
					res, err := ch.Run(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					var vs []string
					for _, v := range res.Violations {
						vs = append(vs, fmt.Sprintf("%s@%d:%v", v.Property, v.Depth, v.Path))
					}
					slices.Sort(vs)
					return fmt.Sprintf("stop=%v unique=%d generated=%d slept=%d depths=%v violations=%v",
						res.Stop, res.Unique, res.Generated, res.Slept, res.DepthCounts, vs)
				}
				keyed, positions := run(false), run(true)
				if keyed != positions {
					t.Fatalf("keyed sleep sets:\n%s\npositions:\n%s", keyed, positions)
				}
			})
		}
	}
}
