package paxos_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
)

// symModel builds the actor model of Paxos among members 1..n where only
// the given proposers propose (their own ValueOf), with or without
// symmetry reduction.
func symModel(t testing.TB, n int, proposers []node.ID, opts paxos.Options, faults consequence.Faults, sym bool) *consequence.ActorModel {
	t.Helper()
	for id := 1; id <= n; id++ {
		opts.Members = append(opts.Members, node.ID(id))
	}
	opts.Proposers = proposers
	isProposer := map[node.ID]bool{}
	for _, p := range proposers {
		isProposer[p] = true
	}
	m, err := consequence.NewActorModel(paxos.NewSpec(opts), consequence.ActorOptions{
		N: n, Faults: faults, Symmetry: sym,
		Workload: func(id node.ID, restart bool) []node.Message {
			if !isProposer[id] {
				return nil
			}
			return []node.Message{paxos.Propose{Value: paxos.ValueOf(id)}}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// symmetryCount is a row of checkSymmetryCounts: the unique states of
// correct Paxos among members 1..n, plain without symmetry and sym with it.
type symmetryCount struct {
	n          int
	plain, sym uint64
}

// TestSymmetryCounts pins BFS to depth 6 of correct Paxos among members
// 1..n where only n1 proposes, with and without symmetry reduction over the
// acceptors 2..n: the unique states fall from 395 to 257 (3 members), 695
// to 269 (4) and 1,203 to 277 (5) — without symmetry they nearly double
// with every member, with it they hardly grow — the same for 1 and 2
// workers, with no violation either way. (Depth 7, 863 / 541 to 2,809 /
// 565, cost four times as much; TestSymmetryCountsDepth8, in
// symmetry_long_test.go, pins depth 8, where the searches keep about four
// times as many states as here.)
func TestSymmetryCounts(t *testing.T) {
	checkSymmetryCounts(t, 6, []symmetryCount{{3, 395, 257}, {4, 695, 269}, {5, 1203, 277}})
}

// checkSymmetryCounts runs BFS to depth on every row's model with and
// without symmetry, with 1 and 2 workers, and requires the row's unique
// states, the full depth and no violation.
func checkSymmetryCounts(t *testing.T, depth int, rows []symmetryCount) {
	t.Helper()
	for _, tc := range rows {
		for _, workers := range []int{1, 2} {
			for _, sym := range []bool{false, true} {
				m := symModel(t, tc.n, []node.ID{1}, paxos.Options{}, consequence.Faults{}, sym)
				res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(depth).Workers(workers).Run(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				want := map[bool]uint64{false: tc.plain, true: tc.sym}[sym]
				if res.Unique != want || res.Depth != depth || len(res.Violations) != 0 {
					t.Fatalf("n=%d symmetry=%v workers=%d: %d unique to depth %d, violations %v; want %d to depth %d", tc.n, sym, workers, res.Unique, res.Depth, res.Violations, want, depth)
				}
			}
		}
	}
}

// roundOne runs Paxos among members 1..4 (proposers 1 and 2) by hand until
// node 1's value v1 is accepted and learned by 1, 3 and 4, every message to
// node 2 lost, and returns the nodes' checkpoints: a gathered snapshot in
// which 3 and 4 are alike and node 2 has yet to propose (nothing is in
// flight).
//
// It then takes the first secondRound steps (0 to 6) of the path of bug1's
// violation: n2 proposes v2, n1 (which accepted v1) receives the Prepare and
// promises, n2 receives that Promise and its own Prepare (after four steps
// n2's Promise to itself and its Prepares to n3 and n4 are in flight, and 3
// and 4 are still alike), n3 receives the Prepare and n2 n3's empty Promise
// (after six: n2 holds two Promises, n1's and n3's, its Promise to itself
// and its Prepare to n4 in flight).
func roundOne(t testing.TB, spec node.Spec, secondRound int) ([]consequence.Checkpoint, []node.Envelope) {
	t.Helper()
	at := consequence.DefaultStart
	cores := map[node.ID]*node.Core{}
	var queue []node.Envelope
	step := func(id node.ID, ev node.Event) {
		ev.At = at
		fx, err := cores[id].Step(ev)
		if err != nil {
			t.Fatal(err)
		}
		queue = append(queue, fx.Sends...)
	}
	for id := node.ID(1); id <= 4; id++ {
		c, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New})
		if err != nil {
			t.Fatal(err)
		}
		cores[id] = c
		step(id, node.Event{Kind: node.EventInit})
	}
	step(1, node.Event{Kind: node.EventApp, Msg: paxos.Propose{Value: paxos.ValueOf(1)}})
	for len(queue) > 0 {
		env := queue[0]
		queue = queue[1:]
		if env.To != 2 {
			step(env.To, node.Event{Kind: node.EventMessage, From: env.From, Msg: env.Msg})
		}
	}
	// deliver delivers the first message in flight from one node to
	// another (FIFO per channel).
	deliver := func(from, to node.ID) {
		t.Helper()
		for i, env := range queue {
			if env.From == from && env.To == to {
				queue = append(queue[:i:i], queue[i+1:]...)
				step(to, node.Event{Kind: node.EventMessage, From: from, Msg: env.Msg})
				return
			}
		}
		t.Fatalf("no message in flight from %v to %v", from, to)
	}
	path := []func(){
		func() { step(2, node.Event{Kind: node.EventApp, Msg: paxos.Propose{Value: paxos.ValueOf(2)}}) },
		func() { deliver(2, 1) }, // Prepare
		func() { deliver(1, 2) }, // Promise, with v1 accepted
		func() { deliver(2, 2) }, // Prepare
		func() { deliver(2, 3) }, // Prepare
		func() { deliver(3, 2) }, // Promise, empty
	}
	for _, f := range path[:secondRound] {
		f()
	}
	var cps []consequence.Checkpoint
	for id := node.ID(1); id <= 4; id++ {
		b, err := cores[id].Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: cores[id].Now()})
	}
	return cps, queue
}

// symmetryViolations is what checkSymmetrySameViolations expects of
// roundOne's snapshot (after secondRound steps): BFS to depth finds,
// with bug1, OneValueChosen violated at depth chosen and OneValueLearned at
// depth learned, keeping plain unique states without symmetry and sym with
// it.
type symmetryViolations struct {
	secondRound     int
	depth           int
	chosen, learned int
	plain, sym      uint64
}

// TestSymmetrySameViolations: from a snapshot in n2's second round
// (roundOne after six steps: n2 holds n1's Promise, which carries v1, and
// n3's empty one, its own empty Promise and its Prepare to n4 are in
// flight), with bug1 BFS to depth 7 finds OneValueChosen violated at depth
// 4 and OneValueLearned at depth 7 (n2 takes the value of the last Promise,
// its own empty one, and gets v2 accepted), with and without symmetry over
// the acceptors n3 and n4, along the same paths, with partial-order
// reduction on or off; symmetry keeps 4,571 states instead of 5,345 (n3
// and n4 are no longer alike, but once n4 has caught up with n3, states
// that differ only in which of the two went further are still merged).
// The paths and the violations' reports replay to violating states. With
// bug1 fixed there is no violation.
//
// The snapshot is the one after round one of
// TestSymmetrySameViolationsAfterRoundOne (symmetry_long_test.go, depth
// 13) six steps further along the same violating path, two past the first
// step that tells n3 from n4: a symmetric search costs about three times a
// plain one per state under the race detector, and from four steps along
// (n3 and n4 still alike, depth 9: 16,389 and 8,603 states) the four
// searches took 14 s of CPU, from six about 6 s. The long test keeps the
// snapshot in which n3 and n4 are alike, where symmetry halves the states.
func TestSymmetrySameViolations(t *testing.T) {
	checkSymmetrySameViolations(t, symmetryViolations{secondRound: 6, depth: 7, chosen: 4, learned: 7, plain: 5345, sym: 4571})
}

// checkSymmetrySameViolations runs BFS to want.depth from roundOne's
// snapshot with bug1 and without, with symmetry and without, and checks
// the violations, their paths, their reports and the unique states.
func checkSymmetrySameViolations(t *testing.T, want symmetryViolations) {
	t.Helper()
	for _, bug := range []bool{true, false} {
		opts := paxos.Options{BugLastPromise: bug, Members: []node.ID{1, 2, 3, 4}, Proposers: []node.ID{1, 2}}
		spec := paxos.NewSpec(opts)
		cps, inFlight := roundOne(t, spec, want.secondRound)
		// (Symmetric searches take no sleep sets, so one run with symmetry
		// stands for both settings of partial-order reduction. The searches
		// run on one worker: TestSymmetryCounts shows that the workers
		// change nothing, and under the race detector two cost about a
		// tenth more CPU.)
		var paths [2]string
		for k, sym := range []bool{false, true} {
			m, err := consequence.NewActorModelFromCheckpoints(spec, cps, inFlight, consequence.ActorOptions{Symmetry: sym})
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(m.SymmetryGroups()); sym && got != "[[n3 n4]]" {
				t.Fatalf("groups %s", got)
			}
			res, err := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(want.depth).MaxStates(0).Workers(1).Run(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !bug {
				if len(res.Violations) != 0 || res.Depth != want.depth {
					t.Fatalf("correct Paxos, symmetry=%v: violations %v, depth %d", sym, res.Violations, res.Depth)
				}
				continue
			}
			wantUnique := map[bool]uint64{false: want.plain, true: want.sym}[sym]
			var got string
			for _, v := range res.Violations {
				got += fmt.Sprintf("%s@%d ", v.Property, v.Depth)
				paths[k] += fmt.Sprint(v.Path)
				end, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, v.Start, v.Path)
				if err != nil || m.Fingerprint(end) != v.Fingerprint {
					t.Fatalf("symmetry=%v: %s does not replay: %v", sym, v.Property, err)
				}
				// A report (what check --json prints and trace replays)
				// replays too: it records the state's own fingerprint.
				rep, err := m.Report(v)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := m.ReplayReport(rep, m.Properties()); err != nil {
					t.Fatalf("symmetry=%v: report of %s: %v", sym, v.Property, err)
				}
			}
			wantViolations := fmt.Sprintf("%s@%d %s@%d ", paxos.OneValueChosen, want.chosen, paxos.OneValueLearned, want.learned)
			if res.Unique != wantUnique || got != wantViolations {
				t.Fatalf("symmetry=%v: %d unique, violations %s; want %d, %s", sym, res.Unique, got, wantUnique, wantViolations)
			}
		}
		if paths[0] != paths[1] {
			t.Fatalf("paths differ:\n%s\n%s", paths[0], paths[1])
		}
	}
}

// TestSymmetryDeclaration: only Options.Proposers makes a group, of the
// members that do not propose; they ignore Propose and declare no calls;
// RenameIDs renames and re-sorts without touching the original.
func TestSymmetryDeclaration(t *testing.T) {
	ids := []node.ID{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		opts paxos.Options
		want string
	}{
		{paxos.Options{Members: ids}, "[]"},
		{paxos.Options{Members: ids, Proposers: []node.ID{2, 1, 2, 9}}, "[[n3 n4 n5]]"},
		{paxos.Options{Members: ids, Proposers: []node.ID{1, 2, 3, 4}}, "[]"},
	} {
		s := paxos.NewSpec(tc.opts).New().(node.Symmetric)
		if got := fmt.Sprint(s.SymmetryGroups(ids)); got != tc.want {
			t.Fatalf("%v: groups %s, want %s", tc.opts, got, tc.want)
		}
	}
	opts := paxos.Options{Members: ids, Proposers: []node.ID{1}}
	if got := opts.String(); got != "members=[n1 n2 n3 n4 n5] retry=2s bugs=[] proposers=[n1]" {
		t.Fatal(got)
	}
	st := paxos.NewSpec(opts).New().(*paxos.State)
	if calls := st.AppCalls(3); len(calls) != 0 {
		t.Fatalf("acceptor declares %v", calls)
	}
	if calls := st.AppCalls(1); len(calls) != 1 {
		t.Fatalf("proposer declares %v", calls)
	}
	st.Promises = []node.ID{2, 3}
	st.Tallies = []paxos.Tally{{Ballot: paxos.Ballot{Round: 1, Node: 1}, Value: "v1", From: []node.ID{3, 4}}}
	swapper := func(a, b node.ID) func(node.ID) node.ID {
		return func(id node.ID) node.ID {
			switch id {
			case a:
				return b
			case b:
				return a
			}
			return id
		}
	}
	rs, changed := st.RenameIDs(swapper(2, 5))
	r := rs.(*paxos.State)
	if !changed || fmt.Sprint(r.Promises, r.Tallies[0].From) != "[n3 n5] [n3 n4]" || fmt.Sprint(st.Promises) != "[n2 n3]" {
		t.Fatalf("renamed %v %v (changed %v), original %v", r.Promises, r.Tallies[0].From, changed, st.Promises)
	}
	if same, changed := st.RenameIDs(swapper(5, 6)); changed || same != node.Service(st) {
		t.Fatal("swapping n5 and n6, which st does not hold, changed it")
	}
	if _, err := consequence.NewActorModel(paxos.NewSpec(paxos.Options{}), consequence.ActorOptions{N: 3, Symmetry: true}); !errors.Is(err, consequence.ErrNoSymmetry) {
		t.Fatalf("symmetry without proposers: %v", err)
	}
}

// BenchmarkSymmetry measures what symmetry reduction costs and saves on
// Paxos among 5 members with n1 proposing (acceptors n2..n5 a group):
// Fingerprint per state along a path (with symmetry it renames and rehashes
// the whole state), and BFS to depth 8, whose states/s count unique states.
//
//	go test ./services/paxos -run '^$' -bench Symmetry
func BenchmarkSymmetry(b *testing.B) {
	for _, sym := range []bool{false, true} {
		m := symModel(b, 5, []node.ID{1}, paxos.Options{}, consequence.Faults{}, sym)
		states := []*consequence.GlobalState{m.Start()}
		for g := m.Start(); len(states) < 12; {
			acts := m.Actions(g, nil)
			if len(acts) == 0 {
				break
			}
			next, ok := m.Next(g, acts[len(acts)/2].Act)
			if !ok {
				b.Fatal("disabled action")
			}
			g = next
			states = append(states, g)
		}
		b.Run(fmt.Sprintf("fingerprint/symmetry=%v", sym), func(b *testing.B) {
			var sink uint64
			i := 0
			for b.Loop() {
				sink += m.Fingerprint(states[i%len(states)]).Lo
				i++
			}
			if sink == 1 {
				b.Log(sink)
			}
		})
		b.Run(fmt.Sprintf("bfs/symmetry=%v", sym), func(b *testing.B) {
			c := consequence.NewChecker(m).Properties(m.Properties()...).MaxDepth(8).Workers(1)
			var res *consequence.Result[*consequence.GlobalState, consequence.ActorAction]
			for b.Loop() {
				var err error
				if res, err = c.Run(b.Context()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Unique), "states")
			b.ReportMetric(float64(res.Unique)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(res.Generated), "ns/generated")
		})
	}
}
