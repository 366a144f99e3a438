package report_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/services/randtree/paper"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// n9Source is figure2's report source.
func n9Source(spec node.Spec) report.Source {
	return report.Source{Node: 9, Service: "randtree", Spec: spec, Mode: steering.Debug,
		Workload: paper.Figure2Workload, Faults: consequence.Faults{Resets: 1, SilentResets: true}}
}

// reportFiles returns the names of n9's report files in dir and whether a
// temporary file is among the directory's entries.
func reportFiles(t *testing.T, dir string) (names []string, temps int) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		switch {
		case strings.HasSuffix(e.Name(), ".tmp"):
			temps++
		case strings.HasPrefix(e.Name(), "prediction-n9-"):
			names = append(names, e.Name())
		}
	}
	return names, temps
}

// TestWriterNeverOverwritesAcrossRestarts: a Writer made after a restart
// (a new process, the same directory) goes on numbering where the files
// in the directory end, so no earlier report is overwritten; main
// restarted at 1 and replaced them.
func TestWriterNeverOverwritesAcrossRestarts(t *testing.T) {
	spec, s, rep := figure2(t)
	dir := t.TempDir()
	src := n9Source(spec)
	first := &report.Writer{Dir: dir, Source: src}
	first.Round(s, rep)
	before, _ := reportFiles(t, dir)
	contents := map[string]string{}
	for _, name := range before {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		contents[name] = string(b)
	}
	// An unrelated file in the directory does not disturb the numbering.
	os.WriteFile(filepath.Join(dir, "prediction-n9-cut7-x.json"), []byte("{}"), 0o644)
	second := &report.Writer{Dir: dir, Source: src}
	second.Round(s, rep)
	after, temps := reportFiles(t, dir)
	if want := 2*len(rep.Predictions) + 1; len(after) != want || temps != 0 {
		t.Fatalf("%d files (%d temporary) after two incarnations of %d reports: %q", len(after), temps, len(rep.Predictions), after)
	}
	for name, c := range contents {
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != c {
			t.Errorf("%s was overwritten", name)
		}
	}
	if st := second.Stats(); st.Written != uint64(len(rep.Predictions)) || st.Failed != 0 || st.Files != 2*len(rep.Predictions) {
		t.Errorf("stats %+v", st)
	}
}

// TestWriterRetention: past MaxFiles or MaxBytes the oldest reports go,
// counted; the newest always stays.
func TestWriterRetention(t *testing.T) {
	spec, s, rep := figure2(t)
	dir := t.TempDir()
	w := &report.Writer{Dir: dir, Source: n9Source(spec), MaxFiles: 3}
	for range 4 {
		w.Round(s, rep)
	}
	names, _ := reportFiles(t, dir)
	total := 4 * len(rep.Predictions)
	st := w.Stats()
	if len(names) != 3 || st.Files != 3 || st.Dropped != uint64(total-3) || st.Written != uint64(total) {
		t.Fatalf("files %q, stats %+v after %d reports", names, st, total)
	}
	last := names[len(names)-1]
	w.MaxFiles, w.MaxBytes = -1, 1
	w.Round(s, rep)
	names, _ = reportFiles(t, dir)
	if len(names) != 1 || names[0] == last || w.Stats().Bytes <= 1 {
		t.Fatalf("with 1 byte of room: %q (stats %+v): the newest report stays alone", names, w.Stats())
	}
}

// writerHelperEnv names the directory of TestWriterHelperProcess, which
// writes reports into it until it is killed.
const writerHelperEnv = "CRYSTALBALL_REPORT_WRITER_DIR"

// TestWriterHelperProcess is the child of TestWriterSurvivesKills: it
// writes rounds of reports until it is killed. It does nothing in a normal
// run.
func TestWriterHelperProcess(t *testing.T) {
	dir := os.Getenv(writerHelperEnv)
	if dir == "" {
		return
	}
	spec, s, rep := figure2(t)
	w := &report.Writer{Dir: dir, Source: n9Source(spec), MaxFiles: 50}
	for {
		w.Round(s, rep)
	}
}

// TestWriterSurvivesKills: a process writing reports is SIGKILLed at
// arbitrary moments, three times; every report file left is whole (it
// reads back as a valid prediction), and the next writer removes the
// temporary files the kills left.
func TestWriterSurvivesKills(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs a child process")
	}
	dir := t.TempDir()
	seen := 0
	for kill := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterHelperProcess$")
		cmd.Env = append(os.Environ(), writerHelperEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill it once it wrote a few more files, at a moment of its
		// own choosing.
		deadline := time.Now().Add(time.Minute)
		for {
			names, _ := reportFiles(t, dir)
			if len(names) >= min(seen+3+kill, 50) || time.Now().After(deadline) {
				seen = len(names)
				break
			}
			time.Sleep(time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		names, _ := reportFiles(t, dir)
		for _, name := range names {
			f, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			_, err = report.ReadPrediction(f, report.Limits{})
			f.Close()
			if err != nil {
				t.Fatalf("kill %d: %s is not a whole report: %v", kill, name, err)
			}
		}
	}
	spec, s, rep := figure2(t)
	w := &report.Writer{Dir: dir, Source: n9Source(spec)}
	w.Round(s, rep)
	names, temps := reportFiles(t, dir)
	if temps != 0 || len(names) < seen {
		t.Fatalf("after the kills: %d reports, %d temporary files left", len(names), temps)
	}
}
