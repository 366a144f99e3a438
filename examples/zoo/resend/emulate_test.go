package resend

import (
	"context"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// stream is the emulated service: the sender sends items for the whole
// run, resending each until it is acknowledged.
var stream = Options{Items: 1 << 20, Retries: -1}

// emulate runs two nodes for d with the delivery rates dc.
func emulate(t *testing.T, o Options, dc emulation.DeliveryConfig, seed uint64, d time.Duration) emulation.Result {
	t.Helper()
	e, err := emulation.New(emulation.Config{Spec: Spec(o), Nodes: 2, Seed: seed, Duration: d, Delivery: dc})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	return r
}

// run is the emulated time of every run.
const run = 20 * time.Second

// TestEmulateFIFOMisses: without duplication or reordering — the rates
// zero, or only losses — no seed of 1–3 applies an item twice, and a
// service that declares nothing draws nothing from the delivery rates: its
// run is the run without them.
func TestEmulateFIFOMisses(t *testing.T) {
	for _, dc := range []emulation.DeliveryConfig{{}, {Loss: 0.1}} {
		for seed := uint64(1); seed <= 3; seed++ {
			if s := emulate(t, stream, dc, seed, run).Safety[0]; s.ViolatedStates > 0 {
				t.Errorf("%+v seed %d: %s at %v", dc, seed, s.FirstError, s.FirstViolation)
			}
		}
	}
	plain := emulate(t, stream, emulation.DeliveryConfig{}, 1, run)
	undeclared := Spec(stream)
	undeclared.Delivery = node.DeliverySpec{}
	e, err := emulation.New(emulation.Config{Spec: undeclared, Nodes: 2, Seed: 1, Duration: run,
		Delivery: emulation.DeliveryConfig{Loss: 0.5, Duplicate: 0.5, Reorder: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Events != plain.Events || r.Messages != plain.Messages || r.Messages.Delivery != nil {
		t.Errorf("undeclared with rates: %d events, %+v; without: %d events, %+v", r.Events, r.Messages, plain.Events, plain.Messages)
	}
}

// TestEmulateFinds: at a duplication or a reordering rate of 0.1 the bug
// shows on seed 1 at the pinned time; the corrected receiver survives the
// same runs.
func TestEmulateFinds(t *testing.T) {
	for _, c := range []struct {
		dc    emulation.DeliveryConfig
		first time.Duration
		err   string
	}{
		{emulation.DeliveryConfig{Duplicate: 0.1}, 11149553257, "n2 applied item 16 twice"},
		{emulation.DeliveryConfig{Reorder: 0.1}, 13869753861, "n2 applied item 36 twice"},
	} {
		r := emulate(t, stream, c.dc, 1, run)
		if s := r.Safety[0]; s.FirstViolation != c.first || s.FirstError != c.err {
			t.Errorf("%+v: first violation %v (%q), want %v (%q); %+v", c.dc, s.FirstViolation, s.FirstError, c.first, c.err, r.Messages.Delivery)
		}
		fixed := stream
		fixed.Fixed = true
		if s := emulate(t, fixed, c.dc, 1, run).Safety[0]; s.ViolatedStates > 0 {
			t.Errorf("%+v: fixed twin: %s", c.dc, s.FirstError)
		}
	}
}
