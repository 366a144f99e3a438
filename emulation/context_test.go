package emulation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// RunUntilContext stops at a cancelled context and returns its error
// without advancing the clock; a later call goes on and reaches the same
// state as an uncancelled run of the same seed.
func TestRunUntilContextCancels(t *testing.T) {
	cfg := emulation.Config{Spec: testSpec(tcfg{nodes: 4, period: 200 * time.Millisecond, fanout: 2}), Nodes: 4, Seed: 3}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	end := emulation.Epoch.Add(20 * time.Second)
	if err := e.RunUntilContext(ctx, end); !errors.Is(err, context.Canceled) {
		t.Fatalf("RunUntilContext on a cancelled context: %v", err)
	}
	if e.Elapsed() != 0 || e.Result().Events != 0 {
		t.Fatalf("a cancelled run advanced to %v with %d events", e.Elapsed(), e.Result().Events)
	}
	if err := e.RunUntilContext(context.Background(), end); err != nil {
		t.Fatal(err)
	}
	ref, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ref.RunUntil(end); err != nil {
		t.Fatal(err)
	}
	if got, want := e.Result().String(), ref.Result().String(); got != want || e.Result().Events == 0 {
		t.Fatalf("resumed run:\n%s\nuninterrupted run:\n%s", got, want)
	}
}

// DefaultConfig names the defaults New applies: a run with them spelled out
// is the run with zero fields.
func TestDefaultConfigIsWhatZeroMeans(t *testing.T) {
	base := emulation.Config{Spec: testSpec(tcfg{nodes: 5, period: 300 * time.Millisecond, jitter: true, fanout: 1}), Nodes: 5, Seed: 9,
		Churn: emulation.ChurnConfig{Rate: 6}}
	spelled := emulation.DefaultConfig()
	spelled.Spec, spelled.Nodes, spelled.Seed, spelled.Churn.Rate = base.Spec, base.Nodes, base.Seed, base.Churn.Rate
	var out [2]string
	for i, cfg := range []emulation.Config{base, spelled} {
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.RunUntil(emulation.Epoch.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		out[i] = e.Result().String()
	}
	if out[0] != out[1] {
		t.Fatalf("zero fields:\n%s\nDefaultConfig:\n%s", out[0], out[1])
	}
}
