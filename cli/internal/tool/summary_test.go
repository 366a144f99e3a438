package tool

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A service without a String method still reads as a line per node in
// trace show: its exported fields, not fmt's &{{} 3 0 ...}.
func TestTraceShowSummarisesAStateWithoutString(t *testing.T) {
	code, stdout, stderr := runProgram(stampProgram(), "check", "--service", "stamp", "--nodes", "2", "--json")
	if code != exitOK {
		t.Fatalf("check: exit %d %s", code, stderr)
	}
	file := filepath.Join(t.TempDir(), "check.json")
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runProgram(stampProgram(), "trace", "show", file)
	if code != exitOK {
		t.Fatalf("trace show: exit %d %s", code, stderr)
	}
	for _, want := range []string{"n1: Sent=3 timers=[]", "n2: Pings=3 Stamp=", "n1: (every exported field zero) timers=[ping]"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("trace show lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "&{") {
		t.Errorf("trace show prints a Go value:\n%s", stdout)
	}
	code, stdout, stderr = runProgram(stampProgram(), "trace", "show", file, "--step", "7", "--node", "n2")
	if code != exitOK || !strings.Contains(stdout, "    state: Pings=3 Stamp=1000000000000000\n    Sent: 0\n    Pings: 3\n") {
		t.Fatalf("trace show --step 7 --node n2: exit %d %s\n%s", code, stderr, stdout)
	}
}
