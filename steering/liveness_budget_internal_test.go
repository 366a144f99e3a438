package steering

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// servedState sets Served on its serve timer.
type servedState struct {
	node.NopHandlers
	Served bool
}

func (s *servedState) Init(env node.Env)            { env.SetTimer("serve", time.Second) }
func (s *servedState) HandleTimer(node.Env, string) { s.Served = true }

type servedMsg struct{}

func (servedMsg) MessageType() string { return "served.Msg" }

// servedSpec forbids what its liveness property needs: the immediate
// check vetoes every serve timer until the liveness budget lifts it.
func servedSpec() node.Spec {
	served := func(v node.View) bool { s, ok := v.Service(1).(*servedState); return ok && s.Served }
	return node.Spec{Name: "served", New: func() node.Service { return &servedState{} }, Messages: []node.Message{servedMsg{}},
		Properties: []node.Property{
			node.Always("NoServe", func(v node.View) error {
				if served(v) {
					return errors.New("served")
				}
				return nil
			}),
			node.Eventually("Served", func(v node.View) error {
				if !served(v) {
					return errors.New("not served")
				}
				return nil
			}),
		}}
}

// The layer, driven as a pipeline drives it, asks for a tick at the
// first instant past the bound and lifts there, lets the next retry run,
// asks for a tick when MinLift ends, resumes there, and logs both; a
// reset forgets the budget.
func TestLivenessBudgetLogsLiftAndResume(t *testing.T) {
	var log bytes.Buffer
	spec := servedSpec()
	t0 := time.Unix(1000, 0)
	core := initedCore(t, spec, 1, t0)
	l, _ := newTestLive(t, LayerConfig{Controller: Config{Spec: spec}, Immediate: true,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))}, core)
	now := t0.Add(time.Second)
	liftAt := t0.Add(time.Second + DefaultLivenessBound + time.Nanosecond)
	for retry := false; ; retry = true {
		if at := l.NextTick(); !at.IsZero() && at.Before(now) {
			if !at.Equal(liftAt) {
				t.Fatalf("NextTick %v, want the first instant past the bound, %v", at.Sub(t0), liftAt.Sub(t0))
			}
			if _, err := l.Tick(at); err != nil || l.Status().Lift == nil {
				t.Fatalf("tick at %v: lift %+v, error %v", at.Sub(t0), l.Status().Lift, err)
			}
		}
		ev := node.Event{Kind: node.EventTimer, Timer: "serve", At: now}
		v, _, err := l.Gate(now, ev, nil, retry)
		if err != nil {
			t.Fatal(err)
		}
		if v.Handle {
			if _, err := core.Step(ev); err != nil {
				t.Fatal(err)
			}
			l.After(now)
			break
		}
		if v.RetryAt != now.Add(DefaultPostponeDelay) || now.After(t0.Add(time.Minute)) {
			t.Fatalf("at %v: verdict %+v", now.Sub(t0), v)
		}
		now = v.RetryAt
	}
	if want := t0.Add(time.Second + DefaultLivenessBound + DefaultPostponeDelay); !now.Equal(want) {
		t.Fatalf("the serve timer ran at %v, want %v", now.Sub(t0), want.Sub(t0))
	}
	if !strings.Contains(log.String(), `level=WARN msg="steering: lifted for liveness" node=n1 property=Served failing_since=`) ||
		!strings.Contains(log.String(), "failing=30.000000001s bound=30s") {
		t.Fatalf("log:\n%s", &log)
	}
	if at := l.NextTick(); !at.Equal(liftAt.Add(DefaultMinLift)) {
		t.Fatalf("NextTick %v, want MinLift's end %v", at.Sub(t0), liftAt.Add(DefaultMinLift).Sub(t0))
	}
	if _, err := l.Tick(liftAt.Add(DefaultMinLift)); err != nil {
		t.Fatal(err)
	}
	if st := l.Status(); st.Lift != nil || !l.NextTick().IsZero() {
		t.Fatalf("after MinLift: lift %+v, NextTick %v", st.Lift, l.NextTick())
	}
	if !strings.Contains(log.String(), `level=INFO msg="steering: resumed" node=n1 property=Served`) || !strings.Contains(log.String(), "lifted_for=5s") {
		t.Fatalf("log:\n%s", &log)
	}
	// A reset during a lift forgets it: a new process intervened in nothing.
	l.budget.active, l.budget.lifted = true, true
	l.mu.Lock()
	l.st.Lift = &LiftRecord{Property: "Served"}
	l.mu.Unlock()
	if _, _, err := l.Gate(now, node.Event{Kind: node.EventReset, At: now}, nil, false); err != nil {
		t.Fatal(err)
	}
	if l.budget.active || l.budget.lifted || l.Status().Lift != nil || l.Status().Lifts != 1 {
		t.Fatalf("after a reset: active %v lifted %v status %+v", l.budget.active, l.budget.lifted, l.Status().Lift)
	}
}
