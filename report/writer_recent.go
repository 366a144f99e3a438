package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// MaxRecentReports is how many of its newest files a Writer lists
// (WriterStats.Recent) and serves (ReadRecent).
const MaxRecentReports = 8

// ReportFile is one report file a Writer wrote: its name in Dir, the
// property it predicts and the cut of the snapshot it replays from.
type ReportFile struct {
	Name     string `json:"name"`
	Property string `json:"property"`
	Cut      uint64 `json:"cut"`
}

// ErrNotRecent is wrapped by ReadRecent's error for a name that is not
// one of the Writer's recent files.
var ErrNotRecent = errors.New("report: not a recent report of this node")

// noteWritten keeps name as the newest of the recent files; w.mu is held.
func (w *Writer) noteWritten(name, property string, cut uint64) {
	recent := append([]ReportFile{{Name: name, Property: property, Cut: cut}}, w.stats.Recent...)
	w.stats.Recent = slices.Clip(recent[:min(len(recent), MaxRecentReports)])
}

// ReadRecent returns the contents of one of the Writer's recent files
// (WriterStats.Recent), at most Limits' default document size: a node's
// status page links its newest predictions to them. Any other name —
// an older file, a path, another node's file — is refused with
// ErrNotRecent, so the status server serves nothing else of the disk.
// Safe from any goroutine.
func (w *Writer) ReadRecent(name string) ([]byte, error) {
	w.mu.Lock()
	known := slices.ContainsFunc(w.stats.Recent, func(f ReportFile) bool { return f.Name == name })
	dir := w.Dir
	w.mu.Unlock()
	if !known || filepath.Base(name) != name {
		return nil, fmt.Errorf("%w: %s", ErrNotRecent, Quote(name))
	}
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer f.Close()
	return ReadDocument(f, Limits{})
}
