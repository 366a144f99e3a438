package servicetest

import (
	"bytes"
	"errors"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

type call struct{ peer node.ID }

func (call) MessageType() string { return "servicetest.call" }

func TestPeerCall(t *testing.T) {
	app := PeerCall("svc", "join", "BOOTSTRAP", func(p node.ID) node.Message { return call{p} })
	m, err := app(1, []string{"join", "n7"})
	if err != nil || m != (call{7}) {
		t.Fatalf("join n7: %v, %v", m, err)
	}
	for _, args := range [][]string{nil, {"join"}, {"leave", "n7"}, {"join", "n7", "n8"}} {
		if _, err := app(1, args); err == nil || err.Error() != "svc: usage: app ID join BOOTSTRAP" {
			t.Errorf("%q: %v", args, err)
		}
	}
	if _, err := app(1, []string{"join", "x"}); err == nil {
		t.Error("join x: no error")
	}
}

type summary struct{ n int }

func (s summary) String() string { return "summary" }

func TestSummaryCommand(t *testing.T) {
	cmd := SummaryCommand("svc", func(node.View) summary { return summary{1} })
	var out bytes.Buffer
	if err := cmd(nil, nil, &out); err != nil || out.String() != "summary\n" {
		t.Fatalf("summary: %q, %v", out.String(), err)
	}
	if err := cmd(nil, []string{"x"}, &out); err == nil || err.Error() != "svc: usage: summary" {
		t.Fatalf("summary x: %v", err)
	}
}

type service struct{ x int }

func (*service) Init(node.Env)                                 {}
func (*service) HandleMessage(node.Env, node.ID, node.Message) {}
func (*service) HandleTimer(node.Env, string)                  {}
func (*service) HandleApp(node.Env, node.Message)              {}
func (*service) HandleTransportError(node.Env, node.ID)        {}

func TestView(t *testing.T) {
	a, b := &service{1}, &service{2}
	v := NewView(map[node.ID]*service{3: a, 1: b})
	if got := v.Nodes(); len(got) != 2 || got[0] != 1 || got[1] != 3 {
		t.Fatalf("Nodes = %v", got)
	}
	if v.Service(3) != a || v.Service(2) != nil || v.TimerScheduled(1, "t") {
		t.Fatal("Service or TimerScheduled")
	}
	if allocs := testing.AllocsPerRun(10, func() { _ = v.Nodes() }); allocs != 0 {
		t.Errorf("Nodes allocates %v times", allocs)
	}
}

func TestProperty(t *testing.T) {
	props := []node.Property{node.Always("A", func(node.View) error { return nil }), node.Always("B", func(node.View) error { return errors.New("b") })}
	if p := Property(t, props, "B"); p.Name != "B" {
		t.Fatalf("Property B = %s", p.Name)
	}
}

func TestSafety(t *testing.T) {
	r := emulation.Result{Safety: []emulation.SafetyResult{{Name: "A", ViolatedStates: 3, FirstError: "a"}, {Name: "B"}}}
	if s, ok := Safety(r, "A"); !ok || s.FirstError != "a" {
		t.Errorf("Safety A = %v, %v", s, ok)
	}
	if n := SafetyCount(r, "B"); n != 0 {
		t.Errorf("SafetyCount B = %d", n)
	}
	if n := SafetyCount(r, "C"); n != -1 {
		t.Errorf("SafetyCount C = %d, want -1", n)
	}
}
