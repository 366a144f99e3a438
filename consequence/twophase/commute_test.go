package twophase_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
)

// TestCommute checks the model's independence claims on every reachable
// state of 2PC-4, with and without the planted bug.
func TestCommute(t *testing.T) {
	for _, bug := range []bool{false, true} {
		m := newModel(t, twophase.Options{RMs: 4, BugCommitWithoutMsg: bug})
		seen := map[twophase.State]bool{0: true}
		queue := []twophase.State{0}
		pairs := 0
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			n, err := consequence.CheckCommute[twophase.State, twophase.Action](m, m, s)
			if err != nil {
				t.Fatalf("bug=%v, state %s: %v", bug, s.Format(4), err)
			}
			pairs += n
			for _, a := range m.Actions(s, nil) {
				if u, ok := m.Next(s, a.Act); ok && !seen[u] {
					seen[u] = true
					queue = append(queue, u)
				}
			}
		}
		if pairs == 0 {
			t.Fatalf("bug=%v: no commuting pairs checked", bug)
		}
	}
}

// TestPartialOrderCounts pins the transitions BFS takes with sleep sets
// against TLC's counts without, and checks that the states, their depths
// and the violations are the same. 2PC-7 (2.7 million transitions, 3.3 s
// of the test's 4.5 s under the race detector) is TestPartialOrderCounts7
// in make test-long.
func TestPartialOrderCounts(t *testing.T) {
	checkPartialOrderCounts(t, []partialOrderCase{
		{3, false, 1146, 550},
		{5, false, 58146, 18478},
		{3, true, 3417, 1367},
		{5, true, 305569, 83583},
	})
}

// partialOrderCase is a configuration of TestPartialOrderCounts with its
// pinned transition counts.
type partialOrderCase struct {
	rms           int
	bug           bool
	full, withPOR uint64 // transitions (generated)
}

func checkPartialOrderCounts(t *testing.T, cases []partialOrderCase) {
	for _, tc := range cases {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("rms=%d/bug=%v/workers=%d", tc.rms, tc.bug, workers), func(t *testing.T) {
				m := newModel(t, twophase.Options{RMs: tc.rms, BugCommitWithoutMsg: tc.bug})
				full := check(t, m, consequence.Options{Workers: workers, DisablePOR: true, MaxViolations: 1 << 20})
				por := check(t, m, consequence.Options{Workers: workers, MaxViolations: 1 << 20})
				if por.Unique != full.Unique || !slices.Equal(por.DepthCounts, full.DepthCounts) {
					t.Fatalf("with POR %d states %v, without %d %v", por.Unique, por.DepthCounts, full.Unique, full.DepthCounts)
				}
				if por.Generated+por.Slept > full.Generated || por.Slept == 0 {
					t.Fatalf("with POR %d generated + %d slept, without %d", por.Generated, por.Slept, full.Generated)
				}
				if full.Generated != tc.full || por.Generated != tc.withPOR {
					t.Fatalf("generated %d without POR, %d with; pinned %d, %d", full.Generated, por.Generated, tc.full, tc.withPOR)
				}
				if got, want := violations(por), violations(full); !slices.Equal(got, want) {
					t.Fatalf("violations with POR %v, without %v", got, want)
				}
				t.Logf("states %d, generated %d without POR, %d with (%d slept), %d violations", full.Unique, full.Generated, por.Generated, por.Slept, len(full.Violations))
			})
		}
	}
}

func violations(res *consequence.Result[twophase.State, twophase.Action]) []string {
	var out []string
	for _, v := range res.Violations {
		out = append(out, fmt.Sprintf("%s@%d:%v", v.Property, v.Depth, v.Fingerprint))
	}
	slices.Sort(out)
	return out
}
