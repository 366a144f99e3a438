package tool

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progressMode says how a long run shows that it is alive on stderr.
type progressMode uint8

const (
	// progressOff shows nothing: --quiet, or stderr is not a file (a
	// program's own writer, as Program.Run's callers pass in tests, gets
	// output that is a function of the run alone).
	progressOff progressMode = iota
	// progressTerminal rewrites one status line in place.
	progressTerminal
	// progressPlain writes a plain line every PlainProgressEvery: stderr
	// is a pipe or a file (a CI log, `2> log`, `| tee`).
	progressPlain
)

// PlainProgressEvery is how often a run whose stderr is not a terminal
// writes a progress line.
const PlainProgressEvery = 10 * time.Second

// progressModeOf is the mode for stderr w: off with quiet or when w is
// not an *os.File, terminal for a character device, plain otherwise.
func progressModeOf(w io.Writer, quiet bool) progressMode {
	if quiet {
		return progressOff
	}
	if _, ok := w.(*os.File); !ok {
		return progressOff
	}
	if isTerminal(w) {
		return progressTerminal
	}
	return progressPlain
}

// progressLine shows a long run's status on stderr: on a terminal a line
// rewritten every progressInterval and erased at the end, elsewhere a
// plain line every PlainProgressEvery. The run reports its status with
// set, from any goroutine, as often as it likes; the clock is read only
// by the progress line's own goroutine, in the shell, never by the
// deterministic code whose status it shows.
type progressLine struct {
	w     io.Writer
	mode  progressMode
	label string
	now   func() time.Time
	start time.Time

	mu     sync.Mutex
	status string
	shown  bool // a terminal status line is on screen

	stop  chan struct{}
	done  chan struct{}
	ended sync.Once
}

// startProgress starts a progress line labelled label ("" for none) on w
// in mode, on the wall clock.
func startProgress(w io.Writer, mode progressMode, label string) *progressLine {
	every := progressInterval
	if mode == progressPlain {
		every = PlainProgressEvery
	}
	var ticks <-chan time.Time
	var ticker *time.Ticker
	if mode != progressOff {
		ticker = time.NewTicker(every)
		ticks = ticker.C
	}
	p := startProgressClock(w, mode, label, time.Now, ticks)
	if ticker != nil {
		go func() { <-p.done; ticker.Stop() }()
	}
	return p
}

// startProgressClock is startProgress with its clock and ticks given
// (tests drive them by hand). A nil ticks starts no goroutine.
func startProgressClock(w io.Writer, mode progressMode, label string, now func() time.Time, ticks <-chan time.Time) *progressLine {
	p := &progressLine{w: w, mode: mode, label: label, now: now, start: now(), stop: make(chan struct{}), done: make(chan struct{})}
	if mode == progressOff || ticks == nil {
		close(p.done)
		return p
	}
	go p.run(ticks)
	return p
}

func (p *progressLine) run(ticks <-chan time.Time) {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		case <-ticks:
			p.draw()
		}
	}
}

// draw writes the status once.
func (p *progressLine) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	status := p.status
	if status == "" {
		status = "running"
	}
	elapsed := p.now().Sub(p.start).Round(100 * time.Millisecond)
	label := ""
	if p.label != "" {
		label = p.label + ": "
	}
	switch p.mode {
	case progressTerminal:
		fmt.Fprintf(p.w, "\r%s%s, %v elapsed\x1b[K", label, status, elapsed)
		p.shown = true
	case progressPlain:
		fmt.Fprintf(p.w, "%s%s (%v elapsed)\n", label, status, elapsed.Round(time.Second))
	}
}

// set replaces the status the next line shows. Safe for concurrent use.
func (p *progressLine) set(status string) {
	if p == nil || p.mode == progressOff {
		return
	}
	p.mu.Lock()
	p.status = status
	p.mu.Unlock()
}

// setf is set with a format, formatted only when the line is shown.
func (p *progressLine) setf(format string, args ...any) {
	if p == nil || p.mode == progressOff {
		return
	}
	p.set(fmt.Sprintf(format, args...))
}

// println writes a line of its own to w: on a terminal it first erases
// the status line, which the next tick draws again.
func (p *progressLine) println(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	fmt.Fprintln(p.w, line)
}

// erase clears a terminal status line; p.mu is held.
func (p *progressLine) erase() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// end stops the progress line and erases a terminal status line. It may
// be called more than once.
func (p *progressLine) end() {
	if p == nil {
		return
	}
	p.ended.Do(func() {
		close(p.stop)
		<-p.done
		p.mu.Lock()
		p.erase()
		p.mu.Unlock()
	})
}

// Writer returns an io.Writer whose every line becomes the status: for
// code that reports its progress as lines (the experiments' Progress).
func (p *progressLine) Writer() io.Writer { return statusWriter{p} }

type statusWriter struct{ p *progressLine }

func (s statusWriter) Write(b []byte) (int, error) {
	line := string(b)
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	if line != "" {
		s.p.set(line)
	}
	return len(b), nil
}
