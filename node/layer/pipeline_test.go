package layer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// proto is gateLayer's own message type.
type proto struct{ N int }

func (proto) MessageType() string { return "test.proto" }
func (proto) LayerMessage()       {}

// gateLayer postpones timers and app calls named in hold, drops (and
// breaks for) notes whose text is in drop, stamps CN 7 on every send,
// answers each event it sees with a proto to node 2 and records what it saw.
type gateLayer struct {
	hold    map[string]bool
	drop    map[string]bool
	seen    []string
	tickAt  time.Time
	tickErr error
	ticks   int
	host    Host
}

func (g *gateLayer) Messages() []node.Message { return []node.Message{proto{}} }
func (g *gateLayer) Attach(h Host) error      { g.host = h; return nil }
func (g *gateLayer) Start(now time.Time) []node.Envelope {
	return []node.Envelope{{From: 5, To: 2, Msg: proto{N: -1}}}
}
func (g *gateLayer) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	v, out, err := g.Gate(now, ev, in, false)
	return v.Handle, out, err
}
func (g *gateLayer) Gate(now time.Time, ev node.Event, in *node.Envelope, retry bool) (Verdict, []node.Envelope, error) {
	s := ev.Kind.String()
	if retry {
		s += " retry"
	}
	g.seen = append(g.seen, s)
	out := []node.Envelope{{From: 5, To: 2, Msg: proto{N: len(g.seen)}}}
	switch {
	case ev.Kind == node.EventTimer && g.hold[ev.Timer]:
		return Verdict{RetryAt: now.Add(time.Second)}, out, nil
	case ev.Kind == node.EventApp && g.hold[ev.Msg.(note).Text]:
		return Verdict{RetryAt: now.Add(time.Second)}, out, nil
	case ev.Kind == node.EventMessage && ev.Msg != nil && g.drop[msgText(ev.Msg)]:
		return Verdict{Break: true}, out, nil
	}
	return Verdict{Handle: true}, out, nil
}
func (g *gateLayer) Sending(now time.Time, env *node.Envelope) { env.CN = 7 }
func (g *gateLayer) After(now time.Time) []node.Envelope       { return nil }
func (g *gateLayer) Tick(now time.Time) ([]node.Envelope, error) {
	g.ticks++
	return nil, g.tickErr
}
func (g *gateLayer) NextTick() time.Time { return g.tickAt }

func msgText(m node.Message) string {
	if n, ok := m.(note); ok {
		return n.Text
	}
	return ""
}

func newTestPipeline(t *testing.T) (*Pipeline, *gateLayer, *node.Core) {
	t.Helper()
	core := newRecorderCore(t, 1)
	g := &gateLayer{hold: map[string]bool{}, drop: map[string]bool{}}
	p, err := NewPipeline(PipelineConfig{Core: core, Layers: []Layer{g}})
	if err != nil {
		t.Fatal(err)
	}
	if o := p.Step(node.Event{Kind: node.EventInit, At: t0}, nil); !o.Handled || len(o.Timers) != 1 {
		t.Fatalf("init outcome %+v", o)
	}
	return p, g, core
}

// TestPipelineStepOrderAndEffects: one event goes Gate → core → Sending,
// and the outcome lists the layer's message before the service's
// (stamped by Sending), with the core's timer operations.
func TestPipelineStepOrderAndEffects(t *testing.T) {
	p, g, _ := newTestPipeline(t)
	if g.host == nil || len(p.Messages()) != 1 || !p.IsLayerMessage(proto{}) || p.IsLayerMessage(note{}) {
		t.Fatalf("attach/messages: host %v, messages %v", g.host, p.Messages())
	}
	if out := p.Start(t0).Sends; len(out) != 1 || !out[0].Layer {
		t.Fatalf("start sends %+v", out)
	}
	o := p.Step(node.Event{Kind: node.EventMessage, From: 2, Msg: note{Text: "echo"}, At: t0}, &node.Envelope{From: 2, To: 5, Msg: note{Text: "echo"}})
	if !o.Handled || o.Kept != -1 || len(o.Sends) != 2 {
		t.Fatalf("outcome %+v", o)
	}
	if !o.Sends[0].Layer || o.Sends[1].Layer || o.Sends[1].Env.CN != 7 || o.Sends[1].Env.Msg.(note).Text != "echoed" {
		t.Fatalf("sends %+v", o.Sends)
	}
}

// TestPipelinePostponesAndRetries: a postponed timer is held, due at its
// RetryAt, and delivered again to the layer with retry set; a timer the
// service sets again meanwhile is forgotten; a reset forgets the rest.
func TestPipelinePostponesAndRetries(t *testing.T) {
	p, g, core := newTestPipeline(t)
	g.hold["tick"] = true
	at, _ := core.State().TimerAt("tick")
	o := p.Step(node.Event{Kind: node.EventTimer, Timer: "tick", Deadline: at, At: at}, nil)
	if o.Handled || !o.Postponed || !o.Verdict.Postponed() || o.Verdict.String() != "postpone" || p.Postponed() != 1 {
		t.Fatalf("postponed outcome %+v", o)
	}
	if due := p.NextDue(); !due.Equal(at.Add(time.Second)) {
		t.Fatalf("NextDue %v, want %v", due, at.Add(time.Second))
	}
	if toks := p.DueRetries(at); len(toks) != 0 {
		t.Fatalf("due early: %v", toks)
	}
	g.hold["tick"] = false
	toks := p.DueRetries(at.Add(time.Second))
	if len(toks) != 1 {
		t.Fatalf("due tokens %v", toks)
	}
	o, ok := p.Retry(toks[0], at.Add(time.Second))
	if !ok || !o.Handled || !o.Retried || g.seen[len(g.seen)-1] != "timer retry" {
		t.Fatalf("retry outcome %+v ok=%v seen %v", o, ok, g.seen)
	}
	if _, ok := p.Retry(toks[0], at.Add(time.Second)); ok {
		t.Fatal("a retry ran twice")
	}

	// Postponed again, then the service sets the timer anew (its handler
	// for "cancel" cancels it): the held firing is forgotten.
	g.hold["tick"] = true
	at, _ = core.State().TimerAt("tick")
	p.Step(node.Event{Kind: node.EventTimer, Timer: "tick", Deadline: at, At: at}, nil)
	p.Step(node.Event{Kind: node.EventMessage, From: 2, Msg: note{Text: "cancel"}, At: at}, nil)
	if p.Postponed() != 0 {
		t.Fatalf("a cancelled timer's retry is still held (%d)", p.Postponed())
	}

	// An app call held, then a reset: forgotten.
	g.hold["x"] = true
	p.Step(node.Event{Kind: node.EventApp, Msg: note{Text: "x"}, At: at}, nil)
	if p.Postponed() != 1 {
		t.Fatal("the app call is not held")
	}
	p.Step(node.Event{Kind: node.EventReset, At: at}, nil)
	if p.Postponed() != 0 {
		t.Fatal("a reset kept a postponed event")
	}
}

// TestPipelineBreakAndLayerMessages: a verdict with Break names the sender
// of a message, not of a datagram nor of a message from the node itself;
// a layer message no layer kept is dropped with ErrMessage.
func TestPipelineBreakAndLayerMessages(t *testing.T) {
	p, g, _ := newTestPipeline(t)
	g.drop["bad"] = true
	bad := note{Text: "bad"}
	cases := []struct {
		from node.ID
		in   *node.Envelope
		want node.ID
	}{
		{2, &node.Envelope{From: 2, To: 5, Msg: bad}, 2},
		{2, nil, 2},
		{2, &node.Envelope{From: 2, To: 5, Msg: bad, Datagram: true}, node.None},
		{5, &node.Envelope{From: 5, To: 5, Msg: bad}, node.None},
	}
	for _, c := range cases {
		o := p.Step(node.Event{Kind: node.EventMessage, From: c.from, Msg: bad, At: t0}, c.in)
		if o.Handled || o.Kept != 0 || o.Break != c.want || o.Verdict.String() != "drop+break" {
			t.Errorf("from %v in %+v: outcome %+v, want break %v", c.from, c.in, o, c.want)
		}
	}
	o := p.Step(node.Event{Kind: node.EventMessage, From: 2, Msg: proto{N: 1}, At: t0}, nil)
	if o.Handled || len(o.Errors) != 1 || !errors.Is(o.Errors[0], ErrMessage) {
		t.Fatalf("leaked layer message: %+v", o)
	}
}

// TestPipelineTickHoldsFailingLayer: a due layer ticks; one whose Tick
// fails is held back for TickRetry, and the error names the layer.
func TestPipelineTickHoldsFailingLayer(t *testing.T) {
	p, g, _ := newTestPipeline(t)
	if !p.NextDue().IsZero() {
		t.Fatalf("due with nothing to do: %v", p.NextDue())
	}
	g.tickAt = t0
	g.tickErr = errors.New("boom")
	errs := p.Tick(t0).Errors
	if g.ticks != 1 || len(errs) != 1 || !strings.Contains(errs[0].Error(), "gateLayer") {
		t.Fatalf("ticks %d errors %v", g.ticks, errs)
	}
	if due := p.NextDue(); !due.Equal(t0.Add(DefaultTickRetry)) {
		t.Fatalf("NextDue after a failed tick %v", due)
	}
	p.Tick(t0.Add(DefaultTickRetry / 2))
	if g.ticks != 1 {
		t.Fatal("a held layer ticked")
	}
	if _, err := NewPipeline(PipelineConfig{}); err == nil {
		t.Fatal("a pipeline without a core")
	}
	if got := slices.Clone(p.Layers()); len(got) != 1 {
		t.Fatalf("layers %v", got)
	}
}

// breakLayer is a plain Layer that observes broken connections.
type breakLayer struct {
	broken []node.ID
	at     []time.Time
}

func (b *breakLayer) Messages() []node.Message        { return nil }
func (b *breakLayer) Attach(Host) error               { return nil }
func (b *breakLayer) Start(time.Time) []node.Envelope { return nil }
func (b *breakLayer) Before(time.Time, node.Event, *node.Envelope) (bool, []node.Envelope, error) {
	return true, nil, nil
}
func (b *breakLayer) Sending(time.Time, *node.Envelope)       {}
func (b *breakLayer) After(time.Time) []node.Envelope         { return nil }
func (b *breakLayer) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }
func (b *breakLayer) NextTick() time.Time                     { return time.Time{} }
func (b *breakLayer) ConnectionBroken(now time.Time, peer node.ID) []node.Envelope {
	b.broken, b.at = append(b.broken, peer), append(b.at, now)
	return []node.Envelope{{From: 1, To: peer, Msg: proto{N: 100 + len(b.broken)}}}
}

// ConnectionBroken reaches the layers that implement BreakObserver, in
// order, and returns their messages as layer sends; other layers are
// skipped.
func TestPipelineConnectionBroken(t *testing.T) {
	core := newRecorderCore(t, 1)
	b1, b2 := &breakLayer{}, &breakLayer{}
	g := &gateLayer{hold: map[string]bool{}, drop: map[string]bool{}}
	p, err := NewPipeline(PipelineConfig{Core: core, Layers: []Layer{b1, g, b2}})
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(time.Second)
	out := p.ConnectionBroken(at, 3).Sends
	if len(out) != 2 || !out[0].Layer || !out[1].Layer || out[0].Env.To != 3 {
		t.Fatalf("sends %+v, want one layer send from each observer", out)
	}
	if !slices.Equal(b1.broken, []node.ID{3}) || !slices.Equal(b2.broken, []node.ID{3}) || !b1.at[0].Equal(at) {
		t.Errorf("observers saw %v at %v and %v", b1.broken, b1.at, b2.broken)
	}
	if len(g.seen) != 0 {
		t.Errorf("the gate saw %v", g.seen)
	}
}
