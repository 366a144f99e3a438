package twophase_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
)

// TestSymmetryCounts pins the number of states a search with Symmetry keeps:
// one per orbit, C(n+3,3) + (n+1) + C(n+5,5) (OrbitCount), for every worker
// count, with TCConsistent holding everywhere and the search as deep as
// without symmetry. Without Symmetry the same searches keep StateCount.
func TestSymmetryCounts(t *testing.T) {
	for _, tc := range []struct {
		rms    int
		unique uint64
	}{{3, 80}, {5, 314}, {8, 1461}, {10, 3300}} {
		for _, workers := range []int{1, 2} {
			t.Run(fmt.Sprintf("rms=%d/workers=%d", tc.rms, workers), func(t *testing.T) {
				m := newModel(t, twophase.Options{RMs: tc.rms, Symmetry: true})
				res := check(t, m, consequence.Options{Workers: workers})
				if res.Unique != tc.unique || res.Unique != twophase.OrbitCount(tc.rms) {
					t.Fatalf("unique = %d, want %d (OrbitCount %d)", res.Unique, tc.unique, twophase.OrbitCount(tc.rms))
				}
				if !res.Completed() || len(res.Violations) != 0 || res.Depth != 3*tc.rms+1 {
					t.Fatalf("stop %v, violations %+v, depth %d", res.Stop, res.Violations, res.Depth)
				}
			})
		}
	}
}

// reachable enumerates the reachable states of m with their BFS depths,
// without the checker.
func reachable(m *twophase.Model) map[twophase.State]int {
	depth := map[twophase.State]int{0: 0}
	queue := []twophase.State{0}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, a := range m.Actions(s, nil) {
			if next, ok := m.Next(s, a.Act); ok {
				if _, seen := depth[next]; !seen {
					depth[next] = depth[s] + 1
					queue = append(queue, next)
				}
			}
		}
	}
	return depth
}

// permutations returns every permutation of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for at := range n {
			q := slices.Insert(slices.Clone(p), at, n-1)
			out = append(out, q)
		}
	}
	return out
}

// TestSymmetryOrbitsBruteForce checks the orbit count and the canonical form
// against brute force for 1..5 RMs: every reachable state's orbit is formed
// by applying all n! permutations, its least member names it; the number of
// distinct orbits must equal OrbitCount and the symmetric search's unique
// count, level by level, and Canonical must be constant on each orbit and
// differ between orbits. Sleep sets (partial-order reduction) on or off
// change none of it.
func TestSymmetryOrbitsBruteForce(t *testing.T) {
	for n := 1; n <= 5; n++ {
		t.Run(fmt.Sprintf("rms=%d", n), func(t *testing.T) {
			m := newModel(t, twophase.Options{RMs: n})
			perms := permutations(n)
			orbitDepth := map[twophase.State]int{} // least member -> depth
			canonOf := map[twophase.State]twophase.State{}
			for s, d := range reachable(m) {
				least := s
				for _, p := range perms {
					q, err := m.Permute(s, p)
					if err != nil {
						t.Fatal(err)
					}
					least = min(least, q)
					if m.Canonical(q) != m.Canonical(s) {
						t.Fatalf("Canonical(%s) != Canonical(%s)", q.Format(n), s.Format(n))
					}
				}
				if prev, ok := orbitDepth[least]; ok && prev != d {
					t.Fatalf("orbit of %s at depths %d and %d", s.Format(n), prev, d)
				}
				orbitDepth[least] = d
				c := m.Canonical(s)
				if other, ok := canonOf[c]; ok && other != least {
					t.Fatalf("orbits of %s and %s share a canonical form", other.Format(n), least.Format(n))
				}
				canonOf[c] = least
			}
			perDepth := make([]uint64, 3*n+2)
			for _, d := range orbitDepth {
				perDepth[d]++
			}
			sym := newModel(t, twophase.Options{RMs: n, Symmetry: true})
			for _, noPOR := range []bool{false, true} { // with and without sleep sets
				res := check(t, sym, consequence.Options{DisablePOR: noPOR})
				if uint64(len(orbitDepth)) != twophase.OrbitCount(n) || res.Unique != twophase.OrbitCount(n) {
					t.Fatalf("POR off %v: %d orbits by brute force, search kept %d, OrbitCount %d", noPOR, len(orbitDepth), res.Unique, twophase.OrbitCount(n))
				}
				if !slices.Equal(res.DepthCounts, perDepth) {
					t.Fatalf("POR off %v: orbits per depth: search %v, brute force %v", noPOR, res.DepthCounts, perDepth)
				}
			}
		})
	}
}

// TestSymmetrySameViolations: with the planted bug, both strategies find the
// same TCConsistent violation at the same depth with and without symmetry,
// and its path replays to a violating state with the search's fingerprint.
func TestSymmetrySameViolations(t *testing.T) {
	for _, strategy := range []consequence.Strategy{consequence.BFS, consequence.Consequence} {
		for _, rms := range []int{3, 6} {
			// Unique states with the bug, BFS: 736 and 308,864 without
			// symmetry, 180 and 2,185 with.
			wantSym := map[int]uint64{3: 180, 6: 2185}[rms]
			plain := newModel(t, twophase.Options{RMs: rms, BugCommitWithoutMsg: true})
			sym := newModel(t, twophase.Options{RMs: rms, BugCommitWithoutMsg: true, Symmetry: true})
			o := consequence.Options{Strategy: strategy}
			want, got := check(t, plain, o), check(t, sym, o)
			wv, wok := want.Violated("TCConsistent")
			gv, gok := got.Violated("TCConsistent")
			if !wok || !gok || wv.Depth != gv.Depth || len(want.Violations) != len(got.Violations) {
				t.Fatalf("%v rms=%d: without symmetry %+v, with %+v", strategy, rms, want.Violations, got.Violations)
			}
			if strategy == consequence.BFS && (gv.Depth != 3 || got.Unique != wantSym) {
				t.Fatalf("BFS rms=%d: depth %d, unique %d with symmetry, want %d", rms, gv.Depth, got.Unique, wantSym)
			}
			s, err := consequence.Replay(sym, gv.Start, gv.Path)
			if err != nil {
				t.Fatal(err)
			}
			if sym.Fingerprint(s) != gv.Fingerprint || sym.Properties()[0].Check(s) == nil {
				t.Fatalf("%v rms=%d: replay reached %s", strategy, rms, s.Format(rms))
			}
			t.Logf("%v rms=%d: depth %d; unique %d without symmetry, %d with", strategy, rms, gv.Depth, want.Unique, got.Unique)
		}
	}
}

// TestSymmetryTerminated: the quiescent orbits are the 28 quiescent states
// of TestTerminatedAtQuiescence up to renaming: all committed, or all
// aborted with each RM in one of 3 classes (never prepared, prepared and
// received, prepared and not received), a multiset: 1 + C(3+2, 2) = 11.
// Terminated holds in all of them.
func TestSymmetryTerminated(t *testing.T) {
	m := newModel(t, twophase.Options{RMs: 3, Symmetry: true})
	if res := check(t, m, consequence.Options{}); len(res.Violations) != 0 {
		t.Fatalf("violations %+v", res.Violations)
	}
	notDone := consequence.Eventually("Never", func(s twophase.State) error {
		if m.Terminal(s) {
			return errors.New("terminal")
		}
		return nil
	})
	res, err := consequence.NewChecker(m).Properties(notDone).MaxViolations(100).Run(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) != 11 {
		t.Fatalf("%d quiescent orbits, want 11", len(res.Violations))
	}
}

func TestPermuteErrors(t *testing.T) {
	m := newModel(t, twophase.Options{RMs: 3})
	for _, p := range [][]int{{0, 1}, {0, 1, 1}, {0, 1, 3}, {-1, 0, 1}} {
		if _, err := m.Permute(0, p); !errors.Is(err, twophase.ErrInvalidOptions) {
			t.Fatalf("Permute(%v): %v", p, err)
		}
	}
	s := twophase.State(0)
	s, _ = m.Next(s, twophase.Action{Kind: twophase.RMPrepare, RM: 0})
	q, err := m.Permute(s, []int{2, 0, 1})
	if err != nil || q.Format(3) != "rm=[working working prepared] tm=init tmPrepared={} msgs={Prepared(2)}" {
		t.Fatalf("Permute: %s, %v", q.Format(3), err)
	}
	if c := m.Canonical(q); c.Format(3) != "rm=[working working prepared] tm=init tmPrepared={} msgs={Prepared(2)}" {
		t.Fatalf("Canonical: %s", c.Format(3))
	}
}

// TestSymmetryWorkersAgree: with symmetry too, results do not depend on the
// number of workers, where a state budget cuts the search off included.
func TestSymmetryWorkersAgree(t *testing.T) {
	for _, o := range []consequence.Options{{MaxStates: 1000}, {MaxStates: 1777}, {Strategy: consequence.Consequence}} {
		for _, bug := range []bool{false, true} {
			m := newModel(t, twophase.Options{RMs: 9, BugCommitWithoutMsg: bug, Symmetry: true})
			o.Workers = 1
			want := check(t, m, o)
			for _, workers := range []int{2, 4} {
				o.Workers = workers
				got := check(t, m, o)
				if got.Unique != want.Unique || got.Generated != want.Generated || got.Stop != want.Stop ||
					!slices.Equal(got.DepthCounts, want.DepthCounts) || fmt.Sprint(got.Violations) != fmt.Sprint(want.Violations) {
					t.Fatalf("%+v bug=%v workers=%d: %d/%d %v %v; workers=1: %d/%d %v %v", o, bug, workers,
						got.Unique, got.Generated, got.Stop, got.Violations, want.Unique, want.Generated, want.Stop, want.Violations)
				}
			}
		}
	}
}
