package tool

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// progressPrinter shows a running search on stderr: one line per completed
// level and, when stderr is a terminal, a status line rewritten twice a
// second while a level is being expanded. Deep BFS levels take minutes;
// without the status line a search looks hung between level lines.
// Off a terminal (CI logs, tests) only the level lines are written, so the
// output stays a pure function of the search.
type progressPrinter struct {
	w     io.Writer
	label string
	tty   bool
	start time.Time

	mu     sync.Mutex
	last   consequence.Progress
	status bool // a status line is on screen and needs clearing

	stop   chan struct{}
	done   chan struct{}
	closer sync.Once
}

// progressInterval is how often the terminal status line is redrawn.
const progressInterval = 500 * time.Millisecond

// newProgress starts a printer labelled label (may be empty). Call close
// when the search returns; it stops the status goroutine.
func newProgress(w io.Writer, label string) *progressPrinter {
	p := &progressPrinter{w: w, label: label, tty: isTerminal(w), start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if !p.tty {
		close(p.done)
		return p
	}
	go p.tick()
	return p
}

// level is a consequence.Options.Progress callback.
func (p *progressPrinter) level(pr consequence.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	p.last = pr
	fmt.Fprintf(p.w, "%sdepth %d: %d unique, %d in frontier, %v\n", p.prefix(), pr.Depth, pr.Unique, pr.Frontier, pr.Elapsed.Round(time.Millisecond))
}

func (p *progressPrinter) tick() {
	defer close(p.done)
	t := time.NewTicker(progressInterval)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.mu.Lock()
			fmt.Fprintf(p.w, "\r%sexpanding depth %d (%d unique so far), %v elapsed\x1b[K", p.prefix(), p.last.Depth+1, p.last.Unique, time.Since(p.start).Round(100*time.Millisecond))
			p.status = true
			p.mu.Unlock()
		}
	}
}

// clear erases the status line; p.mu is held.
func (p *progressPrinter) clear() {
	if p.status {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.status = false
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
func (p *progressPrinter) close() {
	p.closer.Do(func() {
		if p.tty {
			close(p.stop)
		}
		<-p.done
		p.mu.Lock()
		p.clear()
		p.mu.Unlock()
	})
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
