package papers

import (
	"io"

	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/experiments"
)

// runProgress is an experiment's progress on stderr, for the experiments
// that report it as lines (their Config.Progress): the writer to give
// them, and the function that ends it. The lines become the status of a
// progress line (tool.Progress: a status line on a terminal, a plain
// line every 10 s on a pipe, so a --json run that takes minutes is not
// silent); without --json each line is also printed; with --quiet there
// is nothing (a nil writer).
func runProgress(stderr io.Writer, asJSON, quiet bool, label string) (io.Writer, func()) {
	p := tool.StartProgress(stderr, quiet, label)
	switch {
	case quiet:
		return nil, p.End
	case asJSON:
		return p.Writer(), p.End
	}
	return p.LineWriter(), p.End
}

// outputFlags are an experiment's --json and --quiet.
type outputFlags struct{ asJSON, quiet bool }

// searchProgress shows the experiments' searches on stderr: a
// progress line per search and, without --json, a line per level.
func searchProgress(stderr io.Writer, asJSON, quiet bool) experiments.SearchObserver {
	return func(label string) (func(consequence.Progress), func()) {
		return tool.NewSearchProgress(stderr, label, quiet, !asJSON)
	}
}
