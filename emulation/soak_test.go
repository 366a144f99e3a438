package emulation_test

import (
	"bytes"
	"context"
	"errors"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// A randomized soak: heavy churn plus scripted resets, downs and broken
// connections, over several seeds. The emulator must not fail, its counts
// must add up, and a replay must give the same trace. Each run is 12 nodes
// for one virtual minute: churn at 20 a minute and a scripted reset, down,
// up, break or call every 0.7 s, 85 in all (two minutes only doubled the
// cost).
func TestSoakChurnAndScriptedFaults(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		trace1, r1 := soak(t, seed)
		trace2, _ := soak(t, seed)
		if trace1 != trace2 {
			t.Fatalf("seed=%d: replay differs", seed)
		}
		var sum int64
		for _, n := range r1.EventsByKind {
			sum += n
		}
		m := r1.Messages
		if sum != r1.Events || m.InFlight < 0 || m.Dropped == 0 || r1.TransportErrors == 0 || r1.Churn.Leaves == 0 ||
			int64(strings.Count(trace1, "\n")) != r1.Events {
			t.Fatalf("seed=%d: inconsistent result %+v", seed, r1)
		}
	}
}

// soakDuration is the virtual length of a soak run.
const soakDuration = time.Minute

func soak(t *testing.T, seed uint64) (string, emulation.Result) {
	t.Helper()
	const nodes = 12
	var buf bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec:      testSpec(tcfg{nodes: nodes, period: 500 * time.Millisecond, jitter: true, fanout: 2}),
		Nodes:     nodes,
		Seed:      seed,
		Duration:  soakDuration,
		Churn:     emulation.ChurnConfig{Rate: 20, Downtime: 5 * time.Second, SilentFraction: emulation.Fraction(0.3)},
		Workload:  func(id node.ID, restart bool) []node.Message { return []node.Message{SendTo{To: 1, N: 2}} },
		Observers: emulation.Observers{Trace: &buf},
	})
	rng := mrand.New(mrand.NewPCG(seed, 0))
	for step := time.Duration(0); step < soakDuration; step += 700 * time.Millisecond {
		if err := e.RunUntil(at(step)); err != nil {
			t.Fatalf("seed=%d: %v", seed, err)
		}
		id := node.ID(1 + rng.IntN(nodes))
		var err error
		switch rng.IntN(4) {
		case 0:
			err = e.Reset(id, rng.IntN(2) == 0)
		case 1:
			if e.Live(id) {
				err = e.Down(id, rng.IntN(2) == 0)
			} else {
				err = e.Up(id)
			}
		case 2:
			_ = e.BreakConnection(id, node.ID(1+rng.IntN(nodes))) // may hold no connection
		case 3:
			err = e.AppCall(id, SendTo{To: node.ID(1 + rng.IntN(nodes+1)), N: 1})
		}
		if err != nil && !strings.Contains(err.Error(), "not live") && !strings.Contains(err.Error(), "not started") {
			t.Fatalf("seed=%d: %v", seed, err)
		}
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed=%d: %v", seed, err)
	}
	return buf.String(), r
}

func TestViewAndAccessors(t *testing.T) {
	e, _ := scripted(t, 3, tcfg{period: time.Second}, nil)
	v := e.View()
	if !e.Now().Equal(at(time.Second)) || e.Elapsed() != time.Second || e.Pending() == 0 {
		t.Fatalf("Now %v, Elapsed %v, Pending %d", e.Now(), e.Elapsed(), e.Pending())
	}
	if !v.TimerScheduled(2, "tick") || v.TimerScheduled(2, "nope") || v.TimerScheduled(9, "tick") {
		t.Fatal("View.TimerScheduled is wrong")
	}
	if e.Core(0) != nil || e.Core(4) != nil || e.Incarnation(4) != 0 || e.Live(4) {
		t.Fatal("accessors accept unknown IDs")
	}
	if err := e.Down(3, true); err != nil {
		t.Fatal(err)
	}
	if v.TimerScheduled(3, "tick") || v.Service(3) != nil || len(v.Nodes()) != 2 {
		t.Fatal("a down node is visible in the view")
	}
	for _, err := range []error{e.Up(9), e.Reset(9, true), e.AppCall(1, nil), e.Down(3, false)} {
		if err == nil || !strings.HasPrefix(err.Error(), "emulation: ") {
			t.Fatalf("bad call accepted: %v", err)
		}
	}
}

func TestNotStartedNode(t *testing.T) {
	e := mustNew(t, emulation.Config{Spec: testSpec(tcfg{nodes: 2}), Nodes: 2, Seed: 1})
	if err := e.Up(1); err == nil || !strings.Contains(err.Error(), "not started") {
		t.Fatalf("Up before start: %v", err)
	}
	if err := e.Reset(1, false); err == nil || !strings.Contains(err.Error(), "not live") {
		t.Fatalf("Reset before start: %v", err)
	}
}

func TestChurnWithNoLiveNodeIsSkipped(t *testing.T) {
	e := mustNew(t, emulation.Config{
		Spec: testSpec(tcfg{nodes: 1}), Nodes: 1, Seed: 5, Duration: 10 * time.Minute,
		Churn: emulation.ChurnConfig{Rate: 30, Downtime: time.Minute},
	})
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Churn.Skipped == 0 || r.Churn.Leaves == 0 || r.Churn.Leaves > r.Churn.Rejoins+1 {
		t.Fatalf("churn %+v", r.Churn)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestTraceWriteErrorStopsTheRun(t *testing.T) {
	e := mustNew(t, emulation.Config{Spec: testSpec(tcfg{nodes: 2}), Nodes: 2, Seed: 1, Duration: time.Minute, Observers: emulation.Observers{Trace: failingWriter{}}})
	if _, err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Run with a failing trace writer: %v", err)
	}
}

func TestWorkloadPanicIsReported(t *testing.T) {
	e := mustNew(t, emulation.Config{Spec: testSpec(tcfg{nodes: 2}), Nodes: 2, Seed: 12, Duration: time.Minute,
		Workload: func(node.ID, bool) []node.Message { panic("bad workload") }})
	_, err := e.Run(context.Background())
	var pe *emulation.PanicError
	if !errors.As(err, &pe) || pe.Event != "workload" || !strings.Contains(err.Error(), "seed=12") {
		t.Fatalf("Run: %v", err)
	}
}
