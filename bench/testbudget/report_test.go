package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// jsonl builds a go test -json stream from events.
func jsonl(t *testing.T, evs ...event) string {
	t.Helper()
	var b strings.Builder
	for _, ev := range evs {
		line, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

const mod = "example.com/m"

// a passing package with a slow test and a fast one, and a failing one.
func sampleStream(t *testing.T) string {
	return jsonl(t,
		event{Action: "start", Package: mod + "/a"},
		event{Action: "run", Package: mod + "/a", Test: "TestSlow"},
		event{Action: "output", Package: mod + "/a", Test: "TestSlow", Output: "=== RUN   TestSlow\n"},
		event{Action: "output", Package: mod + "/a", Test: "TestSlow", Output: "    noise that passing tests hide\n"},
		event{Action: "pass", Package: mod + "/a", Test: "TestSlow", Elapsed: 90},
		event{Action: "run", Package: mod + "/a", Test: "TestFast"},
		event{Action: "pass", Package: mod + "/a", Test: "TestFast", Elapsed: 0.1},
		event{Action: "output", Package: mod + "/a", Output: "PASS\n"},
		event{Action: "pass", Package: mod + "/a", Elapsed: 91},
		event{Action: "run", Package: mod + "/b", Test: "TestBroken"},
		event{Action: "run", Package: mod + "/b", Test: "TestBroken/case"},
		event{Action: "output", Package: mod + "/b", Test: "TestBroken/case", Output: "    b_test.go:9: seed=7: want 3, got 4\n"},
		event{Action: "fail", Package: mod + "/b", Test: "TestBroken/case", Elapsed: 2},
		event{Action: "fail", Package: mod + "/b", Test: "TestBroken", Elapsed: 2},
		event{Action: "fail", Package: mod + "/b", Elapsed: 2.5},
		event{Action: "skip", Package: mod + "/c"},
	)
}

func writeRecords(t *testing.T, root string, recs ...record) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "records.jsonl")
	for _, r := range recs {
		r.Dir = filepath.Join(root, r.Dir)
		if err := appendRecord(path, r); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestSummaryJudgesCPUNotWall(t *testing.T) {
	root := "/src/m"
	path := writeRecords(t, root,
		record{Dir: "a", UserSeconds: 100, SysSeconds: 30, WallSeconds: 91, MaxRSSKiB: 2048},
		record{Dir: "b", UserSeconds: 1, SysSeconds: 0.5, WallSeconds: 2.5},
	)
	recs, err := records{path: path, root: root, module: mod}.load()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := newStream(&out, func(string) (record, bool) { return record{}, false })
	if err := s.read(strings.NewReader(sampleStream(t))); err != nil {
		t.Fatal(err)
	}
	sum := summarize(s, recs, 2*time.Minute, nil)
	// a: 130 s of CPU against a 120 s budget, although its wall time (91 s) is under it.
	if got, want := strings.Join(sum.OverBudget, ","), mod+"/a"; got != want {
		t.Errorf("over budget: %q, want %q", got, want)
	}
	if got, want := strings.Join(sum.Failed, ","), mod+"/b"; got != want {
		t.Errorf("failed: %q, want %q", got, want)
	}
	if sum.ok() {
		t.Error("a failing, over-budget run is ok")
	}
	if sum.Packages[0].Package != mod+"/a" || sum.Packages[0].CPU != 130 || sum.Packages[0].MaxRSSKiB != 2048 {
		t.Errorf("costliest package: %+v", sum.Packages[0])
	}
	if sum.Tests[0].Test != "TestSlow" || sum.Tests[0].Seconds != 90 {
		t.Errorf("slowest test: %+v", sum.Tests[0])
	}
	for _, tr := range sum.Tests {
		if strings.Contains(tr.Test, "/") {
			t.Errorf("subtest listed among the slowest: %+v", tr)
		}
	}
	var v bytes.Buffer
	sum.print(&v, 10, 20)
	for _, want := range []string{
		"FAIL: " + mod + "/a used 130.0s of CPU, over the budget of 2m0s",
		"     90.0s  TestSlow",
		"FAIL: tests failed in " + mod + "/b",
	} {
		if !strings.Contains(v.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, v.String())
		}
	}
}

func TestStreamPrintsFailuresOnly(t *testing.T) {
	var out bytes.Buffer
	s := newStream(&out, func(pkg string) (record, bool) {
		return record{UserSeconds: 3, SysSeconds: 1}, pkg == mod+"/a"
	})
	if err := s.read(strings.NewReader(sampleStream(t))); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"ok  \t" + mod + "/a\t91.0s  cpu 4.0s\n",
		"b_test.go:9: seed=7: want 3, got 4",
		"FAIL\t" + mod + "/b\t2.5s\n",
		"?   \t" + mod + "/c\t[no test files]\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "noise that passing tests hide") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestUnfinishedAndBuildFailures(t *testing.T) {
	stream := jsonl(t,
		event{Action: "build-output", ImportPath: mod + "/d [" + mod + "/d.test]", Output: "d/x_test.go:3:1: syntax error\n"},
		event{Action: "build-fail", ImportPath: mod + "/d [" + mod + "/d.test]"},
		event{Action: "run", Package: mod + "/e", Test: "TestHangs"},
		event{Action: "output", Package: mod + "/e", Test: "TestHangs", Output: "panic: test timed out after 30m0s\n"},
		event{Action: "fail", Package: mod + "/e", Elapsed: 1800},
		event{Action: "run", Package: mod + "/f", Test: "TestCut"},
	) + "go: downloading example.com/dep v1.0.0\n"
	var out bytes.Buffer
	s := newStream(&out, func(string) (record, bool) { return record{}, false })
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"syntax error", "TestHangs had not finished", "panic: test timed out", "go: downloading"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	sum := summarize(s, nil, 0, nil)
	if len(sum.BuildsFailed) != 1 || len(sum.Failed) != 1 || strings.Join(sum.Unfinished, ",") != mod+"/f" || sum.ok() {
		t.Errorf("summary: %+v", sum)
	}
	// Without a record, a package is judged on its wall time.
	if got := summarize(s, nil, time.Minute, nil).OverBudget; len(got) != 1 || got[0] != mod+"/e" {
		t.Errorf("over budget on wall time: %v", got)
	}
}

func TestRunReportExitCodes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+mod+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	pass := jsonl(t, event{Action: "pass", Package: mod, Elapsed: 1})
	summaryPath := filepath.Join(dir, "sum.json")
	recs := writeRecords(t, dir, record{Dir: ".", UserSeconds: 1})
	cases := []struct {
		name  string
		args  []string
		stdin string
		code  int
	}{
		{"pass", []string{"-records", recs, "-summary", summaryPath}, pass, 0},
		{"over budget", []string{"-records", recs, "-budget", "500ms"}, pass, 1},
		{"no events", nil, "go: no packages to test\n", 1},
		{"negative budget", []string{"-budget", "-1s"}, pass, 2},
		{"stray argument", []string{"./..."}, pass, 2},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		if code := runReport(c.args, strings.NewReader(c.stdin), &out, &errOut); code != c.code {
			t.Errorf("%s: exit %d, want %d\n%s%s", c.name, code, c.code, out.String(), errOut.String())
		}
	}
	var sum summary
	data, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &sum); err != nil || sum.Format != summaryFormat || len(sum.Packages) != 1 || sum.Packages[0].CPU != 1 {
		t.Errorf("summary %s: %+v (%v)", data, sum, err)
	}
}

func TestRecordsRejectForeignLines(t *testing.T) {
	for _, text := range []string{"not json\n", `{"user_s": 3}` + "\n", `{"dir": "/x", "user_s": -1}` + "\n"} {
		if _, err := (records{path: "r"}).decode(strings.NewReader(text)); err == nil {
			t.Errorf("%q accepted", text)
		}
	}
	got, err := (records{path: "r", root: "/m", module: mod}).decode(strings.NewReader(
		`{"dir": "/m/a", "user_s": 1}` + "\n\n" + `{"dir": "/m/a", "user_s": 2}` + "\n" + `{"dir": "/elsewhere", "user_s": 5}`))
	if err != nil {
		t.Fatal(err)
	}
	if got[mod+"/a"].UserSeconds != 2 || got["/elsewhere"].UserSeconds != 5 || len(got) != 2 {
		t.Errorf("records: %+v", got)
	}
}

func TestReadLineBoundsLongLines(t *testing.T) {
	long := strings.Repeat("x", maxLine+100)
	r := bufio.NewReaderSize(strings.NewReader(long+"\nnext\n"), 4096)
	line, err := readLine(r)
	if err != errLineTooLong || len(line) != maxLine {
		t.Fatalf("long line: %d bytes, %v", len(line), err)
	}
	if line, err := readLine(r); err != nil || line != "next" {
		t.Fatalf("after a long line: %q, %v", line, err)
	}
}

func TestOutputBufferKeepsTheTail(t *testing.T) {
	var b outputBuffer
	chunk := strings.Repeat("y", 1000) + "\n"
	for i := 0; i < 3*maxBuffered/len(chunk); i++ {
		b.add(chunk)
	}
	b.add("the last line\n")
	if b.size > maxBuffered || b.dropped == 0 {
		t.Fatalf("buffer holds %d bytes, dropped %d", b.size, b.dropped)
	}
	var out bytes.Buffer
	b.writeTo(&out)
	if !strings.HasSuffix(out.String(), "the last line\n") || !strings.HasPrefix(out.String(), "    [testbudget:") {
		t.Errorf("buffer output starts %q, ends %q", out.String()[:40], out.String()[out.Len()-20:])
	}
}

func TestModulePath(t *testing.T) {
	for in, want := range map[string]string{
		"module example.com/m\n":           "example.com/m",
		"// c\nmodule \"example.com/q\"\n": "example.com/q",
		"modules x\n":                      "",
		"go 1.26\n":                        "",
	} {
		if got := modulePath([]byte(in)); got != want {
			t.Errorf("modulePath(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzStream(f *testing.F) {
	f.Add([]byte(`{"Action":"pass","Package":"p","Test":"T","Elapsed":1}` + "\n"))
	f.Add([]byte(`{"Action":"output","Package":"p","Test":"T/x","Output":"o"}` + "\n{\n"))
	f.Add([]byte(`{"Action":"build-fail","ImportPath":"p"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		s := newStream(&out, func(string) (record, bool) { return record{}, false })
		if err := s.read(bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		summarize(s, nil, time.Minute, nil).print(&out, 5, 5)
	})
}

func FuzzRecords(f *testing.F) {
	f.Add([]byte(`{"dir":"/m/a","user_s":1,"sys_s":0.5,"wall_s":2,"max_rss_kib":10,"exit":0}` + "\n"))
	f.Add([]byte("\n\n{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, err := (records{path: "r", root: "/m", module: mod}).decode(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, r := range recs {
			if r.cpu() < 0 {
				t.Fatalf("negative CPU accepted: %+v", r)
			}
		}
	})
}
