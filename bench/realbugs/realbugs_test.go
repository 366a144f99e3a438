package main

import (
	"context"
	"errors"
	"os"
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
	out.Predictions = append(out.Predictions,
		struct {
			Property        string  `json:"property"`
			Kind            string  `json:"kind"`
			FirstPredictedS float64 `json:"first_predicted_s"`
		}{Property: "LogMatching", FirstPredictedS: 1},
		struct {
			Property        string  `json:"property"`
			Kind            string  `json:"kind"`
			FirstPredictedS float64 `json:"first_predicted_s"`
		}{Property: "StateMachineSafety", FirstPredictedS: 30})
	var r EmulateResult
	judge(&r, out)
	if !slices.Equal(r.Alarms, []string{"StateMachineSafety", "WritesApplied"}) || r.First != 40*time.Second || r.Predicted != 30*time.Second {
		t.Errorf("judged %+v", r)
	}
}

// TestFlags: bad seeds, unknown bugs and impossible plans are usage
// errors; --list prints the corpus.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{{"--seeds", "3-1"}, {"--seeds", "x"}, {"--bugs", "nope"}, {"--walks", "0"}, {"--duration", "0s"}, {"extra"}} {
		if err := mainErr(context.Background(), args, os.Stdout, os.Stderr); !errors.Is(err, errUsage) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if s, err := parseSeeds("1-3,7"); err != nil || !slices.Equal(s, []uint64{1, 2, 3, 7}) {
		t.Errorf("parseSeeds: %v %v", s, err)
	}
}
