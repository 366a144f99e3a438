package twophase_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
	"github.com/seed6eee2ec7/crystalball/node"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newModel(t testing.TB, opts twophase.Options) *twophase.Model {
	t.Helper()
	m, err := twophase.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func check(t testing.TB, m *twophase.Model, o consequence.Options) *consequence.Result[twophase.State, twophase.Action] {
	t.Helper()
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).WithOptions(o).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// depthCounts is the number of states at each BFS depth, from the closed
// form in the package documentation: a state's depth is the sum of the
// distances of its parts, so the counts are the coefficients of
//
//	(1+x)^(2n)                 TM in init: per RM working 1, aborted or prepared x, prepared and in tmPrepared x²
//	x^(2n+1) (1+x)^n           after TMCommit: every RM prepared and received, then prepared or committed
//	x (1 + 2x + 2x² + x³)^n    after TMAbort: working; aborted or prepared; aborted after preparing or prepared and received; both
func depthCounts(n int) []uint64 {
	mul := func(a, b []uint64) []uint64 {
		out := make([]uint64, len(a)+len(b)-1)
		for i, x := range a {
			for j, y := range b {
				out[i+j] += x * y
			}
		}
		return out
	}
	pow := func(p []uint64, k int) []uint64 {
		out := []uint64{1}
		for range k {
			out = mul(out, p)
		}
		return out
	}
	shift := func(p []uint64, k int) []uint64 { return append(make([]uint64, k), p...) }
	add := func(a, b []uint64) []uint64 {
		out := make([]uint64, max(len(a), len(b)))
		for i, x := range a {
			out[i] += x
		}
		for i, x := range b {
			out[i] += x
		}
		return out
	}
	init := pow([]uint64{1, 1}, 2*n)
	committed := shift(pow([]uint64{1, 1}, n), 2*n+1)
	aborted := shift(pow([]uint64{1, 2, 2, 1}, n), 1)
	return add(add(init, committed), aborted)
}

// TestStateCounts pins the published counts: exhaustive BFS of TwoPhase.tla
// finds 288 distinct states for 3 RMs and 8,832 for 5 (TLC and Stateright
// agree), and 296,448 for 7 (4^7 + 2^7 + 6^7; TestStateCounts7 in make
// test-long, 1.6 s of this test's 1.7 s under the race detector). The
// per-depth counts match the closed form, and TCConsistent holds
// everywhere.
func TestStateCounts(t *testing.T) {
	checkStateCounts(t, []stateCountCase{
		{3, 288, 1146, []uint64{1, 7, 21, 38, 50, 54, 49, 36, 21, 9, 2}},
		{5, 8832, 58146, nil},
	})
}

// stateCountCase is a configuration of TestStateCounts with its pinned
// counts (depths: the closed form's, pinned where given).
type stateCountCase struct {
	rms       int
	unique    uint64
	generated uint64
	depths    []uint64
}

func checkStateCounts(t *testing.T, cases []stateCountCase) {
	for _, tc := range cases {
		for _, workers := range []int{1, 4} {
			t.Run(fmt.Sprintf("rms=%d/workers=%d", tc.rms, workers), func(t *testing.T) {
				m := newModel(t, twophase.Options{RMs: tc.rms})
				res := check(t, m, consequence.Options{Workers: workers, DisablePOR: true})
				if res.Unique != tc.unique || res.Unique != twophase.StateCount(tc.rms) {
					t.Fatalf("unique states = %d, want %d", res.Unique, tc.unique)
				}
				if res.Generated != tc.generated {
					t.Fatalf("generated = %d, want %d", res.Generated, tc.generated)
				}
				if !res.Completed() || len(res.Violations) != 0 {
					t.Fatalf("stop %v, violations %+v", res.Stop, res.Violations)
				}
				want := depthCounts(tc.rms)
				if tc.depths != nil && !slices.Equal(want, tc.depths) {
					t.Fatalf("closed form %v, pinned %v", want, tc.depths)
				}
				if !slices.Equal(res.DepthCounts, want) || res.Depth != 3*tc.rms+1 {
					t.Fatalf("depth counts %v (depth %d), want %v", res.DepthCounts, res.Depth, want)
				}
			})
		}
	}
}

// TestWorkersAgree: results do not depend on the number of workers, with or
// without a state budget, for both strategies.
func TestWorkersAgree(t *testing.T) {
	for _, o := range []consequence.Options{
		{MaxStates: 5000},
		{MaxStates: 7777},
		{Strategy: consequence.Consequence},
		{Strategy: consequence.Consequence, MaxDepth: 5},
	} {
		for _, bug := range []bool{false, true} {
			m := newModel(t, twophase.Options{RMs: 6, BugCommitWithoutMsg: bug})
			o.Workers = 1
			want := check(t, m, o)
			for _, workers := range []int{2, 4} {
				o.Workers = workers
				got := check(t, m, o)
				if got.Unique != want.Unique || got.Generated != want.Generated || got.Pruned != want.Pruned ||
					got.Stop != want.Stop || !slices.Equal(got.DepthCounts, want.DepthCounts) ||
					fmt.Sprint(got.Violations) != fmt.Sprint(want.Violations) {
					t.Fatalf("%+v bug=%v workers=%d: %d/%d/%d %v %v %v; workers=1: %d/%d/%d %v %v %v", o, bug, workers,
						got.Unique, got.Generated, got.Pruned, got.Stop, got.DepthCounts, got.Violations,
						want.Unique, want.Generated, want.Pruned, want.Stop, want.DepthCounts, want.Violations)
				}
			}
		}
	}
}

// TestPlantedBug: with an RM allowed to commit without a Commit message,
// BFS finds a TCConsistent violation at the shallowest depth possible (3:
// one RM prepares and commits, another aborts), and its path replays from
// Init to a violating state. Consequence prediction finds it too, deeper:
// RM 1's local actions (prepare, choose to abort) are expanded only in its
// first local state, at Init, so on this path it aborts on the TM's Abort.
func TestPlantedBug(t *testing.T) {
	m := newModel(t, twophase.Options{RMs: 3, BugCommitWithoutMsg: true})
	for _, tc := range []struct {
		strategy consequence.Strategy
		depth    int
		path     string
	}{
		{consequence.BFS, 3, "[RMPrepare(0) RMRcvCommitMsg(0) RMChooseToAbort(1)]"},
		{consequence.Consequence, 5, "[RMPrepare(0) TMRcvPrepared(0) TMAbort RMRcvCommitMsg(0) RMRcvAbortMsg(1)]"},
	} {
		t.Run(tc.strategy.String(), func(t *testing.T) {
			res := check(t, m, consequence.Options{Strategy: tc.strategy})
			v, ok := res.Violated("TCConsistent")
			// Terminated holds, so the search goes on to the end.
			if !ok || res.Stop != consequence.StopCompleted || len(res.Violations) != 1 {
				t.Fatalf("stop %v, violations %+v", res.Stop, res.Violations)
			}
			acts := make([]twophase.Action, len(v.Path))
			for i, a := range v.Path {
				acts[i] = a.Act
			}
			if v.Depth != tc.depth || v.Kind != node.Safety || fmt.Sprint(acts) != tc.path {
				t.Fatalf("violation at depth %d: %v; want depth %d: %s", v.Depth, acts, tc.depth, tc.path)
			}
			if v.Path[0].Node != 0 || !v.Path[0].Local || v.Path[1].Local {
				t.Fatalf("path tags %+v", v.Path)
			}
			if v.Err.Error() != "RM 0 committed while RM 1 aborted" {
				t.Fatalf("error %q", v.Err)
			}
			init := m.Init()
			if len(init) != 1 || v.Start != init[0] {
				t.Fatalf("start %v", v.Start)
			}
			s, err := consequence.Replay(m, v.Start, v.Path)
			if err != nil {
				t.Fatal(err)
			}
			if s != v.State || m.Fingerprint(s) != v.Fingerprint {
				t.Fatalf("replay reached %s, violation has %s", s.Format(3), v.State.Format(3))
			}
			if err := m.Properties()[0].Check(s); err == nil {
				t.Fatalf("replayed state %s satisfies TCConsistent", s.Format(3))
			}
			if got := s.Format(3); tc.strategy == consequence.BFS && got != "rm=[committed aborted working] tm=init tmPrepared={} msgs={Prepared(0)}" {
				t.Fatalf("state %s", got)
			}
		})
	}
}

// TestSpecification checks the model against TwoPhase.tla state by state
// for 4 RMs: Actions lists exactly the enabled actions (every listed action
// is enabled, every unlisted one disabled), every reachable state satisfies
// the type invariant and TCConsistent, and an RM's local actions depend only
// on its local state.
func TestSpecification(t *testing.T) {
	const n = 4
	m := newModel(t, twophase.Options{RMs: n})
	all := []twophase.Action{{Kind: twophase.TMCommit}, {Kind: twophase.TMAbort}}
	for rm := range uint8(n + 1) { // n+1: one RM out of range
		for k := twophase.TMRcvPrepared; k <= twophase.RMRcvAbortMsg; k++ {
			if k != twophase.TMCommit && k != twophase.TMAbort {
				all = append(all, twophase.Action{Kind: k, RM: rm})
			}
		}
	}
	seen := map[twophase.State]bool{0: true}
	queue := []twophase.State{0}
	type localKey struct {
		node int
		h    node.Hash
	}
	localActs := map[localKey]string{}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.TM() > twophase.TMAborted || (s.CommitMsg() && s.TM() != twophase.TMCommitted) || (s.AbortMsg() && s.TM() != twophase.TMAborted) {
			t.Fatalf("type/consistency invariant fails in %s", s.Format(n))
		}
		for i := range n {
			if s.TMPrepared(i) && !s.PreparedMsg(i) || s.PreparedMsg(i) && s.RM(i) == twophase.Working {
				t.Fatalf("invariant fails in %s", s.Format(n))
			}
		}
		if err := m.Properties()[0].Check(s); err != nil {
			t.Fatalf("TCConsistent: %v in %s", err, s.Format(n))
		}
		listed := map[twophase.Action]consequence.Action[twophase.Action]{}
		local := map[int]string{}
		for _, a := range m.Actions(s, nil) {
			listed[a.Act] = a
			if a.Local {
				local[a.Node] += a.Act.Kind.String() + " "
			}
			wantNode := int(a.Act.RM)
			if a.Act.Kind == twophase.TMCommit || a.Act.Kind == twophase.TMAbort || a.Act.Kind == twophase.TMRcvPrepared {
				wantNode = m.TM()
			}
			wantLocal := a.Act.Kind == twophase.TMCommit || a.Act.Kind == twophase.TMAbort || a.Act.Kind == twophase.RMPrepare || a.Act.Kind == twophase.RMChooseToAbort
			if a.Node != wantNode || a.Local != wantLocal {
				t.Fatalf("%v tagged node %d local %v", a.Act, a.Node, a.Local)
			}
		}
		for node, acts := range local {
			key := localKey{node, m.LocalFingerprint(s, node)}
			if prev, ok := localActs[key]; ok && prev != acts {
				t.Fatalf("node %d: local state %v has local actions %q and %q", node, key.h, prev, acts)
			}
			localActs[key] = acts
		}
		for _, a := range all {
			next, ok := m.Next(s, a)
			if _, isListed := listed[a]; ok != isListed {
				t.Fatalf("%v in %s: Next enabled=%v, listed=%v", a, s.Format(n), ok, isListed)
			}
			if ok && !seen[next] {
				seen[next] = true
				queue = append(queue, next)
			}
		}
	}
	if uint64(len(seen)) != twophase.StateCount(n) || len(seen) != 1568 {
		t.Fatalf("%d states reachable, want %d", len(seen), twophase.StateCount(n))
	}
}

// TestTerminatedAtQuiescence: the liveness property holds in every
// quiescent state (the only ones where the exhaustive search checks it).
func TestTerminatedAtQuiescence(t *testing.T) {
	m := newModel(t, twophase.Options{RMs: 3})
	res := check(t, m, consequence.Options{})
	if _, ok := res.Violated("Terminated"); ok {
		t.Fatalf("Terminated violated: %+v", res.Violations)
	}
	notDone := consequence.Eventually("Never", func(s twophase.State) error {
		if m.Terminal(s) {
			return errors.New("terminal")
		}
		return nil
	})
	res, err := consequence.NewChecker(m).Properties(notDone).MaxViolations(100).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The quiescent states: every RM committed (1), or the TM aborted and
	// every RM aborted, each without having prepared, or after preparing with
	// or without the TM having received its Prepared (3^3 = 27).
	if len(res.Violations) != 28 || res.Violations[0].State.Format(3) != "rm=[aborted aborted aborted] tm=aborted tmPrepared={} msgs={Abort}" {
		t.Fatalf("violations: %d, first %v", len(res.Violations), res.Violations[0].State.Format(3))
	}
	committed := 0
	for _, v := range res.Violations {
		if v.State.TM() == twophase.TMCommitted {
			committed++
		}
	}
	if committed != 1 {
		t.Fatalf("%d all-committed quiescent states", committed)
	}
}

func TestOptions(t *testing.T) {
	for _, n := range []int{-1, twophase.MaxRMs + 1} {
		if _, err := twophase.New(twophase.Options{RMs: n}); !errors.Is(err, twophase.ErrInvalidOptions) {
			t.Fatalf("New(%d): %v", n, err)
		}
	}
	if m := newModel(t, twophase.Options{}); m.RMs() != twophase.DefaultRMs || twophase.DefaultOptions().RMs != twophase.DefaultRMs {
		t.Fatalf("zero Options: %d RMs, DefaultOptions %+v; want %d", m.RMs(), twophase.DefaultOptions(), twophase.DefaultRMs)
	}
	m := newModel(t, twophase.Options{RMs: twophase.MaxRMs})
	s := twophase.State(0)
	for rm := range twophase.MaxRMs {
		var ok bool
		if s, ok = m.Next(s, twophase.Action{Kind: twophase.RMPrepare, RM: uint8(rm)}); !ok {
			t.Fatal("prepare")
		}
		if s, ok = m.Next(s, twophase.Action{Kind: twophase.TMRcvPrepared, RM: uint8(rm)}); !ok {
			t.Fatal("receive")
		}
	}
	s, ok := m.Next(s, twophase.Action{Kind: twophase.TMCommit})
	if !ok || s.TM() != twophase.TMCommitted || !s.CommitMsg() || s.RM(twophase.MaxRMs-1) != twophase.Prepared {
		t.Fatalf("commit with %d RMs: %s", twophase.MaxRMs, s.Format(twophase.MaxRMs))
	}
	if a := (twophase.Action{Kind: twophase.RMRcvAbortMsg, RM: 2}); a.String() != "RMRcvAbortMsg(2)" {
		t.Fatal(a.String())
	}
}
