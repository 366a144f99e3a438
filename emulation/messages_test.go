package emulation_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// wantUnknown checks that err is the run's failure for a message outside
// Spec.Messages: it wraps node.ErrUnknownMessageType and names the node,
// the message type and the seed to rerun with.
func wantUnknown(t *testing.T, err error, id node.ID, typ string, seed uint64) {
	t.Helper()
	if !errors.Is(err, node.ErrUnknownMessageType) {
		t.Fatalf("err = %v, want one wrapping node.ErrUnknownMessageType", err)
	}
	for _, s := range []string{"emulation: node " + id.String(), typ, "rerun with seed=" + strconv.FormatUint(seed, 10)} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("err %q does not name %q", err, s)
		}
	}
}

// The emulator applies node.Registry.CheckMessage like the explorer and
// nodetest: a service that sends a message outside Spec.Messages fails the
// run at that step, before the message reaches the network.
func TestUnregisteredSendFailsTheRun(t *testing.T) {
	const seed = 7
	spec := testSpec(tcfg{nodes: 2})
	spec.Messages = []node.Message{SendTo{}, Inc{}, Boom{}} // no Data
	var sent int
	e := mustNew(t, emulation.Config{Spec: spec, Nodes: 2, Seed: seed,
		Observers: emulation.Observers{OnNetwork: func(emulation.NetworkEvent) { sent++ }},
	})
	if err := e.RunUntil(at(20 * time.Second)); err != nil {
		t.Fatal(err)
	}
	err := e.AppCall(1, SendTo{To: 2, N: 1})
	wantUnknown(t, err, 1, "test.data", seed)
	if !errors.Is(e.Err(), node.ErrUnknownMessageType) || e.Step() {
		t.Errorf("the loop goes on after the failure: Err = %v", e.Err())
	}
	if sent != 0 {
		t.Errorf("%d network events after an unregistered send", sent)
	}
}

// A workload call outside Spec.Messages fails the run when it is queued.
func TestUnregisteredWorkloadCallFailsTheRun(t *testing.T) {
	const seed = 11
	spec := testSpec(tcfg{nodes: 3})
	spec.Messages = []node.Message{Data{}, SendTo{}, Boom{}} // no Inc
	e := mustNew(t, emulation.Config{Spec: spec, Nodes: 3, Seed: seed, Duration: time.Minute,
		Workload: func(id node.ID, restart bool) []node.Message {
			if id == 2 {
				return []node.Message{Inc{}}
			}
			return nil
		}})
	_, err := e.Run(context.Background())
	wantUnknown(t, err, 2, "test.inc", seed)
	if svc(t, e, 2).Apps != 0 {
		t.Error("the unregistered call reached the handler")
	}
}

// Submit and AppCall refuse a call outside Spec.Messages (a pointer to a
// registered struct type is outside too) and fail the run.
func TestUnregisteredScriptedCallFailsTheRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(*emulation.Emulator) error
		typ  string
	}{
		{"Submit", func(e *emulation.Emulator) error { return e.Submit(1, &Inc{}) }, "test.inc"},
		{"AppCall", func(e *emulation.Emulator) error { return e.AppCall(1, Boom{}) }, "test.boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := testSpec(tcfg{nodes: 1})
			spec.Messages = []node.Message{Data{}, SendTo{}, Inc{}} // no Boom
			e := mustNew(t, emulation.Config{Spec: spec, Nodes: 1, Seed: 3})
			if err := e.RunUntil(at(20 * time.Second)); err != nil {
				t.Fatal(err)
			}
			wantUnknown(t, tc.call(e), 1, tc.typ, 3)
			if svc(t, e, 1).Apps != 0 {
				t.Error("the unregistered call reached the handler")
			}
			if err := e.RunUntil(at(time.Minute)); !errors.Is(err, node.ErrUnknownMessageType) {
				t.Errorf("RunUntil after the failure = %v", err)
			}
		})
	}
}
