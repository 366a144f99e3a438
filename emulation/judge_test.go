package emulation_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// TestTimedAvailabilityAndOutages: a liveness property that holds only
// while node 1 is up is judged over the run, at TimedConfig.Every: its
// availability is the share of the run node 1 was up, its one outage the
// downtime; the bounded twin (a bound of 5 s) reports the same outage,
// found when its bound passed, and a shorter downtime is no outage of it.
func TestTimedAvailabilityAndOutages(t *testing.T) {
	up := func(v node.View) error {
		if v.Service(1) == nil {
			return fmt.Errorf("n1 is down")
		}
		return nil
	}
	spec := testSpec(tcfg{nodes: 2}, node.Eventually("Up", up), node.Within("UpWithin", 5*time.Second, nil, up))
	var viols []emulation.Violation
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: 2, Seed: 1, StartSpread: time.Nanosecond,
		Timed:     emulation.TimedConfig{Every: time.Nanosecond},
		Observers: emulation.Observers{OnViolation: func(v emulation.Violation) { viols = append(viols, v) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return emulation.Epoch.Add(time.Duration(s) * time.Second) }
	for _, step := range []func() error{
		func() error { return e.RunUntil(at(10)) },
		func() error { return e.Down(1, false) },
		func() error { return e.RunUntil(at(30)) },
		func() error { return e.Up(1) },
		func() error { return e.RunUntil(at(40)) },
		func() error { return e.Down(1, false) },
		func() error { return e.RunUntil(at(43)) },
		func() error { return e.Up(1) },
		func() error { return e.RunUntil(at(60)) },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	r := e.Result()
	live, bounded := r.Timed[0], r.Timed[1]
	if live.Outages != 2 || live.Longest.Start != 10*time.Second || live.Longest.Length != 20*time.Second {
		t.Errorf("liveness: %+v, want two outages, the longest 20 s from 10 s", live)
	}
	if want := 37.0 / 60; live.Availability < want-1e-6 || live.Availability > want+1e-6 {
		t.Errorf("liveness availability %.4f, want %.4f (up 37 s of 60)", live.Availability, want)
	}
	if bounded.Outages != 1 || bounded.Longest != live.Longest || bounded.Availability != live.Availability {
		t.Errorf("bounded: %+v, want the 20 s outage alone (the 3 s one is within the bound)", bounded)
	}
	if len(viols) != 1 || !viols[0].At.Equal(at(15)) || viols[0].Property != "UpWithin" {
		t.Errorf("violations %v, want UpWithin at 15 s", viols)
	}
	if _, err := emulation.New(emulation.Config{Spec: spec, Nodes: 2, Timed: emulation.TimedConfig{Every: -1}}); err == nil {
		t.Error("a negative TimedConfig.Every is accepted")
	}
}
