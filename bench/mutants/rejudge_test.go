package main

import (
	"testing"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
)

func TestTellsFromTheOriginal(t *testing.T) {
	p := offlineResult{Found: true, Property: "P"}
	confirmed := offlineResult{Found: true, Property: "P", Confirmed: true}
	cases := []struct {
		name      string
		mut, orig offlineResult
		want      bool
	}{
		{"nothing found", offlineResult{}, offlineResult{}, false},
		{"the original finds nothing", p, offlineResult{}, true},
		{"the original finds another property", p, offlineResult{Found: true, Property: "Q"}, true},
		{"the same, neither confirmed", p, p, false},
		{"the same, both confirmed", confirmed, confirmed, false},
		{"the same, only the mutant's confirmed", confirmed, p, true},
		{"the same, only the original's confirmed", p, confirmed, false},
	}
	for _, c := range cases {
		if got := c.mut.tells(c.orig); got != c.want {
			t.Errorf("%s: tells = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMergeRejudgesOfflineVerdicts: a board scores the outcomes by the
// merging program's rule, from the facts the result files hold.
func TestMergeRejudgesOfflineVerdicts(t *testing.T) {
	orig := offlineResult{Found: true, Property: "P"}
	mut := offlineResult{Found: true, Property: "P", Confirmed: true}
	res := shardResult{
		Baselines: []baseline{{Service: "s", Seed: 1, Offline: orig}},
		Outcomes: []outcome{
			{Mutant: mutantOf("s", 1), Seed: 1, Killed: true, AtStart: true, Offline: mut},
			{Mutant: mutantOf("s", 2), Seed: 1, Offline: mut, Alarms: map[string]string{"P": "model-only"}, FalseAlarm: true},
			{Mutant: mutantOf("s", 3), Seed: 1, Offline: orig},
		},
	}
	b := tallyBoard(manifest{}, "all", []uint64{1}, res)
	if b.Total.CaughtBeforeBite != 1 || b.Total.FoundOffline != 1 {
		t.Errorf("killed: caught %d found offline %d, want 1 and 1", b.Total.CaughtBeforeBite, b.Total.FoundOffline)
	}
	if b.Total.LatentConfirmed != 1 || b.Total.FalseAlarms != 0 || b.Total.FalseAlarmsReal != 1 {
		t.Errorf("survivors: latent confirmed %d, false alarms %d, real %d; want 1, 0, 1", b.Total.LatentConfirmed, b.Total.FalseAlarms, b.Total.FalseAlarmsReal)
	}
	if b.Outcomes[2].Latent {
		t.Error("the original's own finding made a survivor latent")
	}
}

func mutantOf(service string, id int) mutate.Mutant { return mutate.Mutant{ID: id, Service: service} }
