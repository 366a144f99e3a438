package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// runElect runs the command line in process and returns its exit status and
// output.
func runElect(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := program().Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// walkArgs is a walk check of three nodes with rare timers and faults.
var walkArgs = []string{"check", "--nodes", "3", "--strategy", "walk", "--walks", "100", "--dmax", "120",
	"--weights", "timer=0.05,reset=0.02,break=0.02,crash=0.02,partition=0.02", "--json"}

// checkWalk runs a walk check with extra flags and returns its verdict and
// critical action ("" without a suspect).
func checkWalk(t *testing.T, extra ...string) (string, string, []byte) {
	t.Helper()
	code, out, errOut := runElect(t, append(append([]string(nil), walkArgs...), extra...)...)
	if code != 0 {
		t.Fatalf("check %v: exit %d: %s", extra, code, errOut)
	}
	var o struct {
		Liveness struct {
			Verdict string `json:"verdict"`
			Action  string `json:"critical_action"`
		} `json:"liveness"`
	}
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	return o.Liveness.Verdict, o.Liveness.Action, []byte(out)
}

// TestCheckFindsTheStall: check with the older faults (--resets,
// --breaks) finds nothing; --crashes finds the stall (critical transition
// the crash), which trace show replays; --partitions with isolations too;
// --fix all finds nothing.
func TestCheckFindsTheStall(t *testing.T) {
	if v, _, _ := checkWalk(t, "--resets", "1", "--breaks", "1"); v != "" {
		t.Errorf("--resets 1 --breaks 1: verdict %s", v)
	}
	v, act, rep := checkWalk(t, "--crashes", "1")
	if v != "C1" || !strings.HasSuffix(act, " crash") {
		t.Fatalf("--crashes 1: verdict %q at %q", v, act)
	}
	file := filepath.Join(t.TempDir(), "stall.json")
	if err := os.WriteFile(file, rep, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runElect(t, "trace", "show", file)
	if code != 0 || !strings.Contains(out, "crash   <- critical transition") {
		t.Errorf("trace show: exit %d: %s%s", code, errOut, out)
	}
	if v, act, _ := checkWalk(t, "--partitions", "1", "--partition-kinds", "isolate"); v != "C1" || !strings.Contains(act, "partition isolate") {
		t.Errorf("--partitions 1 --partition-kinds isolate: verdict %q at %q", v, act)
	}
	if v, _, _ := checkWalk(t, "--crashes", "1", "--fix", "all"); v != "" {
		t.Errorf("--crashes 1 --fix all: verdict %s", v)
	}
}

// TestEmulateScheduleFindsTheStall: emulate with a fault schedule that
// crashes the leader (n3 at 20s, seed 1) for good ends without a leader;
// churn whose nodes come back (the older model) and the twin end with one.
// A bad schedule is a usage error naming its line.
func TestEmulateScheduleFindsTheStall(t *testing.T) {
	dir := t.TempDir()
	sched := filepath.Join(dir, "faults.txt")
	if err := os.WriteFile(sched, []byte("# the leader crashes for good\nat 20s crash 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	holds := func(extra ...string) bool {
		t.Helper()
		args := append([]string{"emulate", "--nodes", "3", "--duration", "2m", "--churn", "0", "--seed", "1", "--json"}, extra...)
		code, out, errOut := runElect(t, args...)
		if code != 0 {
			t.Fatalf("emulate %v: exit %d: %s", extra, code, errOut)
		}
		var o struct {
			Result struct {
				Liveness []struct {
					Holds bool `json:"holds"`
				} `json:"liveness"`
				Nemesis *struct {
					Crashes int `json:"crashes"`
				} `json:"nemesis"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(out), &o); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.Join(extra, " "), "--schedule") && (o.Result.Nemesis == nil || o.Result.Nemesis.Crashes != 1) {
			t.Errorf("emulate %v: nemesis %+v", extra, o.Result.Nemesis)
		}
		return o.Result.Liveness[0].Holds
	}
	if holds("--schedule", sched) {
		t.Error("--schedule (crash 3 at 20s): LeaderElected holds at the end")
	}
	if !holds("--schedule", sched, "--fix", "all") {
		t.Error("--fix all --schedule: LeaderElected fails at the end")
	}
	if !holds("--churn", "4/m", "--downtime", "10s", "--heal", "1m") {
		t.Error("--churn 4/m with a minute of healing: LeaderElected fails at the end")
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("at 20s crash 3\nat 1m crsh 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runElect(t, "emulate", "--nodes", "3", "--schedule", bad)
	if code != 2 || !strings.Contains(errOut, "line 2") {
		t.Errorf("a bad schedule: exit %d, %q", code, errOut)
	}
}

// TestMain checks that no test leaves a goroutine behind (the searches'
// workers).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
