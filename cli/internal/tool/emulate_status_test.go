package tool

import (
	"context"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// TestStatusLineDoesNotChangeTheRun: a deep-online-debugging run emulated
// in slices for its status line (a terminal) has the same result and the
// same predictions as one emulated at once (--json, a pipe): two runs of
// the same seed with rounds, so it also pins that a debugging run is a
// pure function of its seed. Its rounds search 500 states, not --mode
// debug's 50,000, and take no liveness walks, for 45 s: the slicing is
// what is tested, and the run keeps churn after the warm-up (a leave) and
// two predictions (the same two, at 9 s, as at 2,000 and 1,000 states).
// Two runs of 60 s at 50,000 took 21 s of CPU under the race detector,
// two of 45 s at 2,000 states 2.2 s; now 4,228 states a run, a quarter of
// 2,000's.
func TestStatusLineDoesNotChangeTheRun(t *testing.T) {
	run := func(status *strings.Builder) EmulateOutput {
		fs := flag.NewFlagSet("emulate", flag.ContinueOnError)
		p := emulateParams{services: testCatalog()}
		p.register(fs)
		if err := fs.Parse([]string{"--service", "randtree", "--nodes", "4", "--duration", "45s", "--churn", "2/m", "--mode", "debug", "--steer-states", "500", "--walks", "0", "--seed", "3"}); err != nil {
			t.Fatal(err)
		}
		if err := p.resolve(); err != nil {
			t.Fatal(err)
		}
		if status != nil {
			// A progress line that never ticks: the run is sliced all the same.
			p.progress = startProgressClock(status, progressTerminal, "", time.Now, nil)
		}
		out, err := runEmulation(context.Background(), &p)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var status strings.Builder
	whole, sliced := run(nil), run(&status)
	if a, b := whole.Result.String(), sliced.Result.String(); a != b {
		t.Errorf("the sliced run differs:\n%s\nagainst\n%s", b, a)
	}
	if len(whole.Predictions) == 0 || len(whole.Predictions) != len(sliced.Predictions) {
		t.Errorf("%d predictions at once, %d sliced (want the same, at least one)", len(whole.Predictions), len(sliced.Predictions))
	}
	for i := range min(len(whole.Predictions), len(sliced.Predictions)) {
		if a, b := whole.Predictions[i], sliced.Predictions[i]; a.Property != b.Property || a.FirstPredictedS != b.FirstPredictedS || a.Node != b.Node || a.Shape != b.Shape || a.Rounds != b.Rounds {
			t.Errorf("prediction %d: %+v at once, %+v sliced", i, a, b)
		}
	}
}

// TestStatusLineFollowsTheRun: a sliced run sets its progress line's
// status after each slice; Result.WallTime covers the whole run, from the
// clock given.
func TestStatusLineFollowsTheRun(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: 3, Seed: 1, Duration: 20 * time.Second,
		Workload: func(node.ID, bool) []node.Message { return []node.Message{randtree.JoinOverlay{Targets: []node.ID{1}}} }})
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Unix(0, 0)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	var status strings.Builder
	line := startProgressClock(&status, progressTerminal, "", now, nil)
	var seen []string
	res, err := runWithStatus(context.Background(), e, 20*time.Second, line, func(time.Duration) error {
		seen = append(seen, line.status)
		return nil
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"emulated 5s of 20s", "emulated 10s of 20s", "emulated 15s of 20s", "emulated 15s of 20s"}; strings.Join(seen, "|") != strings.Join(want, "|") {
		t.Errorf("statuses %q, want %q", seen, want)
	}
	if res.WallTime != time.Second || res.VirtualDuration != 20*time.Second {
		t.Errorf("wall %v, virtual %v; want 1s (two looks at the clock, a second apart) and 20s", res.WallTime, res.VirtualDuration)
	}
}
