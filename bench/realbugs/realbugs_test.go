package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// testWorkspace locates the library's module for the repository two
// levels up.
func testWorkspace(t *testing.T) *workspace {
	t.Helper()
	w, err := newWorkspace(context.Background(), "../..", t.TempDir())
	if err != nil {
		t.Skipf("the module is not available: %v", err)
	}
	return w
}

// TestEveryPatchApplies: each bug's patch applies to a copy of the
// module go.mod requires, and the copy differs from the original.
func TestEveryPatchApplies(t *testing.T) {
	w := testWorkspace(t)
	ctx := context.Background()
	for _, b := range Corpus {
		p, err := b.Patch()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.copyModule(ctx, b.Name, p); err != nil {
			t.Errorf("%s: %v", b.Name, err)
		}
	}
	if _, err := w.copyModule(ctx, "twice", append(must(Corpus[0].Patch()), must(Corpus[0].Patch())...)); err == nil {
		t.Error("a patch applied twice over was accepted")
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// TestConfirm: the byte-counter leak's regression test fails on the
// patched copy and passes on the original; a test the patch does not
// break does not confirm it.
func TestConfirm(t *testing.T) {
	w := testWorkspace(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	i := slices.IndexFunc(Corpus, func(b Bug) bool { return b.Name == "inflights-bytes-leak" })
	b := Corpus[i]
	patched, err := w.copyModule(ctx, b.Name, must(b.Patch()))
	if err != nil {
		t.Fatal(err)
	}
	original, err := w.copyModule(ctx, "original", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := confirm(ctx, patched, original, b); err != nil {
		t.Fatal(err)
	}
	b.Test = "TestInflightsFull"
	if err := confirm(ctx, patched, original, b); !errors.Is(err, ErrNotConfirmed) {
		t.Errorf("a test the patch leaves passing: %v, want ErrNotConfirmed", err)
	}
}

// TestCorpusIsWellFormed: every entry names a patch, a kind, a test and
// a configuration of examples/etcdraft, once.
func TestCorpusIsWellFormed(t *testing.T) {
	if len(Corpus) < 8 {
		t.Errorf("%d bugs, want at least 8", len(Corpus))
	}
	seen := map[string]bool{}
	for _, b := range Corpus {
		if seen[b.Name] || !slices.Contains([]string{"safety", "liveness", "efficiency"}, b.Kind) ||
			b.Test == "" || b.Fix == "" || !slices.Contains([]string{"etcdkv-busy", "etcdkv-small"}, b.Service) {
			t.Errorf("bad entry %+v", b)
		}
		seen[b.Name] = true
		if _, err := b.Patch(); err != nil {
			t.Error(err)
		}
	}
	entries, err := patches.ReadDir("patches")
	if err != nil || len(entries) != len(Corpus) {
		t.Errorf("%d patch files for %d bugs (%v)", len(entries), len(Corpus), err)
	}
}

// TestJudge: an emulated run's alarms are its violated safety
// properties, bounded outages, failing histories and liveness, at the
// earliest of their times; a prediction counts only for a property that
// raised an alarm.
func TestJudge(t *testing.T) {
	var out emulateOut
	out.Result.VirtualDuration = 5 * time.Minute
	out.Result.Safety = []emulation.SafetyResult{{Name: "ElectionSafety"}, {Name: "StateMachineSafety", ViolatedStates: 3, FirstViolation: 90 * time.Second}}
	out.Result.Timed = []emulation.TimedResult{{Name: "WritesApplied", Outages: 1, Longest: emulation.Outage{Start: 40 * time.Second}}}
	out.Result.History = []emulation.HistoryResult{{Name: "Linearizable", Holds: true}}
	out.FirstRoundS = 12.5
	out.Predictions = append(out.Predictions,
		predictionOut{Property: "LogMatching", FirstPredictedS: 1, Confirmed: &emulation.PathJudgement{Verdict: emulation.PathModelOnly}},
		predictionOut{Property: "StateMachineSafety", FirstPredictedS: 30})
	var r EmulateResult
	judge(&r, out)
	if !slices.Equal(r.Alarms, []string{"StateMachineSafety", "WritesApplied"}) || r.First != 40*time.Second || r.Predicted != 30*time.Second {
		t.Errorf("judged %+v", r)
	}
	if r.FirstRound != 12500*time.Millisecond || !slices.Equal(r.Verdicts, []Verdict{{"LogMatching", emulation.PathModelOnly}}) {
		t.Errorf("first round %v, verdicts %+v", r.FirstRound, r.Verdicts)
	}
}

// TestFlags: bad seeds, unknown bugs and impossible plans are usage
// errors; --list prints the corpus.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"--seeds", "3-1"}, {"--seeds", "x"}, {"--bugs", "nope"}, {"--walks", "0"}, {"--duration", "0s"}, {"--online-duration", "30s"}, {"--duration", "40s"}, {"extra"}} {
		if err := mainErr(context.Background(), args, os.Stdout, os.Stderr); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if s, err := parseSeeds("1-3,7"); err != nil || !slices.Equal(s, []uint64{1, 2, 3, 7}) {
		t.Errorf("parseSeeds: %v %v", s, err)
	}
}

// TestTotalsColumns: the board's toolchain columns, as the mutation
// corpus's: a bug that bites before the first round is at start (caught
// only offline), one predicted before a later bite is caught; a survivor
// check finds and the emulator confirms is latent confirmed, its watch
// run's prediction of that property real, a prediction the control's
// watch run makes too not its own, another a false alarm by its verdict.
func TestTotalsColumns(t *testing.T) {
	watch := func(vs ...Verdict) *EmulateResult { return &EmulateResult{Verdicts: vs} }
	bit := []EmulateResult{{Seed: 1, Alarms: []string{"LeaderWithin"}, First: 20 * time.Second}}
	b := Board{
		Control: []BugResult{{Bug: Bug{Name: "control", Service: "s"}, Confirmed: true, Emulate: []EmulateResult{{Seed: 1}},
			Watch: watch(Verdict{"Shared", emulation.PathModelOnly})}},
		Bugs: []BugResult{
			{Bug: Bug{Name: "early", Service: "s"}, Confirmed: true, Check: CheckResult{Stage: "bfs", Property: "P", Confirmed: emulation.PathReal},
				Emulate: bit, Online: []OnlineResult{{Debug: EmulateResult{FirstRound: 30 * time.Second}}}},
			{Bug: Bug{Name: "later", Service: "s"}, Confirmed: true, Emulate: bit,
				Online: []OnlineResult{{Debug: EmulateResult{FirstRound: 5 * time.Second}, Lead: 10 * time.Second, Prevented: true}}},
			{Bug: Bug{Name: "latent", Service: "s"}, Confirmed: true, Check: CheckResult{Stage: "walk", Property: "Q", Confirmed: emulation.PathReal},
				Emulate: []EmulateResult{{Seed: 1}},
				Watch:   watch(Verdict{"Q", emulation.PathModelOnly}, Verdict{"Shared", emulation.PathWrong}, Verdict{"R", emulation.PathWrong})},
		},
	}
	got := b.total()
	want := Totals{Bugs: 3, Confirmed: 3, Found: 3, FoundByCheck: 2, FoundByEmulate: 2, Killed: 2, AtStart: 1, FoundOffline: 1,
		CaughtBeforeBite: 2, OnlineRuns: 2, PredictedInTime: 1, Prevented: 1, Latent: 1, LatentConfirmed: 1,
		FalseAlarms: 1, FalseAlarmsReal: 1, FalseAlarmsWrong: 1, ControlRuns: 2, OriginalFalseAlarms: 1}
	if got != want {
		t.Errorf("totals\n%+v, want\n%+v", got, want)
	}
	if c := b.Bugs[2].class(b.control("s")); c != "latent confirmed" {
		t.Errorf("class %q", c)
	}
	if a := b.Bugs[2].watchAlarms(b.control("s")); a != "Q latent,R wrong" {
		t.Errorf("watch alarms %q", a)
	}
}

// TestRunEmulateRecordsAFailedRun: a run that stops with an error of the
// toolchain (exit status 1) is recorded, not fatal to the board, and
// counted apart; a usage error (exit status 2) stays fatal; a failed
// steer run never counts as prevented.
func TestRunEmulateRecordsAFailedRun(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		return path
	}
	failing := script("failing", `echo "emulate: replay diverged at input 14" >&2; exit 1`)
	res, err := runEmulate(context.Background(), failing, nil, 3)
	if err != nil || res.Failed != "emulate: replay diverged at input 14" || len(res.Alarms) != 0 {
		t.Fatalf("runEmulate(failing) = %+v, %v; want the failure recorded", res, err)
	}
	usage := script("usage", `echo "emulate: --duration too short" >&2; exit 2`)
	if _, err := runEmulate(context.Background(), usage, nil, 3); err == nil {
		t.Fatal("runEmulate(usage error) = nil error, want it fatal")
	}
	off := EmulateResult{Seed: 1, Alarms: []string{"safety:P"}, First: time.Second}
	o, err := runOnline(context.Background(), failing, Bug{Name: "b", Service: "s"}, off, Plan{OnlineDuration: time.Minute})
	if err != nil || o.Prevented || o.Debug.Failed == "" || o.Steer.Failed == "" {
		t.Fatalf("runOnline(failing) = %+v, %v; want both runs failed and nothing prevented", o, err)
	}
	r := BugResult{Bug: Bug{Name: "b"}, Confirmed: true, Emulate: []EmulateResult{off}, Online: []OnlineResult{o}, Watch: &EmulateResult{Failed: "x"}}
	if got := r.failedRuns(); got != 3 {
		t.Errorf("failedRuns = %d, want 3 (debug, steer, watch)", got)
	}
	b := Board{Bugs: []BugResult{r}}
	if tot := b.total(); tot.RunsFailed != 3 || tot.Prevented != 0 {
		t.Errorf("totals: runs_failed %d prevented %d, want 3 and 0", tot.RunsFailed, tot.Prevented)
	}
}
