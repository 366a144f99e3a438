package cli

import (
	"io"

	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
)

// Progress is a long command's progress on stderr, as the built-in
// commands show it: a status line rewritten on a terminal, a plain line
// every 10 s when stderr is a pipe or a file (a CI log), nothing with
// --quiet or when stderr is not a file (a test's buffer). Its goroutine
// reads the wall clock; the run only sets the status.
type Progress = tool.Progress

// StartProgress starts a progress line labelled label on stderr; quiet
// shows nothing. End it with Progress.End.
func StartProgress(stderr io.Writer, quiet bool, label string) *Progress {
	return tool.StartProgress(stderr, quiet, label)
}
