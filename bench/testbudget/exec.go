package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// record is one test binary's cost, one JSON line of the records file.
type record struct {
	// Dir is the directory the binary ran in: its package's directory.
	Dir string `json:"dir"`
	// UserSeconds and SysSeconds are the binary's CPU time, including
	// the processes it started and waited for.
	UserSeconds float64 `json:"user_s"`
	SysSeconds  float64 `json:"sys_s"`
	WallSeconds float64 `json:"wall_s"`
	// MaxRSSKiB is the peak resident set of the binary (or of its largest
	// waited-for child).
	MaxRSSKiB int64 `json:"max_rss_kib"`
	ExitCode  int   `json:"exit"`
}

// cpu is the record's CPU time.
func (r record) cpu() time.Duration {
	return time.Duration((r.UserSeconds + r.SysSeconds) * float64(time.Second))
}

// runExec is `testbudget exec -records FILE BINARY ARGS...`. It returns
// the exit code to leave with.
func runExec(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("testbudget exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	records := fs.String("records", "", "append the binary's `FILE` record here (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *records == "" || fs.NArg() == 0 {
		fmt.Fprintln(stderr, "testbudget exec: usage: testbudget exec -records FILE BINARY [ARGS...]")
		return 2
	}
	rec, err := measure(fs.Arg(0), fs.Args()[1:])
	if err != nil {
		fmt.Fprintf(stderr, "testbudget exec: %v\n", err)
		return 1
	}
	if err := appendRecord(*records, rec); err != nil {
		// The tests ran; losing their cost must not hide their result,
		// but it must be seen.
		fmt.Fprintf(stderr, "testbudget exec: %v\n", err)
		if rec.ExitCode == 0 {
			return 1
		}
	}
	return rec.ExitCode
}

// measure runs the binary with the caller's stdio and reports its cost.
func measure(bin string, args []string) (record, error) {
	dir, err := os.Getwd()
	if err != nil {
		return record{}, fmt.Errorf("working directory: %w", err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return record{}, fmt.Errorf("start %s: %w", bin, err)
	}
	done := make(chan struct{})
	go forward(sigs, cmd.Process, done)
	werr := cmd.Wait()
	close(done)
	rec := record{Dir: dir, WallSeconds: time.Since(began).Seconds()}
	var exitErr *exec.ExitError
	if werr != nil && !errors.As(werr, &exitErr) {
		return record{}, fmt.Errorf("wait for %s: %w", bin, werr)
	}
	st := cmd.ProcessState
	rec.UserSeconds, rec.SysSeconds = st.UserTime().Seconds(), st.SystemTime().Seconds()
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		rec.MaxRSSKiB = ru.Maxrss
	}
	rec.ExitCode = exitCode(st)
	return rec, nil
}

// forward passes the signals go test sends (on its timeout, or ^C) to the
// test binary until it exits.
func forward(sigs <-chan os.Signal, p *os.Process, done <-chan struct{}) {
	for {
		select {
		case s := <-sigs:
			_ = p.Signal(s) // the binary may have exited meanwhile
		case <-done:
			return
		}
	}
}

// exitCode is the status to leave with: the binary's, or 128+signal as a
// shell reports a killed process.
func exitCode(st *os.ProcessState) int {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return st.ExitCode()
}

// appendRecord adds one line to the records file. Each line is written by
// one write(2) on a file opened O_APPEND, so binaries that go test runs
// side by side do not interleave their records.
func appendRecord(path string, rec record) error {
	line, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("encode record: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("records file: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("records file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("records file %s: %w", path, err)
	}
	return nil
}
