package servicetest

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"

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

// fatal is a testing.TB whose Fatal and Fatalf record the failure and stop
// the helper (a panic the test recovers), so that a helper's verdict can be
// tested.
type fatal struct {
	testing.TB
	msg string
}

type stopped struct{}

func (f *fatal) Helper()           {}
func (f *fatal) Fatal(args ...any) { f.msg = fmt.Sprint(args...); panic(stopped{}) }
func (f *fatal) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(stopped{})
}

// run calls check with a fatal TB and returns what it failed with, "" when
// it did not.
func run(t *testing.T, check func(testing.TB)) (msg string) {
	f := &fatal{TB: t}
	defer func() {
		if r := recover(); r != nil && r != (stopped{}) {
			panic(r)
		}
		msg = f.msg
	}()
	check(f)
	return ""
}

// encoded has a hand-written encoder that drops B.
type encoded struct {
	A int `msgpack:"a"`
	B int `msgpack:"b"`
}

func (e *encoded) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeMapLen(1); err != nil {
		return err
	}
	if err := enc.EncodeString("a"); err != nil {
		return err
	}
	return enc.EncodeInt(int64(e.A))
}

type plainEncoded encoded

func TestEncodingMatchesReflection(t *testing.T) {
	if msg := run(t, func(tb testing.TB) {
		e := &encoded{A: 1}
		EncodingMatchesReflection(tb, e, e)
	}); msg != "" {
		t.Errorf("the same encoder: %s", msg)
	}
	if msg := run(t, func(tb testing.TB) {
		e := &encoded{A: 1, B: 2}
		EncodingMatchesReflection(tb, e, (*plainEncoded)(e))
	}); !strings.Contains(msg, "custom") {
		t.Errorf("an encoder that drops a field passed: %q", msg)
	}
}
