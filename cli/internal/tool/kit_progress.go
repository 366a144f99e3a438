package tool

import (
	"flag"
	"io"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// QuietFlag defines --quiet, as the built-in commands have it: no
// progress on stderr.
func QuietFlag(fs *flag.FlagSet) *bool { return quietFlag(fs) }

// Progress is a long run's progress on stderr, as the built-in commands
// show it: a status line on a terminal, a plain line every
// PlainProgressEvery on a pipe or a file, nothing with quiet or on a
// writer that is not a file. It reads the wall clock on a goroutine of
// its own; the run only sets its status.
type Progress struct{ line *progressLine }

// StartProgress starts a progress line labelled label on stderr; End
// stops it.
func StartProgress(stderr io.Writer, quiet bool, label string) *Progress {
	return &Progress{startProgress(stderr, progressModeOf(stderr, quiet), label)}
}

// Set replaces the status shown. Safe for concurrent use.
func (p *Progress) Set(status string) { p.line.set(status) }

// Writer returns a writer whose every line becomes the status.
func (p *Progress) Writer() io.Writer { return p.line.Writer() }

// LineWriter returns a writer whose every line is printed on stderr (on a
// terminal, above the status line) and becomes the status.
func (p *Progress) LineWriter() io.Writer { return lineWriter{p.line} }

// End stops the progress line and erases a terminal status line.
func (p *Progress) End() { p.line.end() }

type lineWriter struct{ p *progressLine }

func (l lineWriter) Write(b []byte) (int, error) {
	n, _ := statusWriter(l).Write(b)
	for _, line := range splitLines(string(b)) {
		l.p.println(line)
	}
	return n, nil
}

// splitLines splits s at its newlines, dropping empty lines.
func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// NewSearchProgress is NewProgress with --quiet and without the level
// lines (levels false: --json), as check shows a search.
func NewSearchProgress(w io.Writer, label string, quiet, levels bool) (level func(consequence.Progress), done func()) {
	p := newProgressMode(w, label, progressModeOf(w, quiet), levels && !quiet)
	return p.level, p.close
}

// ShowProgress shows the run's progress on stderr as emulate does (a
// status line on a terminal, a line every PlainProgressEvery elsewhere,
// nothing with quiet); the function returned ends it.
func (e *Emulation) ShowProgress(stderr io.Writer, quiet bool, label string) (end func()) {
	e.p.progress = startProgress(stderr, progressModeOf(stderr, quiet), label)
	return e.p.progress.end
}
