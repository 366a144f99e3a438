package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// calibrationFormat versions a calibration file's lines.
const calibrationFormat = "crystalball-testbudget-calibration/1"

// The reference machine is the one docs/PERFORMANCE.md's figures are taken
// on (a 2-vCPU AMD EPYC VM). referenceRaceSeconds and referencePlainSeconds
// are one run of the reference workload's CPU there, quiet, built with and
// without the race detector (medians of 7 and 9 runs, 2026-12-02, load
// under 1: 0.61–0.67 s and 0.225–0.231 s): a machine whose run takes
// twice as long counts every CPU second of its tests as half a reference
// second.
const (
	referenceRaceSeconds  = 0.63
	referencePlainSeconds = 0.23
	// referenceStates sizes one run of the workload.
	referenceStates = 120_000
	// calibrationRuns is how many runs a calibration takes the median of:
	// one run can be caught by a burst of other work.
	calibrationRuns = 5
)

// calibration is one measurement of the reference workload on this
// machine, one JSON line of a calibration file.
type calibration struct {
	Format string `json:"format"`
	// Race is whether the workload ran under the race detector (it runs
	// under the same instrumentation as the tests it calibrates).
	Race bool `json:"race"`
	// Runs are the CPU seconds (user+system) of each run; Median is the
	// figure used.
	Runs   []float64 `json:"runs_s"`
	Median float64   `json:"median_s"`
	// Factor is Median over the reference machine's figure: how many CPU
	// seconds here are one reference second.
	Factor float64   `json:"factor"`
	CPU    string    `json:"cpu,omitempty"` // the CPU model, when /proc/cpuinfo names it
	At     time.Time `json:"at"`
}

// referenceSeconds is the reference machine's CPU for one run of the
// workload with the given instrumentation.
func referenceSeconds(race bool) float64 {
	if race {
		return referenceRaceSeconds
	}
	return referencePlainSeconds
}

// runCalibrate is `testbudget calibrate -out FILE`: it measures the
// reference workload and appends the calibration to FILE.
func runCalibrate(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testbudget calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "append the calibration to `FILE` (required)")
	runs := fs.Int("runs", calibrationRuns, "runs of the reference workload to take the median of")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *out == "" || fs.NArg() > 0 || *runs < 1 {
		fmt.Fprintln(stderr, "testbudget calibrate: usage: testbudget calibrate -out FILE [-runs N], N at least 1")
		return 2
	}
	c, err := calibrate(*runs)
	if err != nil {
		fmt.Fprintf(stderr, "testbudget calibrate: %v\n", err)
		return 1
	}
	if err := appendCalibration(*out, c); err != nil {
		fmt.Fprintf(stderr, "testbudget calibrate: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, c.describe())
	return 0
}

// calibrate times runs of the reference workload.
func calibrate(runs int) (calibration, error) {
	c := calibration{Format: calibrationFormat, Race: raceEnabled, CPU: cpuModel(), At: time.Now().UTC()}
	for range runs {
		runtime.GC() // every run starts from the same heap
		before, err := processCPU()
		if err != nil {
			return c, err
		}
		if got := referenceWork(referenceStates); got != referenceChecksum {
			return c, fmt.Errorf("the reference workload computed %#x, want %#x: it is not the calibrated one", got, referenceChecksum)
		}
		after, err := processCPU()
		if err != nil {
			return c, err
		}
		c.Runs = append(c.Runs, (after - before).Seconds())
	}
	c.Median = median(c.Runs)
	c.Factor = c.Median / referenceSeconds(c.Race)
	return c, nil
}

func (c calibration) describe() string {
	race := "without"
	if c.Race {
		race = "with"
	}
	cpu := ""
	if c.CPU != "" {
		cpu = " on " + c.CPU
	}
	return fmt.Sprintf("testbudget: calibration %s the race detector%s: %.3fs of CPU a run (median of %d), %.2f× the reference machine's %.3fs",
		race, cpu, c.Median, len(c.Runs), c.Factor, referenceSeconds(c.Race))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// processCPU is the CPU (user+system) this process has used, its runtime's
// own threads (the garbage collector's) included.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// cpuModel is /proc/cpuinfo's first "model name", or "".
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// referenceChecksum is what referenceWork(referenceStates) returns: a run
// that computes anything else did other work, and its time means nothing.
const referenceChecksum = 0x04ecec305c75936e

// refState is a state of the reference workload's graph: a few counters and
// a small map, as a service's state has.
type refState struct {
	vals [6]uint32
	tags map[uint8]uint16
}

// referenceWork is the calibration's workload: a breadth-first search of a
// fixed graph of small states, each successor cloned, encoded, hashed and
// looked up in a visited map, until `states` distinct states are found —
// the shape of the explorer's inner loop (allocation, maps, byte appends,
// hashing), in standard-library code only, so that it never changes when
// the project's own code does. It returns a checksum of what it visited.
func referenceWork(states int) uint64 {
	visited := make(map[uint64]struct{}, states)
	frontier := []refState{{tags: map[uint8]uint16{}}}
	var buf []byte
	var sum uint64
	for len(frontier) > 0 && len(visited) < states {
		var next []refState
		for _, s := range frontier {
			for a := range 7 {
				t := s.successor(a)
				buf = t.encode(buf[:0])
				h := fnv.New64a()
				h.Write(buf)
				k := h.Sum64()
				if _, seen := visited[k]; seen {
					continue
				}
				visited[k] = struct{}{}
				sum = sum*31 + k
				next = append(next, t)
				if len(visited) == states {
					return sum
				}
			}
		}
		frontier = next
	}
	return sum
}

// successor applies action a to a copy of s.
func (s refState) successor(a int) refState {
	t := refState{vals: s.vals, tags: make(map[uint8]uint16, len(s.tags)+1)}
	for k, v := range s.tags {
		t.tags[k] = v
	}
	switch {
	case a < len(t.vals):
		t.vals[a] = (t.vals[a]*7 + uint32(a) + 1) % 11
	default:
		k := uint8(t.vals[0] % 5)
		t.tags[k] = (t.tags[k] + 1) % 3
		if t.tags[k] == 0 {
			delete(t.tags, k)
		}
	}
	return t
}

// encode appends a canonical encoding of s (its map in key order).
func (s refState) encode(b []byte) []byte {
	for _, v := range s.vals {
		b = binary.AppendUvarint(b, uint64(v))
	}
	keys := make([]uint8, 0, len(s.tags))
	for k := range s.tags {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b = append(b, k)
		b = binary.AppendUvarint(b, uint64(s.tags[k]))
	}
	return b
}

// appendCalibration adds one line to a calibration file.
func appendCalibration(path string, c calibration) error {
	line, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode calibration: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("calibration file: %w", err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("calibration file %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("calibration file %s: %w", path, err)
	}
	return nil
}

// loadCalibrations reads a calibration file: every line one calibration.
// A missing file is an error (the Makefile writes it before the tests), as
// is a line that is not one of ours.
func loadCalibrations(path string) ([]calibration, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("testbudget: calibration: %w", err)
	}
	defer f.Close()
	var out []calibration
	br := bufio.NewReader(f)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("testbudget: calibration %s line %d: %w", path, n, err)
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		var c calibration
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return nil, fmt.Errorf("testbudget: calibration %s line %d: %w", path, n, err)
		}
		if c.Format != calibrationFormat || !(c.Median > 0) || !(c.Factor > 0) {
			return nil, fmt.Errorf("testbudget: calibration %s line %d: not a calibration: %q", path, n, line)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("testbudget: calibration %s holds none", path)
	}
	return out, nil
}

// recalibrate measures again and appends the result to the file.
func recalibrate(path string, runs int) (calibration, error) {
	c, err := calibrate(runs)
	if err != nil {
		return c, fmt.Errorf("testbudget: calibration: %w", err)
	}
	if err := appendCalibration(path, c); err != nil {
		return c, fmt.Errorf("testbudget: %w", err)
	}
	return c, nil
}

// slowest is the largest factor of the calibrations (0: none): a package
// is judged by the machine's slowest measured state, so that a machine
// that got busier while the suite ran does not fail a package for it.
func slowest(cals []calibration) float64 {
	f := 0.0
	for _, c := range cals {
		f = max(f, c.Factor)
	}
	return f
}
