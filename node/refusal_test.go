package node

import (
	"errors"
	"testing"
)

// refuser sends with TrySend and records what the transport refused.
type refuser struct {
	recorder
	Refused []string
}

func (r *refuser) HandleMessage(env Env, from ID, m Message) {
	r.recorder.HandleMessage(env, from, m)
	if m.(note).Text == "try" {
		env.TrySend(from, note{Text: "a"})
		env.Send(from, note{Text: "b"})
		env.TrySend(from, note{Text: "c"})
	}
}

func (r *refuser) HandleSendRefused(env Env, to ID, m Message) {
	r.Refused = append(r.Refused, m.(note).Text+" to "+to.String())
	env.SetTimer("retry", 0)
}

var _ SendRefusedHandler = (*refuser)(nil)

// TestTrySendEffectAndRefusal: a TrySend is a send in handler order with
// Refusable set, and EventSendRefused runs HandleSendRefused with the
// message and its addressee; a service without the handler ignores it.
func TestTrySendEffectAndRefusal(t *testing.T) {
	c, err := NewCore(CoreConfig{ID: 5, Factory: func() Service { return &refuser{} }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(Event{Kind: EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	fx, err := c.Step(Event{Kind: EventMessage, At: t0, From: 2, Msg: note{"try"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Envelope{
		{From: 5, To: 2, Msg: note{"a"}, Refusable: true},
		{From: 5, To: 2, Msg: note{"b"}},
		{From: 5, To: 2, Msg: note{"c"}, Refusable: true},
	}
	if len(fx.Sends) != len(want) {
		t.Fatalf("sends = %v, want %v", fx.Sends, want)
	}
	for i := range want {
		if fx.Sends[i] != want[i] {
			t.Fatalf("send %d = %v, want %v", i, fx.Sends[i], want[i])
		}
	}
	if got := fx.Sends[0].String(); got != "{n5 n2 0 {a} refusable}" {
		t.Errorf("String = %q", got)
	}
	ev := Event{Kind: EventSendRefused, At: t0, Peer: 2, Msg: note{"c"}}
	if got := ev.String(); got != "send-refused test.note to n2" {
		t.Errorf("event String = %q", got)
	}
	fx, err = c.Step(ev)
	if err != nil || fx.Ignored {
		t.Fatalf("refusal: %+v, %v", fx, err)
	}
	if got := c.Service().(*refuser).Refused; len(got) != 1 || got[0] != "c to n2" {
		t.Fatalf("refused = %v", got)
	}
	if len(fx.Timers) != 1 || fx.Timers[0].Name != "retry" {
		t.Fatalf("the refusal handler's effects = %+v", fx)
	}

	plain := newRecorderCore(t, 1)
	if _, err := plain.Step(Event{Kind: EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	if fx, err := plain.Step(ev); err != nil || !fx.Ignored {
		t.Fatalf("a service without HandleSendRefused: %+v, %v; want ignored", fx, err)
	}
	for _, bad := range []Event{{Kind: EventSendRefused, Msg: note{"x"}}, {Kind: EventSendRefused, Peer: 2}} {
		if _, err := c.Step(bad); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("Step(%+v) = %v, want ErrInvalidEvent", bad, err)
		}
	}
}
