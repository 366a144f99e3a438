package report

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Retention defaults of a Writer (Writer.MaxFiles, Writer.MaxBytes).
const (
	// DefaultMaxReportFiles is how many report files a Writer keeps in its Dir.
	DefaultMaxReportFiles = 1000
	// DefaultMaxReportBytes is how many bytes of report files a Writer keeps.
	DefaultMaxReportBytes = 64 << 20
)

// Writer writes a Prediction file per prediction of a steering round into
// Dir: its Round method is a steering.LayerConfig.OnRound. Files are named
// prediction-NODE-cutCN-SEQ.json, where SEQ goes on from the largest a
// file of NODE's in Dir has, so a restarted node never overwrites its
// earlier reports (a name that exists all the same is skipped: nothing is
// ever replaced). Each file is written atomically — to a temporary file in
// Dir, synced, linked to its name, the directory synced — so a kill at
// any moment leaves whole reports only; temporary files a kill left are
// removed on the first round. Dir keeps at most MaxFiles of NODE's report
// files and MaxBytes of them: past either, the oldest go first (counted
// in WriterStats.Dropped).
//
// Round is called from one goroutine at a time (the layer's runner);
// Stats is safe from any goroutine. Do not share a Writer between layers,
// nor a Dir between two Writers of one node.
type Writer struct {
	// Dir is the directory the files go to; it must exist.
	Dir string
	// Source describes the node and service (Source.Node names the files).
	Source Source
	// Logger gets a line per file written (info) and per failure (error);
	// nil: no logging.
	Logger *slog.Logger
	// MaxFiles and MaxBytes bound the node's report files kept in Dir
	// (zero: DefaultMaxReportFiles, DefaultMaxReportBytes; negative: no bound).
	MaxFiles int
	MaxBytes int64

	mu    sync.Mutex
	dir   *reportDir // scanned on the first round
	stats WriterStats
}

// WriterStats counts what a Writer did since it was made.
type WriterStats struct {
	// Written counts the report files written; Failed the reports that
	// could not be built or written; Dropped the files removed to stay
	// within MaxFiles and MaxBytes.
	Written, Failed, Dropped uint64
	// Files and Bytes are the node's report files in Dir now, and their
	// size.
	Files int
	Bytes int64
	// Recent are the newest files written, newest first (at most
	// MaxRecentReports; a file since dropped may be among them).
	Recent []ReportFile
}

// Stats returns the Writer's counters.
func (w *Writer) Stats() WriterStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Recent = slices.Clone(s.Recent)
	return s
}

// Round writes the reports of one round (a steering.LayerConfig.OnRound);
// failures are logged, not fatal: a node keeps running.
func (w *Writer) Round(s *snapshot.Snapshot, rep *steering.RoundReport) {
	if len(rep.Predictions) == 0 {
		return
	}
	if rep.Snapshot != nil {
		s = rep.Snapshot // with the last known members the round added
	}
	log := w.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dir == nil {
		d, err := scanReportDir(w.Dir, w.Source.Node.String(), log)
		if err != nil {
			log.Error("steering report: reading the report directory", slog.Any("error", err))
			w.stats.Failed += uint64(len(rep.Predictions))
			return
		}
		w.dir = d
	}
	for _, p := range rep.Predictions {
		pd, err := NewPrediction(w.Source, s, p)
		if err == nil {
			var name string
			name, err = w.dir.write(fmt.Sprintf("cut%d", s.CN), pd)
			if err == nil {
				w.stats.Written++
				w.noteWritten(name, p.Property, s.CN)
				log.Info("steering report written", slog.String("file", name), slog.String("property", p.Property))
				continue
			}
		}
		w.stats.Failed++
		log.Error("steering report", slog.String("property", p.Property), slog.Any("error", err))
	}
	w.stats.Dropped += uint64(w.dir.retain(w.maxFiles(), w.maxBytes(), log))
	w.stats.Files, w.stats.Bytes = len(w.dir.files), w.dir.bytes
}

func (w *Writer) maxFiles() int {
	if w.MaxFiles == 0 {
		return DefaultMaxReportFiles
	}
	return w.MaxFiles
}

func (w *Writer) maxBytes() int64 {
	if w.MaxBytes == 0 {
		return DefaultMaxReportBytes
	}
	return w.MaxBytes
}
