package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// A checkStage is one search the scoreboard runs on a bug, in order,
// until one finds a violation: the name the board prints and the flags.
type checkStage struct {
	Name string
	Args []string
}

// checkStages are the searches: BFS over the fault-free schedules, then
// random walks checking the safety properties at every step (the depth a
// BFS cannot reach, covered sparsely), fault-free, with a crash that
// lasts and messages duplicated and overtaken, with a message lost
// (raft's messages are declared unreliable), and with a node restarted at
// once and a message later than the declared delay (a restart inside an
// election; a leader's messages that reach a node only after it has
// campaigned). Each is bounded by depth,
// states or walks, never by wall time, so the board is a function of the
// corpus and the plan. Walks with two losses or with a loss and a crash
// are left out: the bounded property LeaderWithin fails along them on
// the unmodified library (each lost vote costs an election round).
func checkStages(p Plan) []checkStage {
	walk := []string{"--strategy", "walk", "--walks", strconv.Itoa(p.Walks), "--dmax", strconv.Itoa(p.WalkDepth), "--weights", faultWeights}
	return []checkStage{
		{"bfs", []string{"--max-depth", strconv.Itoa(p.CheckDepth), "--max-states", strconv.Itoa(p.CheckStates)}},
		{"walk", walk},
		{"walk+crash", append(slices.Clone(walk), "--crashes", "1", "--crash-downtime", "20s", "--duplicates", "2", "--reorders", "2")},
		{"walk+loss", append(slices.Clone(walk), "--losses", "1", "--duplicates", "1", "--reorders", "2")},
		{"walk+reset+delay", append(slices.Clone(walk), "--resets", "1", "--delays", "1")},
	}
}

// faultWeights weigh every fault a stage allows as the steering rounds'
// walks do (steering.DefaultWalkWeights: 0.02; every other kind weighs 1):
// a fault is a rare event along a walk, not one of the first steps.
// Weighed like deliveries, a walk spends its budget before the first
// election, and a crash or a late message never meets a leader at work.
const faultWeights = "crash=0.02,reset=0.02,lose=0.02,duplicate=0.02,deliver-ahead=0.02,delay=0.02"

// The output formats the board reads: check --json's and emulate --json's.
const (
	checkFormat   = "crystalball-check/1"
	emulateFormat = "crystalball-emulate/1"
)

// checkOut is the part of check --json's object the board reads.
type checkOut struct {
	Format      string  `json:"format"`
	Unique      int     `json:"unique"`
	Depth       int     `json:"depth"`
	WallSeconds float64 `json:"wall_seconds"`
	Violations  []struct {
		Property string `json:"property"`
		Kind     string `json:"kind"`
		Depth    int    `json:"depth"`
	} `json:"violations"`
	// Confirmed are check --confirm's verdicts on Violations, in order.
	Confirmed []emulation.PathJudgement `json:"confirmed"`
}

// CheckResult is what the searches of one build found.
type CheckResult struct {
	// Stage names the search that found the violation ("" if none did)
	// and Property its property, Depth its depth. States sums the
	// searches' unique states and walk steps, Seconds their wall time,
	// up to the finding.
	Stage    string  `json:"stage,omitempty"`
	Property string  `json:"property,omitempty"`
	Depth    int     `json:"depth"`
	States   int     `json:"states"`
	Seconds  float64 `json:"seconds"`
	// Crash is a handler's panic the search hit (the library crashed).
	Crash string `json:"crash,omitempty"`
	// Confirmed is the directed run's verdict on the finding (check
	// --confirm: the emulator forced along its path); Diverged why a
	// model-only finding's step could not be taken.
	Confirmed emulation.PathVerdict `json:"confirmed,omitempty"`
	Diverged  string                `json:"diverged,omitempty"`
}

// Found says whether a search found the bug.
func (c CheckResult) Found() bool { return c.Stage != "" }

// runChecks runs the stages on bin until one finds a violation.
func runChecks(ctx context.Context, bin, service string, p Plan) (CheckResult, error) {
	var res CheckResult
	for _, st := range checkStages(p) {
		args := append([]string{"check", "--service", service, "--nodes", strconv.Itoa(p.Nodes), "--fix", "all",
			"--budget", "0", "--workers", "1", "--confirm", "--json", "--quiet"}, st.Args...)
		start := time.Now()
		stdout, stderr, err := run(ctx, bin, args)
		if err != nil {
			if crash := panicOf(stderr); crash != "" {
				res.Stage, res.Property, res.Crash, res.Seconds = st.Name, "panic", crash, res.Seconds+time.Since(start).Seconds()
				return res, nil
			}
			return res, fmt.Errorf("realbugs: %s %s: %w\n%s", bin, strings.Join(args, " "), err, stderr)
		}
		var out checkOut
		if err := json.Unmarshal(stdout, &out); err != nil || out.Format != checkFormat {
			return res, fmt.Errorf("realbugs: reading check's output (format %q, want %q): %v", out.Format, checkFormat, err)
		}
		res.Depth, res.States, res.Seconds = max(res.Depth, out.Depth), res.States+out.Unique, res.Seconds+out.WallSeconds
		if len(out.Violations) > 0 {
			v := out.Violations[0]
			res.Stage, res.Property, res.Depth = st.Name, v.Property, v.Depth
			if len(out.Confirmed) > 0 {
				res.Confirmed, res.Diverged = out.Confirmed[0].Verdict, out.Confirmed[0].Detail
			}
			return res, nil
		}
	}
	return res, nil
}

// emulateOut is the part of emulate --json's object the board reads.
type emulateOut struct {
	Format      string           `json:"format"`
	Result      emulation.Result `json:"result"`
	Predictions []predictionOut  `json:"predictions"`
	FirstRoundS float64          `json:"first_round_s"`
}

// predictionOut is the part of a prediction of emulate --json the board
// reads: with --confirm, the directed run's verdict on it.
type predictionOut struct {
	Property        string                   `json:"property"`
	Kind            string                   `json:"kind"`
	FirstPredictedS float64                  `json:"first_predicted_s"`
	Confirmed       *emulation.PathJudgement `json:"confirmed"`
}

// EmulateResult is one emulated run, judged.
type EmulateResult struct {
	Seed uint64 `json:"seed"`
	// Alarms names what went wrong: a safety property violated, a
	// bounded property's outage, a history that is not linearizable, a
	// liveness property failing at the end, or a panic. First is the
	// first safety violation's or outage's virtual time.
	Alarms []string      `json:"alarms,omitempty"`
	First  time.Duration `json:"first_ns,omitempty"`
	// Predicted is the earliest prediction (--mode debug) of a property
	// among Alarms, in virtual time (0: none).
	Predicted time.Duration `json:"predicted_ns,omitempty"`
	// FirstRound is when the run's first steering round started (0: an
	// off run, or no round): an alarm before it bit at start, before any
	// prediction could come.
	FirstRound time.Duration `json:"first_round_ns,omitempty"`
	// Verdicts are a watch run's predictions (--mode debug --confirm),
	// each with its directed run's verdict.
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Failed is set when the run stopped with an error of the toolchain
	// itself (exit status 1: a replayed object diverging from the live
	// one at a checkpoint, say), neither the service's panic nor a usage
	// error: the message. Such a run raised no alarm the board can
	// judge, and is counted apart (Totals.RunsFailed).
	Failed string `json:"failed,omitempty"`
}

// Verdict is one prediction of a watch run and what forcing the
// emulator along its path said of it.
type Verdict struct {
	Property string                `json:"property"`
	Verdict  emulation.PathVerdict `json:"verdict"`
}

// emulateArgs are one emulated run's flags.
func emulateArgs(service string, seed uint64, p Plan, mode []string) []string {
	args := []string{"emulate", "--service", service, "--nodes", strconv.Itoa(p.Nodes), "--fix", "all",
		"--seed", strconv.FormatUint(seed, 10), "--duration", p.Duration.String(), "--json", "--quiet"}
	args = append(args, p.Faults...)
	return append(args, mode...)
}

// runEmulate runs and judges one emulated run.
func runEmulate(ctx context.Context, bin string, args []string, seed uint64) (EmulateResult, error) {
	res := EmulateResult{Seed: seed}
	stdout, stderr, err := run(ctx, bin, args)
	if err != nil {
		if crash := panicOf(stderr); crash != "" {
			res.Alarms = []string{"panic: " + crash}
			return res, nil
		}
		if failed := failureOf(err, stderr); failed != "" {
			res.Failed = failed
			return res, nil
		}
		return res, fmt.Errorf("realbugs: %s %s: %w\n%s", bin, strings.Join(args, " "), err, stderr)
	}
	var out emulateOut
	if err := json.Unmarshal(stdout, &out); err != nil || out.Format != emulateFormat {
		return res, fmt.Errorf("realbugs: reading emulate's output (format %q, want %q): %v", out.Format, emulateFormat, err)
	}
	judge(&res, out)
	return res, nil
}

// judge fills res's alarms, first alarm time and earliest prediction.
func judge(res *EmulateResult, out emulateOut) {
	first := func(at time.Duration) {
		if res.First == 0 || at < res.First {
			res.First = at
		}
	}
	r := out.Result
	for _, s := range r.Safety {
		if s.ViolatedStates > 0 {
			res.Alarms = append(res.Alarms, s.Name)
			first(s.FirstViolation)
		}
	}
	for _, t := range r.Timed {
		if t.Outages > 0 {
			res.Alarms = append(res.Alarms, t.Name)
			first(t.Longest.Start)
			for _, o := range t.List {
				first(o.Start)
			}
		}
	}
	for _, l := range r.Liveness {
		if !l.Holds && !slices.Contains(res.Alarms, l.Name) {
			res.Alarms = append(res.Alarms, l.Name)
			first(r.VirtualDuration)
		}
	}
	for _, h := range r.History {
		if !h.Holds {
			res.Alarms = append(res.Alarms, h.Name)
			first(r.VirtualDuration)
		}
	}
	for _, p := range out.Predictions {
		at := time.Duration(p.FirstPredictedS * float64(time.Second))
		if slices.Contains(res.Alarms, p.Property) && (res.Predicted == 0 || at < res.Predicted) {
			res.Predicted = at
		}
		if p.Confirmed != nil {
			res.Verdicts = append(res.Verdicts, Verdict{Property: p.Property, Verdict: p.Confirmed.Verdict})
		}
	}
	res.FirstRound = time.Duration(out.FirstRoundS * float64(time.Second))
}

// run runs bin with args and returns its standard output and error.
func run(ctx context.Context, bin string, args []string) (stdout, stderr []byte, err error) {
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		return nil, e.Bytes(), fmt.Errorf("realbugs: running %s: %w", bin, err)
	}
	return o.Bytes(), e.Bytes(), err
}

// panicOf returns the panic a failed run reported on its standard
// error ("" if it failed otherwise).
func panicOf(stderr []byte) string {
	for line := range strings.Lines(string(stderr)) {
		if strings.Contains(line, "panicked") || strings.HasPrefix(line, "panic: ") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// failureOf returns the error a run that failed with exit status 1 (the
// command's status for an error that is not a usage error) reported
// last on its standard error, "" for any other failure.
func failureOf(err error, stderr []byte) string {
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		return ""
	}
	last := ""
	for line := range strings.Lines(string(stderr)) {
		if t := strings.TrimSpace(line); t != "" {
			last = t
		}
	}
	if last == "" {
		return "exit status 1"
	}
	return last
}
