package tool

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/report"
)

// withTraceLimits lowers the bounds of 'trace show' for one test, so a few
// MB exercise what a 64 MiB default guards.
func withTraceLimits(t *testing.T, lim report.Limits) {
	t.Helper()
	old := traceLimits
	traceLimits = lim
	t.Cleanup(func() { traceLimits = old })
}

// writeTemp writes b to a file of t's temporary directory.
func writeTemp(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// expectShortUsageError is expectUsageError with a bound on the error's
// length: bad input is quoted by a short prefix at most.
func expectShortUsageError(t *testing.T, args []string, want string) {
	t.Helper()
	expectUsageError(t, args, want)
	if _, _, stderr := runCLI(args...); len(stderr) > 600 {
		t.Errorf("%v: an error of %d bytes: %.600s", args, len(stderr), stderr)
	}
}

// TestTraceShowOnDevZero: /dev/zero is refused from its first bytes, with
// a short error and next to no memory (it used to be read whole: OOM).
func TestTraceShowOnDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	expectShortUsageError(t, []string{"trace", "show", "/dev/zero"}, "not a JSON object")
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 16<<20 {
		t.Errorf("allocated %d bytes reading /dev/zero twice", d)
	}
}

// TestTraceShowOnLargeFiles: a JSON array is refused from its first byte;
// an object past the byte limit, or of more values than the value limit,
// is refused before it is decoded.
func TestTraceShowOnLargeFiles(t *testing.T) {
	withTraceLimits(t, report.Limits{Bytes: 1 << 20, Values: 1 << 14})
	array := writeTemp(t, "array.json", append([]byte("["), bytes.Repeat([]byte("0,"), 2<<20)...))
	expectShortUsageError(t, []string{"trace", "show", array}, "not a JSON object")
	big := writeTemp(t, "big.json", []byte(`{"format":"crystalball-prediction/1","error":"`+strings.Repeat("x", 3<<20)+`"}`))
	expectShortUsageError(t, []string{"trace", "show", big}, "larger than 1048576 bytes")
	values := writeTemp(t, "values.json", []byte(`{"reports":[`+strings.Repeat("{},", 1<<15)+`{}]}`))
	expectShortUsageError(t, []string{"trace", "show", values}, "more than 16384 JSON values")
}

// TestTraceShowDistrustsSizes: a node count beyond what 'check' builds is
// refused before any model is (it used to build a model of 10^8 nodes),
// in a prediction report and in the output of 'check --json'.
func TestTraceShowDistrustsSizes(t *testing.T) {
	pred := writeTemp(t, "p.json", []byte(`{"format":"crystalball-prediction/1","service":"randtree","nodes":100000000,"snapshot":{"format":"crystalball-snapshot/1"}}`))
	expectShortUsageError(t, []string{"trace", "show", pred}, "nodes 100000000, want 0..65536")
	check := writeTemp(t, "c.json", []byte(`{"format":"crystalball-check/1","target":"randtree","nodes":100000000,"reports":[{}]}`))
	expectShortUsageError(t, []string{"trace", "show", check}, "nodes 100000000, want 1..1024")
	path := writeTemp(t, "path.json", []byte(`{"format":"crystalball-check/1","target":"randtree","nodes":3,"reports":[{"path":[{"type":"`+strings.Repeat("T", 1<<16)+`"}]}]}`))
	expectShortUsageError(t, []string{"trace", "show", path}, "longer than 1024 bytes")
}

// TestTraceShowQuotesAShortPrefix: a huge format string (it used to be
// echoed whole into the error) is quoted by a short prefix.
func TestTraceShowQuotesAShortPrefix(t *testing.T) {
	f := writeTemp(t, "format.json", []byte(`{"format":"`+strings.Repeat("F", 2<<20)+`"}`))
	expectShortUsageError(t, []string{"trace", "show", f}, "unknown report format")
}

// FuzzTraceShow runs 'trace show' on arbitrary files within small limits:
// any input ends with an exit status, never a panic or a hang.
func FuzzTraceShow(f *testing.F) {
	for _, s := range []string{
		`{"format":"crystalball-check/1","target":"randtree","nodes":3,"reports":[{"property":"p","path":[{"kind":"timer","node":1,"timer":"probe"}]}]}`,
		`{"format":"crystalball-prediction/1","service":"randtree","nodes":3,"report":{"path":[]},"snapshot":{"format":"crystalball-snapshot/1","nodes":[{"id":1,"checkpoint":"AA=="}]}}`,
		`{"format":"crystalball-prediction/1","nodes":100000000}`,
		"\x00\x00\x00", `[1,2]`, `{}`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		old := traceLimits
		traceLimits = report.Limits{Bytes: 1 << 16, Values: 1 << 12}
		defer func() { traceLimits = old }()
		p := filepath.Join(dir, "in.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI("trace", "show", p)
		if code != exitOK && len(stderr) > 2000 {
			t.Fatalf("exit %d with an error of %d bytes: %.300s", code, len(stderr), stderr)
		}
	})
}
