package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "exec" {
		os.Exit(runExec(os.Args[2:], os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "calibrate" {
		os.Exit(runCalibrate(os.Args[2:], os.Stdout, os.Stderr))
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "report" {
		args = args[1:]
	}
	os.Exit(runReport(args, os.Stdin, os.Stdout, os.Stderr))
}

// reportConfig is `testbudget report`'s flags.
type reportConfig struct {
	records, summary string
	calibration      string
	recalibrate      bool
	runs             int
	budget           time.Duration
	topPackages      int
	topTests         int
}

func parseReport(args []string, stderr io.Writer) (reportConfig, error) {
	var c reportConfig
	fs := flag.NewFlagSet("testbudget report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: go test -json -exec \"testbudget exec -records FILE\" ./... | testbudget report -records FILE [flags]")
		fs.PrintDefaults()
	}
	fs.StringVar(&c.records, "records", "", "the records `FILE` the exec wrapper appended to (without it, packages are judged on wall time)")
	fs.StringVar(&c.summary, "summary", "", "write the figures as JSON to `FILE`")
	fs.StringVar(&c.calibration, "calibration", "", "the calibration `FILE` testbudget calibrate wrote: judge CPU in seconds of the reference machine")
	fs.BoolVar(&c.recalibrate, "recalibrate", false, "calibrate again when the stream ends (appended to -calibration's file) and judge by the slower calibration")
	fs.IntVar(&c.runs, "runs", calibrationRuns, "runs of the reference workload -recalibrate takes the median of")
	fs.DurationVar(&c.budget, "budget", 2*time.Minute, "fail when a package's tests use more CPU than this, in reference seconds with -calibration (0: no budget)")
	fs.IntVar(&c.topPackages, "top-packages", 10, "packages to list, costliest first")
	fs.IntVar(&c.topTests, "top", 20, "tests to list, slowest first")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("testbudget report: unexpected argument %q (the go test stream comes on stdin)", fs.Arg(0))
	case c.budget < 0:
		return c, fmt.Errorf("testbudget report: -budget %v is negative", c.budget)
	case c.topPackages < 0 || c.topTests < 0:
		return c, errors.New("testbudget report: -top and -top-packages must not be negative")
	case c.runs < 1:
		return c, errors.New("testbudget report: -runs must be at least 1")
	case c.recalibrate && c.calibration == "":
		return c, errors.New("testbudget report: -recalibrate needs -calibration")
	}
	return c, nil
}

// runReport is `testbudget report`; it returns the exit code.
func runReport(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseReport(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	rs := records{path: cfg.records}
	if cfg.records != "" {
		wd, err := os.Getwd()
		if err == nil {
			rs.root, rs.module, err = findModule(wd)
		}
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	var cals []calibration
	if cfg.calibration != "" {
		if cals, err = loadCalibrations(cfg.calibration); err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
	}
	// A package's line prints its CPU when its record is already there
	// (the wrapper writes it before go test reports the package).
	cpuOf := func(pkg string) (record, bool) {
		recs, err := rs.load()
		if err != nil {
			return record{}, false
		}
		rec, ok := recs[pkg]
		return rec, ok
	}
	s := newStream(stdout, cpuOf)
	s.factor = slowest(cals)
	if err := s.read(stdin); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if s.events == 0 {
		fmt.Fprintln(stderr, "testbudget: no go test -json events on stdin")
		return 1
	}
	recs, err := rs.load()
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	if cfg.recalibrate {
		c, err := recalibrate(cfg.calibration, cfg.runs)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		cals = append(cals, c)
	}
	sum := summarize(s, recs, cfg.budget, cals)
	sum.Module = rs.module
	sum.print(stdout, cfg.topPackages, cfg.topTests)
	if cfg.summary != "" {
		if err := sum.write(cfg.summary); err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
	}
	if !sum.ok() {
		return 1
	}
	return 0
}
