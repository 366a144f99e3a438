package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
)

func TestMain(m *testing.M) { livetest.VerifyTestMain(m) }

// TestReportHasEveryConfiguration runs a small measurement (3 nodes, one
// short phase of each configuration) and checks what the report must
// hold whatever the machine's speed: every configuration timed events and
// put bytes on the wire; the plain cluster ran no layer (no immediate
// check, checkpoint, round or layer byte); the immediate one checked every
// event it timed (give or take the one a node was stepping as the phase
// began) and took checkpoints but ran no round; the steered one
// ran rounds too; the ratios are taken against plain; and the table and
// the JSON carry them. No figure is compared with a bound: those depend on
// the machine (docs/PERFORMANCE.md has them).
func TestReportHasEveryConfiguration(t *testing.T) {
	cfg := Config{Nodes: 3, Rounds: 1, Warmup: 200 * time.Millisecond, Phase: 200 * time.Millisecond, MinEvents: 30,
		MaxPhase: time.Minute, Interval: 10 * time.Millisecond, Snapshots: 200 * time.Millisecond,
		SteerStates: 300, SteerTime: 200 * time.Millisecond}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.deadline())
	defer cancel()
	var log bytes.Buffer
	rep, err := run(ctx, cfg, &log)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, s := range []Summary{rep.Plain, rep.Immediate, rep.Steered} {
		if s.Events < cfg.MinEvents || s.CPUNanosPerEvent <= 0 || s.WireBytesPerEvent <= 0 || s.P50Micros <= 0 || s.P99Micros < s.P50Micros {
			t.Errorf("%s: %+v", s.Config, s)
		}
	}
	if p := rep.Plain; p.ImmediateChecks != 0 || p.Checkpoints != 0 || p.Rounds != 0 || p.LayerBytesPerEvent != 0 || p.CPURatio != 1 {
		t.Errorf("plain ran layers: %+v", p)
	}
	if i := rep.Immediate; i.ImmediateChecks+uint64(cfg.Nodes) < i.Events || i.Checkpoints == 0 || i.Rounds != 0 || i.CPURatio <= 0 {
		t.Errorf("immediate: %+v", i)
	}
	if s := rep.Steered; s.ImmediateChecks == 0 || s.Checkpoints == 0 || s.Rounds == 0 || s.LayerBytesPerEvent <= 0 {
		t.Errorf("steered: %+v", s)
	}
	var table, js bytes.Buffer
	if err := printReport(&table, rep, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"plain", "immediate / plain: CPU per event", "steered / plain: CPU per event", "p99 µs"} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	if err := printReport(&js, rep, true); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Steered.Rounds != rep.Steered.Rounds || back.Immediate.P99Micros != rep.Immediate.P99Micros {
		t.Errorf("JSON %v: %s", err, js.String())
	}
}
