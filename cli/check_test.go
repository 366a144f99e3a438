package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck2PCCountsStates(t *testing.T) {
	code, stdout, stderr := runCLI("check", "--model", "2pc", "--rms", "3", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Unique != 288 || out.Stop != "completed" || len(out.Violations) != 0 {
		t.Fatalf("2pc with 3 RMs: %d unique, stop %s, %d violations", out.Unique, out.Stop, len(out.Violations))
	}
}

func TestCheckServiceIsDeterministic(t *testing.T) {
	args := []string{"check", "--service", "randtree", "--nodes", "3", "--strategy", "bfs", "--resets", "1", "--silent", "--max-states", "5000", "--budget", "0", "--json"}
	var outs []checkOutput
	for range 2 {
		code, stdout, stderr := runCLI(args...)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var out checkOutput
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		out.StatesPerSecond, out.WallSeconds = 0, 0
		outs = append(outs, out)
	}
	a, _ := json.Marshal(outs[0])
	b, _ := json.Marshal(outs[1])
	if string(a) != string(b) {
		t.Fatalf("two runs differ:\n%s\n%s", a, b)
	}
	if outs[0].Unique != 5000 || outs[0].Stop != "state budget" {
		t.Fatalf("unique %d, stop %s", outs[0].Unique, outs[0].Stop)
	}
	if len(outs[0].Reports) != len(outs[0].Violations) {
		t.Fatalf("%d reports for %d violations", len(outs[0].Reports), len(outs[0].Violations))
	}
}

func TestCheckWalksAndSummary(t *testing.T) {
	code, stdout, stderr := runCLI("check", "--service", "randtree", "--nodes", "3", "--strategy", "walk", "--walks", "20")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "random walks: 20") {
		t.Fatalf("summary:\n%s", stdout)
	}
	// With --max-depth, as many walks again start from the periphery of the
	// bounded search.
	code, stdout, stderr = runCLI("check", "--service", "randtree", "--nodes", "3", "--strategy", "walk", "--walks", "20", "--max-depth", "5", "--periphery", "4", "--json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if l := out.Liveness; l == nil || l.Walks != 40 || l.Live != 40 || l.Periphery != 4 || l.PeripheryDepth != 5 {
		t.Fatalf("liveness %+v", out.Liveness)
	}
	if code, _, stderr := runCLI("check", "--strategy", "dfs"); code != exitUsage || !strings.Contains(stderr, "--strategy") {
		t.Fatalf("bad strategy: exit %d, %s", code, stderr)
	}
}

func TestTraceShowReplaysACheckReport(t *testing.T) {
	code, stdout, stderr := runCLI("check", "--service", "randtree", "--nodes", "3", "--resets", "1", "--silent", "--max-states", "20000", "--budget", "0", "--json")
	if code != exitOK {
		t.Fatalf("check: exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Reports) == 0 {
		t.Fatalf("no violation to show:\n%s", stdout)
	}
	file := filepath.Join(t.TempDir(), "check.json")
	if err := os.WriteFile(file, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	code, shown, stderr := runCLI("trace", "show", file)
	if code != exitOK {
		t.Fatalf("trace show: exit %d: %s", code, stderr)
	}
	v := out.Violations[0]
	if !strings.Contains(shown, "violation of "+v.Property) || !strings.Contains(shown, fmt.Sprintf("%3d. %s", len(v.Path), v.Path[len(v.Path)-1])) {
		t.Fatalf("trace show:\n%s", shown)
	}
	if code, _, _ := runCLI("trace", "show", "--violation", "99", file); code != exitUsage {
		t.Fatalf("--violation 99: exit %d", code)
	}
	if code, _, _ := runCLI("trace", "show", filepath.Join(t.TempDir(), "missing.json")); code != exitUsage {
		t.Fatalf("missing file: exit %d", code)
	}
}
