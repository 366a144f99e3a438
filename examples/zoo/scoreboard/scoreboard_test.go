package scoreboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// One case, one seed, one emulated minute: the six runs are deterministic,
// so every figure is pinned. The planted bug shows off (a break while a
// client holds the lock), is predicted in debug before a minute is out,
// and does not show with steering. The twin never violates, but deep
// online debugging explores a silent reset of the server, which makes any
// in-memory lock server grant twice: a prediction on the twin, counted as
// a false positive (the twin is safe under the case's faults, breaks, not
// under every fault the predictor explores). Steering rounds explore the
// same faults (steering.DefaultFaults), so they predict as early as debug's
// (9.062 s; 19.062 s when they explored no break).
func TestScoreboardOneCase(t *testing.T) {
	const seed = 1
	var runs []scoreboard.Progress
	res, err := scoreboard.Run(context.Background(), scoreboard.Config{
		Cases:    []zoo.Case{lockCase()},
		Seeds:    []uint64{seed},
		Duration: time.Minute,
		OnRun:    func(p scoreboard.Progress) { runs = append(runs, p) },
	})
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	if res.Format != scoreboard.Format || len(res.Cases) != 1 || len(res.Cases[0].Seeds) != 1 || len(runs) != 6 ||
		res.Warmup != scoreboard.DefaultWarmup || res.Horizon != scoreboard.DefaultHorizon {
		t.Fatalf("seed=%d: structure: %+v (%d runs reported)", seed, res, len(runs))
	}
	for i, m := range []steering.Mode{steering.Off, steering.Debug, steering.Steer, steering.Off, steering.Debug, steering.Steer} {
		if p := runs[i]; p.Mode != m || p.Fixed != (i >= 3) || p.Case != "lock" || p.Seed != seed {
			t.Fatalf("run %d reported as %+v", i, p)
		}
	}
	c := res.Cases[0]
	s := c.Seeds[0]
	type figures struct {
		violations, episodes, breaks int64
		first, predicted             time.Duration // -1: none
		rounds                       int
	}
	got := func(r scoreboard.RunResult) figures {
		f := figures{violations: r.Violations, episodes: r.Episodes, breaks: r.Breaks, first: -1, predicted: -1, rounds: r.PredictingRounds}
		if r.Violations > 0 {
			f.first = r.FirstViolation.Round(time.Millisecond)
		}
		if r.Predicted {
			f.predicted = r.FirstPrediction.Round(time.Millisecond)
		}
		return f
	}
	want := map[string]figures{
		"bug off":    {violations: 5, episodes: 2, breaks: 4, first: 21911 * time.Millisecond, predicted: -1},
		"bug debug":  {breaks: 4, first: -1, predicted: 9062 * time.Millisecond, rounds: 6},
		"bug steer":  {breaks: 4, first: -1, predicted: 9062 * time.Millisecond, rounds: 6},
		"twin off":   {breaks: 4, first: -1, predicted: -1},
		"twin debug": {breaks: 4, first: -1, predicted: 9062 * time.Millisecond, rounds: 6},
		"twin steer": {breaks: 4, first: -1, predicted: 9062 * time.Millisecond, rounds: 1},
	}
	for name, r := range map[string]scoreboard.RunResult{"bug off": s.Bug.Off, "bug debug": s.Bug.Debug, "bug steer": s.Bug.Steer,
		"twin off": s.Twin.Off, "twin debug": s.Twin.Debug, "twin steer": s.Twin.Steer} {
		if g := got(r); g != want[name] {
			t.Errorf("seed=%d %s: %+v, want %+v", seed, name, g, want[name])
		}
	}
	wantSum := scoreboard.Summary{Runs: 1, Predicted: 1, PredictedInTime: 1, OccurredOff: 1, ViolatedStatesOff: 5, Prevented: 1, FalsePositives: 1}
	if c.Summary != wantSum || res.Total != wantSum {
		t.Errorf("seed=%d: summary %+v, total %+v, want %+v", seed, c.Summary, res.Total, wantSum)
	}
	text := res.String()
	for _, line := range []string{
		"lock   MutualExclusion  1/1        1/1      1/1 (5 states)  0/1 (0 states)  1/1 (100%)  1/1         0/3",
		"lock seed 1 bug:  off 5 states violated from 0:21.910 | debug predicted at 0:09.062 (6 rounds)",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("text lacks %q:\n%s", line, text)
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m["format"] != scoreboard.Format || m["total"] == nil || m["cases"] == nil {
		t.Fatalf("JSON %s: %v", b, err)
	}
}

func TestConfigErrors(t *testing.T) {
	bad := func(mod func(*scoreboard.Config, *zoo.Case)) error {
		k := lockCase()
		cfg := scoreboard.Config{Seeds: []uint64{1}}
		mod(&cfg, &k)
		cfg.Cases = append(cfg.Cases, k)
		_, err := scoreboard.Run(context.Background(), cfg)
		return err
	}
	for name, mod := range map[string]func(*scoreboard.Config, *zoo.Case){
		"negative warm-up":    func(c *scoreboard.Config, _ *zoo.Case) { c.Warmup = -time.Second },
		"no seeds":            func(c *scoreboard.Config, _ *zoo.Case) { c.Seeds = []uint64{} },
		"warm-up too long":    func(c *scoreboard.Config, _ *zoo.Case) { c.Warmup = 3 * time.Minute },
		"twice":               func(c *scoreboard.Config, k *zoo.Case) { c.Cases = []zoo.Case{*k} },
		"no nodes":            func(_ *scoreboard.Config, k *zoo.Case) { k.Nodes = 0 },
		"unknown property":    func(_ *scoreboard.Config, k *zoo.Case) { k.Property = "Nope" },
		"negative break rate": func(_ *scoreboard.Config, k *zoo.Case) { k.Breaks = -1 },
		"negative heal":       func(c *scoreboard.Config, _ *zoo.Case) { c.Heal = -time.Second },
		"heal too long":       func(c *scoreboard.Config, _ *zoo.Case) { c.Heal = 2 * time.Minute },
		"negative budget":     func(c *scoreboard.Config, _ *zoo.Case) { c.MaxEvents = -1 },
	} {
		if err := bad(mod); !errors.Is(err, scoreboard.ErrConfig) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// RunOne runs one configuration as Run does: the planted bug off, with
// breaks ending Heal before the end, records its violation under
// FirstViolations (and the twin's liveness, which has none, stays empty).
func TestRunOne(t *testing.T) {
	const seed = 1
	cfg := scoreboard.Config{Duration: time.Minute, Heal: 10 * time.Second}
	r, err := scoreboard.RunOne(context.Background(), cfg, lockCase(), false, steering.Off, seed)
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	first, ok := r.FirstViolations["MutualExclusion"]
	if r.Violations == 0 || !ok || first != r.FirstViolation || len(r.LivenessFailed) != 0 {
		t.Fatalf("seed=%d: RunOne = %+v", seed, r)
	}
	if _, err := scoreboard.RunOne(context.Background(), scoreboard.Config{Heal: -1}, lockCase(), false, steering.Off, seed); !errors.Is(err, scoreboard.ErrConfig) {
		t.Fatalf("RunOne with a negative Heal: %v", err)
	}
	// An event budget is reported, and ends the run the same way every
	// time (within 1,024 events: this run is shorter than that).
	cfg.MaxEvents = 20
	a, err := scoreboard.RunOne(context.Background(), cfg, lockCase(), false, steering.Off, seed)
	if err != nil || !a.EventBudgetSpent {
		t.Fatalf("seed=%d: RunOne with 20 events: %+v, %v", seed, a, err)
	}
	b, _ := scoreboard.RunOne(context.Background(), cfg, lockCase(), false, steering.Off, seed)
	if a.Events != b.Events {
		t.Fatalf("seed=%d: two budgeted runs stopped after %d and %d events", seed, a.Events, b.Events)
	}
}
