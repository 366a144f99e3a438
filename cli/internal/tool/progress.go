package tool

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// progressPrinter shows a running search on stderr: one line per
// completed level (unless quiet levels are asked for) and a progress line
// (progressLine) naming the level being expanded: on a terminal rewritten
// twice a second, on a pipe or a file every PlainProgressEvery. Deep BFS
// levels take minutes; without it a search looks hung between level
// lines. A writer that is not a file gets the level lines only, so the
// output stays a pure function of the search.
type progressPrinter struct {
	w      io.Writer
	label  string
	levels bool
	line   *progressLine
}

// progressInterval is how often the terminal status line is redrawn.
const progressInterval = 500 * time.Millisecond

// newProgress starts a printer labelled label (may be empty) with level
// lines. Call close when the search returns; it stops the status
// goroutine.
func newProgress(w io.Writer, label string) *progressPrinter {
	return newProgressMode(w, label, progressModeOf(w, false), true)
}

// newProgressMode starts a printer whose progress line has mode; levels
// says whether it prints a line per completed level.
func newProgressMode(w io.Writer, label string, mode progressMode, levels bool) *progressPrinter {
	return &progressPrinter{w: w, label: label, levels: levels, line: startProgress(w, mode, label)}
}

// level is a consequence.Options.Progress callback.
func (p *progressPrinter) level(pr consequence.Progress) {
	p.line.setf("expanding depth %d (%d unique so far)", pr.Depth+1, pr.Unique)
	if p.levels {
		p.line.println(fmt.Sprintf("%sdepth %d: %d unique, %d in frontier, %v", p.prefix(), pr.Depth, pr.Unique, pr.Frontier, pr.Elapsed.Round(time.Millisecond)))
	}
}

func (p *progressPrinter) prefix() string {
	if p.label == "" {
		return ""
	}
	return p.label + ": "
}

// close stops the status line and erases it. It may be called more than
// once.
func (p *progressPrinter) close() { p.line.end() }

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
