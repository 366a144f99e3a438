package consequence_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

type latePing struct {
	node.Named[latePing]
	Seq int
}

// lateService: node 1 sends node 2 a numbered ping every second; node 2
// keeps the highest number it got. Its safety property says node 2 is at
// most two pings behind, which holds while every ping arrives within the
// declared delay (half a second) and fails once one is late: the class
// of bug a delay bound hides.
type lateService struct {
	node.NopHandlers
	Sent, Got int
}

func (s *lateService) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("tick", time.Second)
	}
}

func (s *lateService) HandleTimer(env node.Env, _ string) {
	s.Sent++
	env.Send(2, latePing{Seq: s.Sent})
	env.SetTimer("tick", time.Second)
}

func (s *lateService) HandleMessage(_ node.Env, _ node.ID, m node.Message) {
	s.Got = max(s.Got, m.(latePing).Seq)
}

func lateOf(v node.View, id node.ID) *lateService {
	s, _ := v.Service(id).(*lateService)
	if s == nil {
		return &lateService{}
	}
	return s
}

// lateSpec declares a half-second delay and two properties: Behind
// (safety: node 2 at most two pings behind node 1) and Fresh (bounded:
// while a ping is in flight, node 2 gets it within 800 ms).
func lateSpec() node.Spec {
	behind := node.Property{Name: "Behind", Kind: node.Safety, Check: func(v node.View) error {
		if sent, got := lateOf(v, 1).Sent, lateOf(v, 2).Got; sent-got > 2 {
			return fmt.Errorf("node 2 got ping %d, node 1 sent %d", got, sent)
		}
		return nil
	}}
	inFlight := func(v node.View) bool { return lateOf(v, 1).Sent > lateOf(v, 2).Got }
	fresh := node.Within("Fresh", 800*time.Millisecond, inFlight, func(v node.View) error {
		if inFlight(v) {
			return fmt.Errorf("a ping in flight")
		}
		return nil
	})
	return node.Spec{Name: "late", New: func() node.Service { return &lateService{} }, Messages: []node.Message{latePing{}},
		Properties: []node.Property{behind, fresh}, Delivery: node.DeliverySpec{MaxDelay: 500 * time.Millisecond}}
}

func lateSearch(t *testing.T, delays int) (*consequence.ActorModel, *consequence.Result[*consequence.GlobalState, consequence.ActorAction]) {
	t.Helper()
	m, err := consequence.NewActorModel(lateSpec(), consequence.ActorOptions{N: 2, Faults: consequence.Faults{Delays: delays}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.BFS).MaxDepth(8).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}

// TestLateMessageBreaksTheDelayBound: within the declared delay the
// pinger's third tick waits for the first ping, so node 2 is never three
// behind and no ping waits past Fresh's bound. One late ping stalls the
// channel: the ticks go on, Behind fails, and Fresh, which assumes the
// delay bound, is not judged on that path. The state counts are exact.
func TestLateMessageBreaksTheDelayBound(t *testing.T) {
	_, on := lateSearch(t, 0)
	if len(on.Violations) != 0 || on.Unique != 9 {
		t.Fatalf("no delays: %d states, violations %v; want 9 states and none", on.Unique, on.Violations)
	}
	m, late := lateSearch(t, 1)
	if late.Unique != 45 {
		t.Errorf("one delay: %d states, want 45", late.Unique)
	}
	if len(late.Violations) != 1 || late.Violations[0].Property != "Behind" {
		t.Fatalf("one delay: violations %v, want Behind alone", late.Violations)
	}
	v := late.Violations[0]
	if v.State.Delays() != 1 {
		t.Errorf("the violation spent %d delays, want 1", v.State.Delays())
	}
	rep, err := m.Report(v)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back consequence.ActorReport
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	path, end, err := m.ReplayReport(back, m.Properties())
	if err != nil {
		t.Fatalf("the report does not replay: %v\n%s", err, b)
	}
	if end.Delays() != 1 || len(path) != v.Depth || path[0].Act.Kind == consequence.ActDelay {
		t.Errorf("replayed %d steps spending %d delays: %v", len(path), end.Delays(), path)
	}
}

// TestDelayNeedsADeadline: a model without a bounded property has no
// delay bound to break, so the budget adds no action; and a negative or
// oversized budget is refused.
func TestDelayNeedsADeadline(t *testing.T) {
	spec := lateSpec()
	spec.Properties = spec.Properties[:1]
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Faults: consequence.Faults{Delays: 3}})
	if err != nil {
		t.Fatal(err)
	}
	g, ok := m.Next(m.Start(), consequence.ActorAction{Kind: consequence.ActTimer, Node: 1, Timer: "tick"})
	if !ok {
		t.Fatal("the tick is not enabled")
	}
	for _, a := range m.Actions(g, nil) {
		if a.Act.Kind == consequence.ActDelay {
			t.Fatalf("a model without a deadline offers %v", a.Act)
		}
	}
	for _, d := range []int{-1, consequence.MaxDeliveryFaults + 1} {
		if _, err := consequence.NewActorModel(lateSpec(), consequence.ActorOptions{N: 2, Faults: consequence.Faults{Delays: d}}); err == nil {
			t.Errorf("a delays budget of %d was accepted", d)
		}
	}
}
