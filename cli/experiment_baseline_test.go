package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/services/chord"
)

// macemc-baseline runs deep online debugging and then BFS from 5 nodes,
// and accounts for every violation found online.
func TestExperimentMaceMCBaseline(t *testing.T) {
	code, stdout, stderr := runCLI("experiment", "macemc-baseline", "--service", "chord", "--nodes", "10", "--duration", "20s",
		"--churn", "0", "--budget", "500ms", "--bfs-states", "20000", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out baselineOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Experiment != "macemc-baseline" || out.Online.Nodes != 10 || len(out.Online.Predictions) == 0 {
		t.Fatalf("online half: %+v", out.Online)
	}
	if len(out.Violations) != len(out.Online.Predictions) || out.Violations[0].Property != chord.PredSelfImpliesSuccSelf || out.Violations[0].Shape == "" {
		t.Fatalf("violations %+v", out.Violations)
	}
	off := out.Offline
	if off.Nodes != 5 || off.BudgetSeconds != 0.5 || off.Unique == 0 || off.Unique > 20000 || off.Depth == 0 || off.Stop == "" || !strings.Contains(off.Faults, "breaks=1") {
		t.Fatalf("offline half: %+v", off)
	}
	for _, v := range out.Violations {
		if v.FoundEnding && !v.FoundProperty {
			t.Errorf("an ending found without its property: %+v", v)
		}
	}
}

func TestExperimentMaceMCBaselineBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"experiment", "macemc-baseline"}, "--service must be chord or randtree"},
		{[]string{"experiment", "macemc-baseline", "--service", "paxos"}, "--service must be chord or randtree"},
		{[]string{"experiment", "macemc-baseline", "--service", "chord", "--mode", "steer"}, "--mode must be debug"},
		{[]string{"experiment", "macemc-baseline", "--service", "chord", "--bfs-nodes", "0"}, "--bfs-nodes must be in 1..64"},
	} {
		expectUsageError(t, c.args, c.want)
	}
}
