package papers

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// The command line's exit statuses: success, bad usage.
const (
	exitOK    = 0
	exitUsage = 2
)

// runCLI runs the crystalball command line args (Program) in process;
// check gets --budget 0 unless args give one: the tests' searches are
// bounded in states, not in wall time, which a loaded machine stretches.
func runCLI(args ...string) (code int, stdout, stderr string) {
	if len(args) > 0 && args[0] == "check" && !slices.ContainsFunc(args, func(a string) bool {
		return strings.TrimLeft(a, "-") == "budget" || strings.HasPrefix(strings.TrimLeft(a, "-"), "budget=")
	}) {
		args = append(slices.Clone(args), "--budget", "0")
	}
	var out, errb bytes.Buffer
	code = Program().Run(args, &out, &errb)
	return code, out.String(), errb.String()
}

// expectUsageError runs args and wants exit status 2, nothing on standard
// output and one line on standard error containing want.
func expectUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	code, stdout, stderr := runCLI(args...)
	if code != exitUsage {
		t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, stderr)
	}
	if stdout != "" {
		t.Errorf("%v: wrote to stdout: %q", args, stdout)
	}
	if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("%v: stderr %q, want one line containing %q", args, stderr, want)
	}
}
