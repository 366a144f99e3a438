package node_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

type put struct {
	node.Named[put]
	K string
	V int
}

type got struct {
	node.Named[got]
	V int
}

// recordingService marks an operation on every call and answers it on the
// next timer.
type recordingService struct {
	node.NopHandlers
	Open []put
}

func (s *recordingService) HandleApp(env node.Env, call node.Message) {
	p := call.(put)
	node.Invoke(env, p)
	s.Open = append(s.Open, p)
}

func (s *recordingService) HandleTimer(env node.Env, _ string) {
	node.Respond(env, s.Open[0], got{V: s.Open[0].V})
	s.Open = s.Open[1:]
}

func TestInvokeAndRespondAreEffects(t *testing.T) {
	c, err := node.NewCore(node.CoreConfig{ID: 3, Factory: func() node.Service { return &recordingService{} }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	if _, err := c.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	fx, err := c.Step(node.Event{Kind: node.EventApp, Msg: put{K: "x", V: 1}, At: t0})
	if err != nil || len(fx.History) != 1 || fx.History[0] != (node.HistoryMark{Kind: node.Invoked, Op: put{K: "x", V: 1}}) {
		t.Fatalf("app step: %v %+v, want one invocation", err, fx.History)
	}
	c.State().Timers = append(c.State().Timers, node.Timer{Name: "t", At: t0})
	fx, err = c.Step(node.Event{Kind: node.EventTimer, Timer: "t", At: t0})
	if err != nil || len(fx.History) != 1 || fx.History[0].Kind != node.Returned || fx.History[0].Result != (got{V: 1}) {
		t.Fatalf("timer step: %v %+v, want one response", err, fx.History)
	}
	fx, _ = c.Step(node.Event{Kind: node.EventApp, Msg: put{K: "y"}, At: t0})
	if len(fx.History) != 1 {
		t.Fatalf("a later step: %+v, want its own mark only", fx.History)
	}
}

func TestHistoryOperations(t *testing.T) {
	t0 := time.Unix(0, 0)
	ev := func(k node.HistoryEventKind, id node.ID, op, res node.Message, s int) node.HistoryEvent {
		return node.HistoryEvent{Kind: k, Node: id, Op: op, Result: res, At: t0.Add(time.Duration(s) * time.Second)}
	}
	a, b := put{K: "x", V: 1}, put{K: "x", V: 2}
	h := node.History{Events: []node.HistoryEvent{
		ev(node.Invoked, 3, a, nil, 0),
		ev(node.Invoked, 4, a, nil, 1), // an equal operation at another node
		ev(node.Invoked, 3, a, nil, 2), // again at n3: answered second
		ev(node.Returned, 3, a, got{V: 1}, 3),
		ev(node.Invoked, 3, b, nil, 4),
		ev(node.Returned, 3, a, got{V: 9}, 5),
	}}
	ops, err := h.Operations()
	if err != nil || len(ops) != 4 {
		t.Fatalf("Operations: %v %v", ops, err)
	}
	want := []struct{ call, ret int }{{0, 3}, {1, -1}, {2, 5}, {4, -1}}
	for i, w := range want {
		if ops[i].Call != w.call || ops[i].Return != w.ret || ops[i].Done() != (w.ret >= 0) {
			t.Errorf("op %d: %+v, want call %d return %d", i, ops[i], w.call, w.ret)
		}
	}
	if ops[2].Result != (got{V: 9}) || !ops[2].ReturnAt.Equal(t0.Add(5*time.Second)) {
		t.Errorf("op 2: %+v", ops[2])
	}
	h.Events = append(h.Events, ev(node.Returned, 4, b, nil, 6))
	if _, err := h.Operations(); !errors.Is(err, node.ErrUnmatchedResponse) {
		t.Errorf("a response to nothing from the start: %v, want ErrUnmatchedResponse", err)
	}
	h.Start = fakeView{}
	ops, err = h.Operations()
	if err != nil || len(ops) != 5 || ops[0].Call != -1 || !ops[0].Early || ops[0].Node != 4 {
		t.Errorf("from a snapshot, the same response answers an operation invoked before: %+v %v", ops, err)
	}
}

type fakeView struct{}

func (fakeView) Nodes() []node.ID                    { return nil }
func (fakeView) Service(node.ID) node.Service        { return nil }
func (fakeView) TimerScheduled(node.ID, string) bool { return false }
