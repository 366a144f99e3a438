package report_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/seed6eee2ec7/crystalball/report"
)

// A Writer lists its newest files with their property and cut, and reads
// back those and nothing else: a status page may link to them.
func TestWriterListsAndReadsItsRecentFiles(t *testing.T) {
	spec, s, rep := figure2(t)
	dir := t.TempDir()
	w := &report.Writer{Dir: dir, Source: n9Source(spec)}
	w.Round(s, rep)
	st := w.Stats()
	if len(st.Recent) == 0 || len(st.Recent) != min(int(st.Written), report.MaxRecentReports) {
		t.Fatalf("recent %+v after %d written", st.Recent, st.Written)
	}
	newest := st.Recent[0]
	if newest.Property == "" || newest.Cut != s.CN {
		t.Fatalf("newest %+v", newest)
	}
	b, err := w.ReadRecent(newest.Name)
	want, _ := os.ReadFile(filepath.Join(dir, newest.Name))
	if err != nil || string(b) != string(want) {
		t.Fatalf("ReadRecent(%s): %v", newest.Name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"other.json", "../" + newest.Name, filepath.Join(dir, newest.Name)} {
		if _, err := w.ReadRecent(name); !errors.Is(err, report.ErrNotRecent) {
			t.Errorf("ReadRecent(%q): %v, want ErrNotRecent", name, err)
		}
	}
}
