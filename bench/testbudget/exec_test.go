package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExecRecordsTheBinarysCostAndExitCode(t *testing.T) {
	sh := "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		t.Skip("no /bin/sh")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	path := filepath.Join(dir, "records.jsonl")
	var stderr bytes.Buffer
	if code := runExec([]string{"-records", path, sh, "-c", "exit 3"}, &stderr); code != 3 {
		t.Fatalf("exit code %d, want the binary's 3 (%s)", code, stderr.String())
	}
	if code := runExec([]string{"-records", path, sh, "-c", "kill -TERM $$"}, &stderr); code != 128+15 {
		t.Fatalf("exit code %d, want 143 for a binary killed by SIGTERM", code)
	}
	if code := runExec([]string{"-records", path, sh, "-c", "true"}, &stderr); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 3 {
		t.Fatalf("%d records, want 3:\n%s", n, data)
	}
	recs, err := records{path: path, root: dir, module: mod}.load()
	if err != nil {
		t.Fatal(err)
	}
	rec, ok := recs[mod]
	if !ok || rec.ExitCode != 0 || rec.WallSeconds <= 0 || rec.MaxRSSKiB <= 0 {
		t.Errorf("last record: %+v (found %v)", rec, ok)
	}
}

func TestExecUsage(t *testing.T) {
	var stderr bytes.Buffer
	if code := runExec([]string{"/bin/true"}, &stderr); code != 2 || !strings.Contains(stderr.String(), "-records") {
		t.Errorf("no -records: exit %d, %q", code, stderr.String())
	}
	stderr.Reset()
	if code := runExec([]string{"-records", filepath.Join(t.TempDir(), "r"), "/no/such/binary"}, &stderr); code != 1 || !strings.Contains(stderr.String(), "/no/such/binary") {
		t.Errorf("missing binary: exit %d, %q", code, stderr.String())
	}
}
