package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCalibrationRunsTheFixedWorkload: a calibration runs the reference
// workload (its checksum pinned, so the unit cannot change silently),
// measures its CPU and states it against the reference machine's figure
// for the same instrumentation.
func TestCalibrationRunsTheFixedWorkload(t *testing.T) {
	if got := referenceWork(100); got != referenceWork(100) {
		t.Fatalf("the reference workload is not deterministic: %#x", got)
	}
	c, err := calibrate(1)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Runs) != 1 || !(c.Median > 0) || c.Race != raceEnabled || c.Format != calibrationFormat {
		t.Fatalf("calibration %+v", c)
	}
	if want := c.Median / referenceSeconds(raceEnabled); c.Factor != want {
		t.Errorf("factor %v, want median/reference = %v", c.Factor, want)
	}
	if d := c.describe(); !strings.Contains(d, "the reference machine's") {
		t.Errorf("describe: %q", d)
	}
}

// TestBudgetInReferenceSeconds: with a calibration, a package is judged on
// its CPU over the slowest calibration's factor, and one over half the
// budget is named as a warning (it may fail on a slower or busier
// machine) without failing the run.
func TestBudgetInReferenceSeconds(t *testing.T) {
	root := "/src/m"
	path := writeRecords(t, root,
		record{Dir: "a", UserSeconds: 200, WallSeconds: 91}, // 100 reference s at factor 2
		record{Dir: "b", UserSeconds: 30, WallSeconds: 2.5}, // 15 reference s
	)
	recs, err := records{path: path, root: root, module: mod}.load()
	if err != nil {
		t.Fatal(err)
	}
	stream := jsonl(t,
		event{Action: "pass", Package: mod + "/a", Elapsed: 91},
		event{Action: "pass", Package: mod + "/b", Elapsed: 2.5},
	)
	s := newStream(&bytes.Buffer{}, func(string) (record, bool) { return record{}, false })
	if err := s.read(strings.NewReader(stream)); err != nil {
		t.Fatal(err)
	}
	cals := []calibration{{Format: calibrationFormat, Median: 1, Factor: 1.5}, {Format: calibrationFormat, Median: 1, Factor: 2}}
	sum := summarize(s, recs, 2*time.Minute, cals)
	if !sum.ok() || len(sum.OverBudget) != 0 || strings.Join(sum.OverHalf, ",") != mod+"/a" || sum.Factor != 2 {
		t.Fatalf("summary: ok %v, over %v, over half %v, factor %v", sum.ok(), sum.OverBudget, sum.OverHalf, sum.Factor)
	}
	if a := sum.Packages[0]; a.Package != mod+"/a" || a.CPU != 200 || a.Ref != 100 {
		t.Errorf("package a: %+v", a)
	}
	var out bytes.Buffer
	sum.print(&out, 10, 10)
	for _, want := range []string{
		"warning: " + mod + "/a used 100.0s of reference CPU (200.0s of CPU here), over half the budget of 2m0s",
		"ok (no package over 2m0s of reference CPU)",
		"115.0s of the reference machine's",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	// On the reference machine itself the same CPU is over the budget.
	sum = summarize(s, recs, 2*time.Minute, []calibration{{Format: calibrationFormat, Median: 1, Factor: 1}})
	if sum.ok() || strings.Join(sum.OverBudget, ",") != mod+"/a" {
		t.Errorf("factor 1: over budget %v", sum.OverBudget)
	}
}

// TestReportRecalibrates: -recalibrate measures again when the stream
// ends and appends the second calibration to the file; a file that is not
// a calibration, or -recalibrate without one, is a usage error.
func TestReportRecalibrates(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+mod+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	calPath := filepath.Join(dir, "cal.jsonl")
	if err := appendCalibration(calPath, calibration{Format: calibrationFormat, Median: 0.5, Factor: 1, Runs: []float64{0.5}}); err != nil {
		t.Fatal(err)
	}
	recs := writeRecords(t, dir, record{Dir: ".", UserSeconds: 1})
	pass := jsonl(t, event{Action: "pass", Package: mod, Elapsed: 1})
	var out, errOut bytes.Buffer
	if code := runReport([]string{"-records", recs, "-calibration", calPath, "-recalibrate", "-runs", "1"}, strings.NewReader(pass), &out, &errOut); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
	cals, err := loadCalibrations(calPath)
	if err != nil || len(cals) != 2 || cals[1].Race != raceEnabled {
		t.Fatalf("calibrations after the report: %+v (%v)", cals, err)
	}
	bad := filepath.Join(dir, "bad.jsonl")
	for _, text := range []string{"", "not json\n", `{"format":"other","median_s":1,"factor":1}` + "\n", `{"format":"` + calibrationFormat + `","median_s":0,"factor":1}` + "\n"} {
		if err := os.WriteFile(bad, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if code := runReport([]string{"-calibration", bad}, strings.NewReader(pass), &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
			t.Errorf("calibration file %q: exit %d, want 2", text, code)
		}
	}
	if code := runReport([]string{"-recalibrate"}, strings.NewReader(pass), &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("-recalibrate without -calibration: exit %d, want 2", code)
	}
}

// TestCalibrateUsage: the subcommand needs -out and nothing else.
func TestCalibrateUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"-out"}, {"-out", "f", "stray"}, {"-out", "f", "-runs", "0"}} {
		if code := runCalibrate(args, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
