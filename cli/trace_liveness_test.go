package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// printLiveDiff, trace show's MaceMC comparison: at the critical step it
// names the dead path's event and the live path's, and prints the node
// states after each where they differ; a live path that ends right
// before the critical step says the state there is live; a live path too
// short, or one that does not replay, is an error.
func TestPrintLiveDiff(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	snap, err := paper.Figure2Snapshot(spec)
	if err != nil {
		t.Fatal(err)
	}
	m, err := steering.SnapshotModel(spec, snap, paper.Figure2Workload, consequence.Faults{Resets: 1, SilentResets: true, StaleConnections: true})
	if err != nil {
		t.Fatal(err)
	}
	rec := func(steps ...string) []consequence.ActionRecord {
		t.Helper()
		var out []consequence.ActionRecord
		g := m.Start()
		for _, step := range steps {
			found := false
			for _, a := range m.Actions(g, nil) {
				if a.Act.String() == step {
					r, err := m.Record(a.Act)
					if err != nil {
						t.Fatal(err)
					}
					out = append(out, r)
					g, _ = m.Next(g, a.Act)
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("step %q not enabled", step)
			}
		}
		return out
	}
	dead := rec("n13 reset silent", "n13 app randtree.JoinOverlay")
	live := rec("n13 reset silent", "n9 timer recovery")
	var b bytes.Buffer
	if err := printLiveDiff(&b, m, dead, &report.DeadEnd{Verdict: "C1", CriticalStep: 2, LivePath: live}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"the same first 1 steps, then at step 2", "dead: n13 app randtree.JoinOverlay", "live: n9 timer recovery", "    dead n13: joining", "    live n13: init"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	b.Reset()
	if err := printLiveDiff(&b, m, dead, &report.DeadEnd{Verdict: "C1", CriticalStep: 2, LivePath: live[:1]}); err != nil || !strings.Contains(b.String(), "is live") {
		t.Errorf("live path ending before the critical step: %v\n%s", err, b.String())
	}
	if err := printLiveDiff(&b, m, dead, &report.DeadEnd{Verdict: "C1", CriticalStep: 2}); err == nil {
		t.Error("no error for a live path shorter than the steps before the critical one")
	}
	bad := append(rec("n13 reset silent"), dead[1])
	bad[0].Node = 99
	if err := printLiveDiff(&b, m, dead, &report.DeadEnd{Verdict: "C1", CriticalStep: 2, LivePath: bad}); err == nil {
		t.Error("no error for a live path that does not replay")
	}
}
