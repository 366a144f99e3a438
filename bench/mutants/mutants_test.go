package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
	"github.com/seed6eee2ec7/crystalball/examples/zoo/scoreboard"
)

// goodManifest is a valid manifest of two mutants, encoded.
func goodManifest(t testing.TB) []byte {
	ms := []mutate.Mutant{
		{ID: 1, Service: "paxos", Op: mutate.OpCompare, File: "services/paxos/paxos.go", Func: "f", Line: 3, Site: 2},
		{ID: 2, Service: "zoo-retry", Op: mutate.OpDropSend, File: "examples/zoo/retry/retry.go", Func: "g", Line: 9, Site: 5},
	}
	b, err := json.Marshal(manifest{Format: manifestFormat, Seed: 1, PerOp: 4, Digest: digestOf(1, ms), Mutants: ms, Discarded: []discarded{}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReadManifest(t *testing.T) {
	good := goodManifest(t)
	if m, err := readManifest(bytes.NewReader(good)); err != nil || len(m.Mutants) != 2 {
		t.Fatalf("readManifest(good) = %d mutants, %v", len(m.Mutants), err)
	}
	bad := map[string]string{
		"not JSON":       "{",
		"format":         strings.Replace(string(good), manifestFormat, "other/1", 1),
		"digest":         strings.Replace(string(good), `"seed":1`, `"seed":2`, 1),
		"unknown field":  strings.Replace(string(good), `"seed":1`, `"seed":1,"x":0`, 1),
		"operator":       strings.Replace(string(good), mutate.OpCompare, "nope", 1),
		"duplicate ID":   strings.Replace(string(good), `"id":2`, `"id":1`, 1),
		"no service":     strings.Replace(string(good), `"service":"paxos"`, `"service":""`, 1),
		"negative ID":    strings.Replace(string(good), `"id":2`, `"id":-2`, 1),
		"empty document": "",
	}
	for name, in := range bad {
		if _, err := readManifest(strings.NewReader(in)); !errors.Is(err, errManifest) {
			t.Errorf("%s: readManifest error %v, want errManifest", name, err)
		}
	}
}

func FuzzReadManifest(f *testing.F) {
	f.Add(goodManifest(f))
	f.Add([]byte(`{"format":"crystalball-mutants-manifest/1","mutants":[{"id":0}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := readManifest(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, errManifest) {
				t.Fatalf("error %v does not wrap errManifest", err)
			}
			return
		}
		if digestOf(m.Seed, m.Mutants) != m.Digest {
			t.Fatal("accepted a manifest whose digest does not match")
		}
	})
}

func TestVerdicts(t *testing.T) {
	s := time.Second
	base := scoreboard.RunResult{FirstViolations: map[string]time.Duration{"Old": 5 * s}, LivenessFailed: []string{"L0"}}
	off := scoreboard.RunResult{FirstViolations: map[string]time.Duration{"Old": 5 * s, "B": 40 * s, "A": 30 * s},
		LivenessFailed: []string{"L0", "L1"}}
	got := killedBy(base, off)
	if want := []string{"safety:A", "safety:B", "liveness:L1"}; !slices.Equal(got, want) {
		t.Fatalf("killedBy = %v, want %v", got, want)
	}
	o := outcome{KilledBy: got, Off: off, Debug: scoreboard.RunResult{
		FirstViolations:  map[string]time.Duration{"A": 35 * s},
		FirstPredictions: map[string]time.Duration{"A": 20 * s, "B": 50 * s}}}
	o.judgePrediction(90 * s)
	if !o.Predicted || !o.InTime || o.Lead != 15*s {
		t.Fatalf("judgePrediction: predicted %v in time %v lead %v, want true true 15s", o.Predicted, o.InTime, o.Lead)
	}
	late := outcome{KilledBy: []string{"safety:B"}, Off: off, Debug: o.Debug}
	late.judgePrediction(90 * s)
	if !late.Predicted || late.InTime || late.Late != 10*s {
		t.Fatalf("a prediction after the violation counted in time")
	}
	// A liveness kill found dead at a round's snapshot is noted, and is
	// not a prediction.
	dead := outcome{KilledBy: []string{"liveness:L1"}, Debug: scoreboard.RunResult{FirstDeadAtStart: map[string]time.Duration{"L1": 30 * s}}}
	dead.judgePrediction(90 * s)
	if dead.Predicted || dead.InTime || !dead.DeadAtStart {
		t.Fatalf("dead at start: %+v", dead)
	}
	if prevented(base, got, scoreboard.RunResult{FirstViolations: map[string]time.Duration{"Old": s}, LivenessFailed: []string{"L0"}}) != true {
		t.Fatal("a steer run without the killing violations was not counted prevented")
	}
	if prevented(base, got, scoreboard.RunResult{LivenessFailed: []string{"L1"}}) {
		t.Fatal("a steer run ending with a liveness failure was counted prevented")
	}
	if prevented(base, got, scoreboard.RunResult{FirstViolations: map[string]time.Duration{"B": s}}) {
		t.Fatal("a steer run breaking a killing property was counted prevented")
	}
}

func TestOriginalFalseAlarm(t *testing.T) {
	b := baseline{Alarms: map[string]string{"S": string(scoreboard.AlarmReal)}}
	if b.falseAlarm() || !b.realAlarm() {
		t.Fatal("a prediction the emulator confirmed counted as a false alarm")
	}
	b.Alarms["Other"] = string(scoreboard.AlarmModelOnly)
	if !b.falseAlarm() {
		t.Fatal("a prediction the emulator could not follow is not a false alarm")
	}
}

func TestSampleCoversEveryServiceAndOperator(t *testing.T) {
	var ms []mutate.Mutant
	for _, tg := range mutate.DefaultTargets() {
		for _, op := range mutate.Ops {
			ms = append(ms, mutate.Mutant{ID: len(ms) + 1, Service: tg.Service, Op: op})
		}
	}
	sample, err := sampleOf(ms, "sample")
	if err != nil {
		t.Fatal(err)
	}
	services, ops := map[string]int{}, map[string]int{}
	for _, m := range sample {
		services[m.Service]++
		ops[m.Op]++
	}
	if len(services) != len(mutate.DefaultTargets()) || len(ops) != len(mutate.Ops) {
		t.Fatalf("sample covers %d services and %d operators: %v %v", len(services), len(ops), services, ops)
	}
	short, _ := sampleOf(ms, "short")
	if len(short) != len(mutate.DefaultTargets()) {
		t.Fatalf("short sample has %d mutants, want one per service", len(short))
	}
	for _, m := range short {
		if !slices.Contains(sample, m) {
			t.Fatalf("short mutant %+v is not in the sample", m)
		}
	}
	zoo, err := onlyServices(ms, "zoo-retry,paxos")
	if err != nil || len(zoo) != 2*len(mutate.Ops) || zoo[0].Service != "paxos" {
		t.Fatalf("onlyServices(zoo-retry,paxos) = %d mutants, %v", len(zoo), err)
	}
	if _, err := onlyServices(ms, "nope"); !errors.Is(err, errUsage) {
		t.Fatalf("onlyServices(nope) error %v, want errUsage", err)
	}
	if _, err := sampleOf(ms, "most"); !errors.Is(err, errUsage) {
		t.Fatalf("sampleOf(most) error %v, want errUsage", err)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		nil, {"frob"}, {"gen", "--per-op", "0"}, {"gen", "extra"},
		{"run", "--seeds", "x"}, {"run", "--jobs", "0"}, {"show", "--bogus"},
	} {
		err := mainErr(context.Background(), args, io.Discard, io.Discard)
		if !errors.Is(err, errUsage) {
			t.Errorf("mutants %v: error %v, want a usage error", args, err)
		}
	}
	// A runner built without the overlay refuses to run a corpus.
	err := mainErr(context.Background(), []string{"run", "--manifest", "testdata/none.json"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "gen") {
		t.Errorf("run without a manifest: %v", err)
	}
}

func TestDeploymentsCoverEveryTarget(t *testing.T) {
	d, err := deployments()
	if err != nil {
		t.Fatal(err)
	}
	for _, tg := range mutate.DefaultTargets() {
		if _, ok := d[tg.Service]; !ok {
			t.Errorf("no deployment for %s", tg.Service)
		}
	}
}
