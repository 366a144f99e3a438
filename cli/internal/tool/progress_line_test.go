package tool

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a writer the progress goroutine and the test share.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// When stderr is not a terminal a progress line is a plain line per tick
// (every PlainProgressEvery of wall time), naming the run's latest status
// and the time elapsed on the clock given; nothing is erased.
func TestPlainProgressLineEveryTick(t *testing.T) {
	var out lockedBuffer
	clock := time.Unix(0, 0)
	p := startProgressClock(&out, progressPlain, "experiment paxos", func() time.Time { return clock }, nil)
	clock = clock.Add(10 * time.Second)
	p.draw() // what a tick does
	p.set("3/10 runs done")
	clock = clock.Add(10 * time.Second)
	p.draw()
	p.end()
	want := "experiment paxos: running (10s elapsed)\nexperiment paxos: 3/10 runs done (20s elapsed)\n"
	if got := out.String(); got != want {
		t.Fatalf("plain progress:\n%q\nwant\n%q", got, want)
	}
	// The line's goroutine draws on each tick, until end.
	var ticked lockedBuffer
	ticks := make(chan time.Time)
	q := startProgressClock(&ticked, progressPlain, "", func() time.Time { return time.Unix(0, 0) }, ticks)
	q.set("emulated 5s of 1m0s")
	ticks <- time.Time{}
	q.end()
	if got := ticked.String(); got != "emulated 5s of 1m0s (0s elapsed)\n" {
		t.Fatalf("one tick: %q", got)
	}
}

// On a terminal the status line is rewritten in place and erased at the
// end; a line of its own (a finished level) erases it first.
func TestTerminalProgressLineIsErased(t *testing.T) {
	var out lockedBuffer
	p := startProgressClock(&out, progressTerminal, "", func() time.Time { return time.Unix(0, 0) }, nil)
	p.set("emulated 5s of 1m0s")
	p.draw() // what a tick does
	p.draw()
	p.println("depth 1: 3 unique")
	p.draw()
	p.end()
	line := "\remulated 5s of 1m0s, 0s elapsed\x1b[K"
	want := line + line + "\r\x1b[Kdepth 1: 3 unique\n" + line + "\r\x1b[K"
	if got := out.String(); got != want {
		t.Fatalf("terminal progress:\n%q\nwant\n%q", got, want)
	}
}

// --quiet shows nothing; a writer that is not a file (a program's own,
// as tests pass) gets nothing either; a file that is not a terminal gets
// plain lines.
func TestProgressModeOfStderr(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m := progressModeOf(f, false); m != progressPlain {
		t.Errorf("a file: mode %d, want plain", m)
	}
	if m := progressModeOf(f, true); m != progressOff {
		t.Errorf("--quiet: mode %d, want off", m)
	}
	if m := progressModeOf(&strings.Builder{}, false); m != progressOff {
		t.Errorf("a writer of the program's own: mode %d, want off", m)
	}
}
