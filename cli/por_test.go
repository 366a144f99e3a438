package cli

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
// depth). (2PC's figures are pinned in package twophase.)
func TestPartialOrderReduction(t *testing.T) {
	cases := []struct {
		args               string
		unique             uint64
		generated, withPOR uint64
		violations         string
	}{
		{"--service randtree --nodes 5 --max-depth 7", 5382, 12555, 8407, ""},
		{"--service randtree --nodes 3 --resets 1 --silent --max-states 30000", 30000, 62914, 55945, "RootHasNoSiblings@10"},
		{"--service chord --nodes 5 --max-depth 7", 4551, 10422, 7370, ""},
		{"--service chord --nodes 3 --resets 1 --breaks 1 --max-depth 6", 2833, 6339, 6172, ""},
		{"--service paxos --nodes 3 --max-depth 5", 5271, 11001, 9558, ""},
		{"--service pastry --nodes 3 --max-depth 7", 623, 1051, 1013, ""},
		{"--service bullet --nodes 2 --refusals 1 --max-depth 10", 391, 590, 558, "FileMapViewConsistent@10"},
	}
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
