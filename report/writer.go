package report

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// Writer writes a Prediction file per prediction of a steering round into
// Dir: its Round method is a steering.LayerConfig.OnRound. The layer calls
// OnRound from one goroutine at a time (the runner's), so a Writer needs
// no lock; do not share one between layers. Files are named
// prediction-NODE-cutCN-SEQ.json.
type Writer struct {
	// Dir is the directory the files go to; it must exist.
	Dir string
	// Source describes the node and service (Source.Node names the files).
	Source Source
	// Logger gets a line per file written (info) and per failure (error);
	// nil: no logging.
	Logger *slog.Logger
	seq    int
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
	for _, p := range rep.Predictions {
		pd, err := NewPrediction(w.Source, s, p)
		if err != nil {
			log.Error("steering report", slog.String("property", p.Property), slog.Any("error", err))
			continue
		}
		w.seq++
		name := filepath.Join(w.Dir, fmt.Sprintf("prediction-%v-cut%d-%d.json", w.Source.Node, s.CN, w.seq))
		if err := pd.WriteFile(name); err != nil {
			log.Error("steering report: writing", slog.String("file", name), slog.Any("error", err))
			continue
		}
		log.Info("steering report written", slog.String("file", name), slog.String("property", p.Property))
	}
}
