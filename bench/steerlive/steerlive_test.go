package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

// TestMeasurePermits runs the permit limiter (planted bug, three nodes,
// seed 1) for 2 minutes of virtual time in the three modes and pins the
// table: the runs are functions of their command lines, so every figure
// but the measured times is exact. The immediate check alone changes
// nothing here (the Lend it used to veto on a stale view of the lender
// is judged without the lender); steering's filters break the
// connections of the messages they drop, so the borrowers ask again and
// every property holds at the end, at the price of 11% of the actions.
func TestMeasurePermits(t *testing.T) {
	p := Plan{Targets: []Target{{Service: "permits", Nodes: 3}}, Seeds: []uint64{1}, Modes: Modes,
		Duration: "2m", Churn: "1/m", Breaks: "2/m"}
	reg := DefaultRegistry()
	defer reg.Close()
	runs, err := Measure(context.Background(), reg, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Score(p, runs)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	rep.Write(&b, false)
	const want = `permits: 3 nodes, 2m, churn 1/m, breaks 2/m; 2 liveness and bounded properties
  held, violations, outages: off/immediate/steer+immediate; cost, changed%: immediate/steer+immediate
  seed  held   cost  violations  outages  changed%
  1     2/2/2  0/0   0/0/0       0/0/0    0.00/11.41
  liveness cost: immediate 0 (0 of 1 seeds), steer+immediate 0 (0 of 1 seeds)
  violating off: 0 of 1 seeds; prevented: immediate 0 (caused 0), steer+immediate 0 (caused 0)
  actions changed: immediate 0.00%, steer+immediate 11.41%
  availability NoBorrowerStuck: 85.7/86.0/91.7%
  availability PermitsSettled: 98.6/98.4/93.7%
`
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	tot := rep.Totals()
	if tot.Runs != 3 || tot.LivenessCost[Immediate] != 0 || tot.LivenessCost[Steer] != 0 || tot.ViolatingOff != 0 ||
		tot.ChangedPct[Immediate] != 0 || tot.ChangedPct[Steer] != 11.41 {
		t.Errorf("totals: %+v", tot)
	}
	if _, err := json.Marshal(tot); err != nil {
		t.Fatal(err)
	}
}

// record is a synthetic run: its violations and the end verdicts of
// properties a and b.
func record(seed uint64, m Mode, violations int64, a, b bool) Record {
	return Record{Target: Target{Service: "s", Nodes: 3}, Seed: seed, Mode: m, Violations: violations,
		Properties: []Verdict{{Name: "a", Holds: a, Availability: 1}, {Name: "b", Holds: b}}, Interventions: 1, Handled: 4}
}

// TestScore: a property counts as a liveness cost when it holds off and
// fails steered in the same seed, never the other way round; a seed is
// prevented when it violates off and not steered, caused when the other
// way round.
func TestScore(t *testing.T) {
	p := Plan{Targets: []Target{{Service: "s", Nodes: 3}}, Seeds: []uint64{1, 2}, Modes: []Mode{Off, Steer}}
	runs := []Record{
		record(1, Off, 5, true, false), record(1, Steer, 0, false, true),
		record(2, Off, 0, true, true), record(2, Steer, 3, false, false),
	}
	rep, err := Score(p, runs)
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Services[0]
	if !slices.Equal(s.Cost, []int{3}) || !slices.Equal(s.CostSeeds, []int{2}) || s.ViolatingOff != 1 ||
		!slices.Equal(s.Prevented, []int{1}) || !slices.Equal(s.Caused, []int{1}) || s.changedPct(0) != 25 {
		t.Errorf("report: %+v", s)
	}
	if !slices.Equal(s.Rows[0].Held, []int{1, 1}) || !slices.Equal(s.Rows[0].Cost, []int{1}) || !slices.Equal(s.Rows[1].Cost, []int{2}) {
		t.Errorf("rows: %+v", s.Rows)
	}
	if _, err := Score(p, runs[:3]); err == nil {
		t.Error("a missing run scored")
	}
}

// TestFlags: the lists parse, and bad ones are usage errors naming the
// flag.
func TestFlags(t *testing.T) {
	ts, err := ParseTargets("permits:all@3, mutex", 5)
	if err != nil || !slices.Equal(ts, []Target{{"permits", "all", 3}, {"mutex", "", 5}}) {
		t.Errorf("targets: %v, %v", ts, err)
	}
	seeds, err := ParseSeeds("1-3,7,2")
	if err != nil || !slices.Equal(seeds, []uint64{1, 2, 3, 7}) {
		t.Errorf("seeds: %v, %v", seeds, err)
	}
	ms, err := ParseModes("steer+immediate,off")
	if err != nil || !slices.Equal(ms, []Mode{Off, Steer}) {
		t.Errorf("modes: %v, %v", ms, err)
	}
	for _, args := range [][]string{
		{"--services", "permits@x"}, {"--services", "permits,permits"}, {"--services", "nosuch"},
		{"--seeds", "3-1"}, {"--seeds", "x"}, {"--modes", "immediate"}, {"--modes", "off,on"}, {"extra"},
	} {
		var out, errb bytes.Buffer
		err := mainErr(context.Background(), DefaultRegistry(), args, &out, &errb)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), strings.TrimPrefix(args[0], "--")) {
			t.Errorf("%v: %v", args, err)
		}
	}
}
