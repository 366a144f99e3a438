package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent, plus
// the build events of go 1.24 and later).
type event struct {
	Time       time.Time `json:"Time"`
	Action     string    `json:"Action"`
	Package    string    `json:"Package"`
	ImportPath string    `json:"ImportPath"`
	Test       string    `json:"Test"`
	Elapsed    float64   `json:"Elapsed"`
	Output     string    `json:"Output"`
}

// maxLine bounds one line of the stream; a longer line is cut there (the
// rest of it is skipped), so a test that prints without newlines cannot
// make the report allocate without bound.
const maxLine = 1 << 20

// errLineTooLong marks a line cut at maxLine.
var errLineTooLong = errors.New("testbudget: line longer than 1 MiB cut")

// readLine returns the next line without its newline, at most maxLine
// bytes of it. It returns io.EOF only when no bytes are left.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	cut := false
	for {
		chunk, err := r.ReadSlice('\n')
		if len(b)+len(chunk) > maxLine {
			chunk = chunk[:max(0, maxLine-len(b))]
			cut = true
		}
		b = append(b, chunk...)
		switch {
		case err == nil || (errors.Is(err, io.EOF) && len(b) > 0):
			line := strings.TrimSuffix(string(b), "\n")
			if cut {
				return line, errLineTooLong
			}
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return "", err
		}
	}
}

// parseEvent decodes a line of the stream; ok is false for a line that is
// not a go test event (the go command's own messages, a build error of an
// older toolchain), which the report prints as it is.
func parseEvent(line string) (ev event, ok bool) {
	if !strings.HasPrefix(line, "{") {
		return event{}, false
	}
	if err := json.Unmarshal([]byte(line), &ev); err != nil || ev.Action == "" {
		return event{}, false
	}
	return ev, true
}

// outputBuffer keeps the last maxBuffered bytes of a test's or package's
// output: a failing test's last lines are the ones that explain it.
type outputBuffer struct {
	lines   []string
	size    int
	dropped int
}

const maxBuffered = 1 << 20

func (b *outputBuffer) add(s string) {
	b.lines = append(b.lines, s)
	b.size += len(s)
	for b.size > maxBuffered && len(b.lines) > 1 {
		b.size -= len(b.lines[0])
		b.dropped += len(b.lines[0])
		b.lines = b.lines[1:]
	}
}

func (b *outputBuffer) writeTo(w io.Writer) {
	if b.dropped > 0 {
		fmt.Fprintf(w, "    [testbudget: %d earlier bytes of output left out]\n", b.dropped)
	}
	for _, l := range b.lines {
		io.WriteString(w, l)
		if !strings.HasSuffix(l, "\n") {
			io.WriteString(w, "\n")
		}
	}
}
