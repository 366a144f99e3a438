package tool

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
)

// smallTimeline replays the first enabled action of each state, n steps,
// on randtree's model of 3 nodes; steps 1..k of it form its "live path"
// and critical step k+1 its dead end, so that every Mdb command has
// something to show.
func smallTimeline(t testing.TB, n, k int) *timeline {
	t.Helper()
	svc, err := testCatalog().lookup("randtree", nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := serviceModel(svc, 3, 1, consequence.Faults{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []consequence.ActionRecord
	g := m.Start()
	for i := 0; i < n; i++ {
		acts := m.Actions(g, nil)
		if len(acts) == 0 {
			break
		}
		a := acts[len(acts)-1].Act
		if i >= k {
			a = acts[0].Act
		}
		r, err := m.Record(a)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
		g, _ = m.Next(g, a)
	}
	tl, err := replayTimeline(m, recs)
	if err != nil {
		t.Fatal(err)
	}
	var live []consequence.ActionRecord
	g = m.Start()
	for i := 0; i <= k; i++ { // the same first k steps, then another
		acts := m.Actions(g, nil)
		a := acts[len(acts)-1].Act
		r, _ := m.Record(a)
		live = append(live, r)
		g, _ = m.Next(g, a)
	}
	if err := tl.withDeadEnd(&report.DeadEnd{Verdict: "C1", CriticalStep: k + 1, LivePath: live}); err != nil {
		t.Fatal(err)
	}
	return tl
}

// FuzzMdbCommand: any command line either parses and runs, or is an
// error; nothing panics, the cursor stays on a step of the path, and the
// followed node is one of the run's.
func FuzzMdbCommand(f *testing.F) {
	for _, s := range []string{"n", "p", "j 3", "j critical", "j end", "j -1", "diff 0 end", "diff 9 x", "node n2", "node all", "node n0",
		"node 18446744073709551615", "s", "l", "live", "graph", "graph dot", "graph svg", "find .", "find (", "find a{1000}{1000}", "help", "q", "", "   ", "\x00", "j 99999999999999999999"} {
		f.Add(s)
	}
	tl := smallTimeline(f, 12, 4)
	f.Fuzz(func(t *testing.T, line string) {
		d := &mdb{tl: tl, w: io.Discard, cur: 2}
		c, err := parseMdbCommand(line)
		if err != nil {
			return
		}
		d.run(c)
		if d.cur < 0 || d.cur > len(tl.steps) || (d.only != node.None && !tl.hasNode(d.only)) {
			t.Fatalf("%q: cursor %d, node %v", line, d.cur, d.only)
		}
	})
}

// TestMdbLiveOnADeadEnd: the live command diffs the dead path against the
// live one after the critical step, field by field, names both steps and
// lists the live path's rest; a timeline without a dead end says so.
func TestMdbLiveOnADeadEnd(t *testing.T) {
	tl := smallTimeline(t, 8, 2)
	var b bytes.Buffer
	d := &mdb{tl: tl, w: &b}
	if err := d.live(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "dead path vs nearest live path after step 3 (- dead, + live):\n  - "+tl.steps[2].text+"\n  + "+tl.live.steps[2].text+"\n") ||
		!strings.Contains(out, "the live path goes on for 0 steps") {
		t.Errorf("live:\n%s", out)
	}
	if !strings.Contains(out, "    - ") || !strings.Contains(out, "    + ") {
		t.Errorf("no field changes:\n%s", out)
	}
	tl.dead, tl.critical = nil, 0
	if err := d.live(); err == nil {
		t.Error("live on a timeline without a dead end")
	}
}

// TestReplayableSuspectFromThePeriphery: a suspect walk that began at a
// periphery state of the bounded search is recorded from the model's
// start — the periphery state's path first — with the critical step
// shifted by that path's length, so the report and the live path replay
// on the model 'trace show' rebuilds. The suspect is the README's RandTree
// walk (seed 7: walkReport's check, run once per test binary, whose
// report replays to the walk's actions), cut after 5 steps into a
// periphery path and a walk.
func TestReplayableSuspectFromThePeriphery(t *testing.T) {
	_, check := walkReport(t)
	svc, err := testCatalog().lookup("randtree", nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	m, err := serviceModel(svc, 5, 7, consequence.Faults{Resets: 1, SilentResets: true})
	if err != nil {
		t.Fatal(err)
	}
	// walkCheckArgs' walk options, but the probes' walks are 60 steps long
	// instead of 100: the critical transition from the periphery state is
	// the same (with a periphery path of 5, 10 or 15 steps, as at 100 and
	// 150 steps), and the search costs 0.9 s of CPU under the race
	// detector at 60, 1.3 s at 150.
	o := consequence.WalkOptions[consequence.ActorAction]{Seed: 7, Walks: 100, DMax: 60,
		Weight: consequence.KindWeights(map[consequence.ActorActionKind]float64{consequence.ActReset: 0.02, consequence.ActTimer: 0.1})}
	l := check.Liveness
	if l == nil || l.Report == nil || l.DeadEnd == nil || l.Verdict != "C1" || l.DeadEnd.CriticalStep != 18 {
		t.Fatalf("the seed-7 walk: %+v", l)
	}
	full, end, err := m.ReplayReport(*l.Report, m.Properties())
	if err != nil {
		t.Fatalf("the seed-7 walk's report: %v", err)
	}
	var failing []consequence.PropertyError
	for _, p := range m.Properties() {
		if p.Kind == node.Liveness {
			if err := p.Check(end); err != nil {
				failing = append(failing, consequence.PropertyError{Property: p.Name, Err: err})
			}
		}
	}
	const cut = 5
	g := m.Start()
	for _, a := range full[:cut] {
		g, _ = m.Next(g, a.Act)
	}
	periphery := []consequence.PathState[*consequence.GlobalState, consequence.ActorAction]{{Start: m.Start(), Path: full[:cut], State: g}}
	walk := consequence.Walk[*consequence.GlobalState, consequence.ActorAction]{Start: g, Path: full[cut:], State: end, Failing: failing}
	crit, err := consequence.FindCriticalTransition(context.Background(), m, m.Properties(), g, walk.Path, o)
	if err != nil || crit.Verdict != consequence.C1 {
		t.Fatalf("critical transition from the periphery state: %v %+v", err, crit)
	}
	out := &livenessOutput{}
	if err := replayableSuspect(m, out, &consequence.LivenessResult[*consequence.GlobalState, consequence.ActorAction]{Suspect: &walk, Critical: crit}, periphery); err != nil {
		t.Fatal(err)
	}
	if len(out.Report.Path) != len(full) || out.DeadEnd.CriticalStep != cut+crit.Step+1 || out.DeadEnd.CriticalStep != 18 {
		t.Fatalf("report of %d steps, critical step %d (walk's %d); want %d and 18", len(out.Report.Path), out.DeadEnd.CriticalStep, crit.Step, len(full))
	}
	if _, _, err := m.ReplayReport(*out.Report, m.Properties()); err != nil {
		t.Fatalf("the report does not replay from the start: %v", err)
	}
	tl, err := replayTimeline(m, out.Report.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := tl.withDeadEnd(out.DeadEnd); err != nil {
		t.Fatalf("the live path does not replay from the start: %v", err)
	}
	for i := 0; i < out.DeadEnd.CriticalStep-1; i++ {
		if tl.live.steps[i].text != tl.steps[i].text {
			t.Fatalf("live path step %d %q, suspect's %q", i+1, tl.live.steps[i].text, tl.steps[i].text)
		}
	}
}
