//go:build long

package tool

// The cli tests at the sizes the quick suite used to run them: each is
// long under the race detector (CPU figures measured under -race, on the
// quick tests' old configuration), and `make test` runs a smaller test of
// the same behaviour with the same assertions, named beside each. They run
// with `make test-long` (go test -tags long, without the race detector).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestEmulateDeepOnlineDebuggingChordLong is deep online debugging on
// Chord with --mode debug's own budget, 50,000 states per round, and the
// default seed 1: 41 s of CPU under -race (3 runs, each 2 rounds of
// 50,000 states). Quick: TestEmulateDeepOnlineDebuggingChord (2,000
// states, seed 158, 7.5 s).
func TestEmulateDeepOnlineDebuggingChordLong(t *testing.T) {
	args := []string{"emulate", "--service", "chord", "--nodes", "10", "--duration", "20s", "--churn", "0", "--mode", "debug", "--walks", "0", "--json"}
	dir := t.TempDir()
	code, stdout, stderr := runCLI(append(slices.Clone(args), "--reports", dir)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkChordDeepOnlineDebugging(t, args, stdout, dir, true)
}

// pastryBugArgsLong reproduces MaceMC's Pastry bug with walks of 1,000
// steps: 12 s of CPU under -race. Quick: TestCheckReproducesMaceMCPastryBug
// (100 steps, --dinit 50).
var pastryBugArgsLong = []string{"check", "--service", "pastry", "--nodes", "3", "--strategy", "walk", "--budget", "0",
	"--resets", "1", "--walks", "100", "--dinit", "300", "--dmax", "1000", "--weights", "timer=0.02,reset=0.05",
	"--seed", "1", "--json"}

func TestCheckReproducesMaceMCPastryBugLong(t *testing.T) {
	checkPastryBug(t, pastryBugArgsLong)
}

// TestCheckWeightsAutoFindsPastryDeadEndLong checks --weights auto on
// Pastry with the walk strategy's default 500 steps (3.4 s of CPU under
// -race). Quick: TestCheckWeightsAutoFindsPastryDeadEnd (200 steps).
func TestCheckWeightsAutoFindsPastryDeadEndLong(t *testing.T) {
	checkWeightsAutoFindsPastryDeadEnd(t)
}

// TestCheckReproducesMaceMCRandTreeBugLong reproduces MaceMC's RandTree
// bug on seed 11 with walks of the default 500 steps: 8.4 s of CPU under
// -race. Quick: TestCheckReproducesMaceMCRandTreeBug (seed 7's walk check
// of 100 steps, which the trace tests share).
func TestCheckReproducesMaceMCRandTreeBugLong(t *testing.T) {
	args := randTreeBugArgs("500")
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	checkRandTreeBug(t, out.Liveness, "n5", "n3", "n4", args)
}

// TestCheckWalkReportIsReplayableLong runs the README's walk check, with
// the default 500 steps a walk (6.3 s of CPU under -race), and checks its
// report as TestCheckWalkReportIsReplayable checks the quick check's
// (walkCheckArgs, 100 steps).
func TestCheckWalkReportIsReplayableLong(t *testing.T) {
	args := slices.DeleteFunc(slices.Clone(walkCheckArgs), func(a string) bool { return a == "--dmax" || a == "100" })
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "walk.json")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	checkWalkReport(t, file, out, 500, "n3 deliver randtree.Keepalive from n5")
}

// TestActorCommuteLong checks the independence claims on 20 walks of 40
// steps per service and fault set (under -race, 6 walks took 14 s of
// CPU). Quick: TestActorCommute (the first 20 steps of the first of these
// walks).
func TestActorCommuteLong(t *testing.T) {
	testActorCommute(t, 20, 40)
}

// TestPartialOrderReductionLong pins partial-order reduction on searches
// a level deeper than TestPartialOrderReduction's, and on 30,000 states of
// RandTree with a silent reset, cut by the state budget, whose first
// violation comes after 22,000 states (6.4 s of CPU under -race for the
// whole table, with the cases the quick test shares).
func TestPartialOrderReductionLong(t *testing.T) {
	checkPOR(t, []porCase{
		{"--service randtree --nodes 5 --max-depth 7", 5382, 12555, 8407, ""},
		{"--service randtree --nodes 3 --resets 1 --silent --max-states 30000", 30000, 62914, 55945, "RootHasNoSiblings@10"},
		{"--service chord --nodes 5 --max-depth 7", 4551, 10422, 7370, ""},
		{"--service paxos --nodes 3 --max-depth 5", 5271, 11001, 9558, ""},
	})
}

// TestCheckChordRingLivenessLong checks Chord's ring liveness with the
// default ten suspects, 300 deep walks and 300 faulty ones (4.2 s of CPU
// under -race). Quick: TestCheckChordRingLiveness (3 suspects, 30 and
// 50 walks).
func TestCheckChordRingLivenessLong(t *testing.T) {
	checkChordRingLiveness(t, 10, 300, 300)
}

// TestCheckReproducesMaceMCTransportBugLong is docs/check.md's MaceTransport
// reproduction with its 5,000 walks (the corrected service's took 1.7 s
// of CPU under -race). Quick: TestCheckReproducesMaceMCTransportBug (100
// walks of 60 steps).
func TestCheckReproducesMaceMCTransportBugLong(t *testing.T) {
	checkMaceTransportBug(t, 5000, 100)
}
