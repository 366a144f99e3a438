//go:build long

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The short sample (one mutant of every service, seed 1) as a regression
// test: gen builds the corpus's runner, which scores the short sample;
// the counts in testdata/short_floor.json may not fall (killed, caught
// before they bite, found offline, predicted in time, prevented, latent
// bugs confirmed) or rise (false alarms). Every run is a pure
// function of the corpus and the seed, so a change in the counts is a
// change in the code: raise the floor when they improve.
func TestShortSampleFloor(t *testing.T) {
	const seed = "1"
	out := t.TempDir()
	gen := exec.Command("go", "run", ".", "gen", "--root", "../..", "--out", out)
	if msg, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("gen: %v\n%s", err, msg)
	}
	run := exec.Command(filepath.Join(out, "run"), "run", "--manifest", filepath.Join(out, "manifest.json"),
		"--sample", "short", "--seeds", seed, "--jobs", "1", "--quiet")
	var stdout bytes.Buffer
	run.Stdout, run.Stderr = &stdout, os.Stderr
	if err := run.Run(); err != nil {
		t.Fatalf("seed=%s: run: %v\n%s", seed, err, stdout.String())
	}
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var got summary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
		t.Fatalf("seed=%s: last line is not the summary: %v\n%s", seed, err, stdout.String())
	}
	b, err := os.ReadFile("testdata/short_floor.json")
	if err != nil {
		t.Fatal(err)
	}
	var floor summary
	if err := json.Unmarshal(b, &floor); err != nil {
		t.Fatal(err)
	}
	t.Logf("seed=%s: %s", seed, lines[len(lines)-1])
	if got.Killed < floor.Killed || got.PredictedInTime < floor.PredictedInTime || got.Prevented < floor.Prevented ||
		got.CaughtBeforeBite < floor.CaughtBeforeBite || got.FoundOffline < floor.FoundOffline || got.LatentConfirmed < floor.LatentConfirmed ||
		got.FalseAlarms > floor.FalseAlarms || got.OriginalFalseAlarms > floor.OriginalFalseAlarms {
		t.Fatalf("seed=%s: the short sample fell below its floor:\n got   %+v\n floor %+v\n%s", seed, got, floor, stdout.String())
	}
}
