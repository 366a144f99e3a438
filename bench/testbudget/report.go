package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// pkgRun is what the stream said of one package.
type pkgRun struct {
	name    string
	result  string // "pass", "fail", "skip"; "" while it runs
	elapsed float64
	output  outputBuffer             // output outside any test
	running map[string]*outputBuffer // tests started, not finished
	failed  []string
}

// testRun is one finished top-level test.
type testRun struct {
	Package string  `json:"package"`
	Test    string  `json:"test"`
	Result  string  `json:"result"`
	Seconds float64 `json:"wall_s"`
}

// stream follows a go test -json stream and prints it as go test would.
type stream struct {
	out    io.Writer
	pkgs   map[string]*pkgRun
	order  []string
	tests  []testRun
	builds map[string]bool // import paths whose build failed
	events int
	cpuOf  func(pkg string) (record, bool)
	// factor converts CPU seconds here to reference seconds (0: no
	// calibration).
	factor float64
}

func newStream(out io.Writer, cpuOf func(string) (record, bool)) *stream {
	return &stream{out: out, pkgs: map[string]*pkgRun{}, builds: map[string]bool{}, cpuOf: cpuOf}
}

// read consumes the whole stream.
func (s *stream) read(r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil && !errors.Is(err, errLineTooLong) {
			return fmt.Errorf("testbudget: reading the go test stream: %w", err)
		}
		ev, ok := parseEvent(line)
		if !ok {
			fmt.Fprintln(s.out, line)
			continue
		}
		s.events++
		s.handle(ev)
	}
}

func (s *stream) pkg(name string) *pkgRun {
	p := s.pkgs[name]
	if p == nil {
		p = &pkgRun{name: name, running: map[string]*outputBuffer{}}
		s.pkgs[name] = p
		s.order = append(s.order, name)
	}
	return p
}

func (s *stream) handle(ev event) {
	switch ev.Action {
	case "build-output":
		io.WriteString(s.out, ev.Output)
		return
	case "build-fail":
		s.builds[ev.ImportPath] = true
		return
	}
	if ev.Package == "" {
		return
	}
	p := s.pkg(ev.Package)
	if ev.Test == "" {
		s.packageEvent(p, ev)
		return
	}
	s.testEvent(p, ev)
}

func (s *stream) testEvent(p *pkgRun, ev event) {
	buf := p.running[ev.Test]
	switch ev.Action {
	case "run":
		if buf == nil {
			p.running[ev.Test] = &outputBuffer{}
		}
	case "output":
		if buf == nil {
			buf = &outputBuffer{}
			p.running[ev.Test] = buf
		}
		buf.add(ev.Output)
	case "pass", "skip", "fail":
		delete(p.running, ev.Test)
		if ev.Action == "fail" {
			p.failed = append(p.failed, ev.Test)
			if buf != nil {
				buf.writeTo(s.out)
			}
		}
		if !strings.Contains(ev.Test, "/") {
			s.tests = append(s.tests, testRun{Package: p.name, Test: ev.Test, Result: ev.Action, Seconds: ev.Elapsed})
		}
	}
}

func (s *stream) packageEvent(p *pkgRun, ev event) {
	switch ev.Action {
	case "output":
		p.output.add(ev.Output)
	case "pass", "skip", "fail":
		p.result, p.elapsed = ev.Action, ev.Elapsed
		s.printPackage(p)
	}
}

// printPackage prints the package's line, and on failure what explains
// it: its own output and the output of tests that never finished (a
// timeout or a panic).
func (s *stream) printPackage(p *pkgRun) {
	cost := fmt.Sprintf("%.1fs", p.elapsed)
	if rec, ok := s.cpuOf(p.name); ok {
		cost += fmt.Sprintf("  cpu %.1fs", rec.cpu().Seconds())
		if s.factor > 0 {
			cost += fmt.Sprintf(" (ref %.1fs)", rec.cpu().Seconds()/s.factor)
		}
	}
	switch p.result {
	case "skip":
		fmt.Fprintf(s.out, "?   \t%s\t[no test files]\n", p.name)
	case "pass":
		fmt.Fprintf(s.out, "ok  \t%s\t%s\n", p.name, cost)
	default:
		p.output.writeTo(s.out)
		names := make([]string, 0, len(p.running))
		for name := range p.running {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			fmt.Fprintf(s.out, "    [testbudget: %s had not finished]\n", name)
			p.running[name].writeTo(s.out)
		}
		fmt.Fprintf(s.out, "FAIL\t%s\t%s\n", p.name, cost)
	}
	p.output = outputBuffer{}
	p.running = map[string]*outputBuffer{}
}
