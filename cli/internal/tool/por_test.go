package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestPartialOrderReduction pins, for RandTree, Chord, Paxos, Pastry and
// Bullet′ searches, what partial-order reduction (check's default --por)
// changes: the transitions taken, and nothing else — the same unique
// states, the same per-depth counts and the same violations (property and
// depth). (2PC's figures are pinned in package twophase.) The RandTree,
// Chord and Paxos searches are two levels shallower than
// TestPartialOrderReductionLong's
// (cli_long_test.go; a level holds 2.5 to 3 times the states above it),
// and three Chord nodes with a reset and a break go to depth 5; the
// search cut by its state budget is 1,000 states of RandTree with a
// silent reset and a connection break, which end 62 states into depth 6,
// after its first violation (depth 5), where the long test's 30,000
// states with a silent reset alone find their first violation after
// 22,000 states. (The long test's searches took 6.4 s of CPU under the
// race detector; this table took 3.5 s with searches a level deeper and
// 5,000 states of the cut one, and takes about 1.2 s.)
func TestPartialOrderReduction(t *testing.T) {
	checkPOR(t, []porCase{
		{"--service randtree --nodes 5 --max-depth 5", 732, 1559, 1023, ""},
		{"--service randtree --nodes 3 --resets 1 --silent --breaks 1 --max-states 1000", 1000, 2153, 2077, "RootNotChildOrSibling@5"},
		{"--service chord --nodes 5 --max-depth 5", 701, 1469, 979, ""},
		{"--service chord --nodes 3 --resets 1 --breaks 1 --max-depth 5", 1010, 2085, 2042, ""},
		{"--service paxos --nodes 3 --max-depth 3", 237, 382, 347, ""},
		{"--service pastry --nodes 3 --max-depth 7", 623, 1051, 1013, ""},
		{"--service bullet --nodes 2 --refusals 1 --max-depth 10", 391, 590, 558, "FileMapViewConsistent@10"},
	})
}

// porCase is a search run with and without partial-order reduction: its
// check flags, its pinned unique states and transitions without and with
// reduction (unique 0: not pinned), and its violations.
type porCase struct {
	args               string
	unique             uint64
	generated, withPOR uint64
	violations         string
}

// checkPOR runs each case's search with and without reduction and checks
// what changes.
func checkPOR(t *testing.T, cases []porCase) {
	for _, tc := range cases {
		t.Run(tc.args, func(t *testing.T) {
			full := runCheckJSON(t, tc.args+" --por=false")
			por := runCheckJSON(t, tc.args)
			if por.Unique != full.Unique || !slices.Equal(por.DepthCounts, full.DepthCounts) {
				t.Fatalf("with POR %d states %v, without %d %v", por.Unique, por.DepthCounts, full.Unique, full.DepthCounts)
			}
			if got, want := violationList(por), violationList(full); got != want || got != tc.violations {
				t.Fatalf("violations with POR %q, without %q, pinned %q", got, want, tc.violations)
			}
			if full.Slept != 0 || por.Slept == 0 || por.Generated+por.Slept < full.Generated {
				t.Errorf("generated %d + slept %d with POR, %d + %d without", por.Generated, por.Slept, full.Generated, full.Slept)
			}
			if tc.unique != 0 && (full.Unique != tc.unique || full.Generated != tc.generated || por.Generated != tc.withPOR) {
				t.Errorf("%d states, %d generated without POR, %d with; pinned %d, %d, %d",
					full.Unique, full.Generated, por.Generated, tc.unique, tc.generated, tc.withPOR)
			}
			t.Logf("%d states: %d transitions without POR, %d with (%.2fx fewer)", full.Unique, full.Generated, por.Generated,
				float64(full.Generated)/float64(por.Generated))
		})
	}
}

func runCheckJSON(t *testing.T, args string) checkOutput {
	t.Helper()
	argv := append([]string{"check", "--json", "--budget", "0", "--workers", "2"}, strings.Fields(args)...)
	code, stdout, stderr := runCLI(argv...)
	if code != exitOK && code != exitFailure {
		t.Fatalf("check %s: exit %d: %s", args, code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("check %s: %v\n%s", args, err, stdout)
	}
	return out
}

func violationList(o checkOutput) string {
	var vs []string
	for _, v := range o.Violations {
		vs = append(vs, fmt.Sprintf("%s@%d", v.Property, v.Depth))
	}
	slices.Sort(vs)
	return strings.Join(vs, ",")
}
