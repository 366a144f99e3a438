package main

import (
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

var testLimits = limits{RSS: 100 << 20, Goroutines: 100, FDs: 100, FailStreak: 3, MaxCN: 1 << 40}

// A node whose gathers fail while none completes, for FailStreak samples in
// a row, fails the run; a completed gather in between resets the streak.
func TestJudgeFailedGatherStreak(t *testing.T) {
	failing := func(done, failed int64) []sample { return []sample{{OK: true, Gathers: done, GathersFailed: failed}} }
	healthy := [][]sample{failing(1, 0), failing(1, 1), failing(1, 2), failing(2, 3), failing(2, 4)}
	if pk, why := judge(healthy, testLimits); len(why) != 0 || pk.Streak != 2 {
		t.Fatalf("streak %d, failures %v; want 2 and none", pk.Streak, why)
	}
	stuck := append(healthy, failing(2, 5), failing(2, 6))
	if pk, why := judge(stuck, testLimits); len(why) != 1 || pk.Streak != 3 || !strings.Contains(why[0], "failed 3 samples in a row") {
		t.Fatalf("streak %d, failures %v; want 3 and one", pk.Streak, why)
	}
}

// Each bound fails the run once exceeded, and names the figure.
func TestJudgeBounds(t *testing.T) {
	over := [][]sample{{{OK: true, RSS: 200 << 20, Goroutines: 101, FDs: 101, CN: 1 << 62}}}
	_, why := judge(over, testLimits)
	for i, want := range []string{"resident memory reached 200 MiB", "goroutines reached 101", "open files reached 101", "poisoned"} {
		if i >= len(why) || !strings.Contains(why[i], want) {
			t.Fatalf("failures %q, want %q at %d", why, want, i)
		}
	}
}

// A tree is whole when RandTree's liveness properties hold on every node's
// last state; a node that did not answer, or a second root, breaks it.
func TestWholeTree(t *testing.T) {
	root := &randtree.State{Status: randtree.StatusJoined, Root: 1, Children: []node.ID{2}}
	child := &randtree.State{Status: randtree.StatusJoined, Root: 1, Parent: 1}
	if why := whole([]sample{{State: root}, {State: child}}); len(why) != 0 {
		t.Fatalf("a whole tree judged broken: %v", why)
	}
	if why := whole([]sample{{State: root}, {}}); len(why) == 0 || !strings.Contains(why[0], "n2 did not answer") {
		t.Fatalf("a silent node not reported: %v", why)
	}
	lone := &randtree.State{Status: randtree.StatusJoined, Root: 2}
	if why := whole([]sample{{State: root}, {State: lone}}); len(why) == 0 {
		t.Fatal("two roots judged whole")
	}
}

// The nodes bound steering's holds by default (10 s for a filter's, a
// minute for a veto's); 0 leaves the library's default (no flag).
func TestNodeArgsBoundHolds(t *testing.T) {
	c, err := parse(nil, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Join(nodeArgs(c), " ")
	if !strings.Contains(args, "--filter-hold 10s") || !strings.Contains(args, "--veto-hold 1m0s") {
		t.Fatalf("node args %q: want --filter-hold 10s and --veto-hold 1m0s", args)
	}
	if c, err = parse([]string{"--filter-hold", "0", "--veto-hold", "0"}, &strings.Builder{}); err != nil {
		t.Fatal(err)
	}
	if args := strings.Join(nodeArgs(c), " "); strings.Contains(args, "hold") {
		t.Fatalf("node args %q with the library's default holds", args)
	}
	if _, err := parse([]string{"--veto-hold", "-1s"}, &strings.Builder{}); err == nil {
		t.Fatal("--veto-hold -1s accepted")
	}
}
