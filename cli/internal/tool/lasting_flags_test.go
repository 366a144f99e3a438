package tool

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLastingFlagsBadInput: each bad lasting-fault flag is a one-line
// usage error (exit 2), a bad schedule's naming its line.
func TestLastingFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("at 1s crash 2\nat 2s partition {1} | {9}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--crashes", "-1"}, "--crashes"},
		{[]string{"check", "--partition-kinds", "sideways"}, "unknown partition kind"},
		{[]string{"check", "--skew", "-1s"}, "--skew"},
		{[]string{"emulate", "--crashes", "fast"}, "--crashes"},
		{[]string{"emulate", "--nodes", "4", "--schedule", bad}, "line 2: no node n9"},
		{[]string{"emulate", "--schedule", filepath.Join(dir, "missing.txt")}, "--schedule"},
	} {
		code, _, errOut := runCLI(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("%v: exit %d, %q (want a one-line usage error with %q)", c.args, code, errOut, c.want)
		}
	}
}

// TestCheckLastingFaults: check explores the lasting faults on a service
// of the papers (a crash-stop and a partition of three RandTree nodes, to
// depth 4: more states than without), and its report records them for
// trace show (examples/elect/cmd/elect's tests replay one).
func TestCheckLastingFaults(t *testing.T) {
	code, out, errOut := runCLI("check", "--service", "randtree", "--nodes", "3", "--max-depth", "4",
		"--crashes", "1", "--crash-downtime", "2s", "--partitions", "1", "--partition-kinds", "isolate,one-way", "--skew", "50ms", "--json")
	if code != 0 {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	var o checkOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		t.Fatal(err)
	}
	if l := o.Lasting; l == nil || l.Crashes != 1 || l.Downtime != 2*time.Second || l.Partitions != 1 || l.Kinds != "isolate,one-way" || l.TimerSkew != 50*time.Millisecond {
		t.Fatalf("lasting %+v", o.Lasting)
	}
	var plain checkOutput
	if code, out, _ := runCLI("check", "--service", "randtree", "--nodes", "3", "--max-depth", "4", "--json"); code != 0 || json.Unmarshal([]byte(out), &plain) != nil {
		t.Fatal("check without lasting faults failed")
	}
	if o.Unique <= plain.Unique || plain.Lasting != nil {
		t.Errorf("%d states with the lasting faults, %d without (lasting %+v)", o.Unique, plain.Unique, plain.Lasting)
	}
}
