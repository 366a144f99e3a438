package nodetest_test

import (
	"fmt"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// TestReplayUntil: the harness ReplayUntil returns is in the state the
// script reached just before its stop command, and goes on from there.
func TestReplayUntil(t *testing.T) {
	h := nodetest.ReplayUntil(t, pingerConfig(), "testdata/scripts/ping.txt", "deliver n1 n2")
	out, err := h.Exec("pending")
	if err != nil || out != "n2 -> n1 Pong(1)\n" {
		t.Fatalf("pending before the stop: %q, %v", out, err)
	}
	if out, err := h.Exec("deliver n1 n2"); err != nil || out != "n1 <- n2 Pong(1)\nn1: cancel timer retry\n" {
		t.Fatalf("the stop command run from Go: %q, %v", out, err)
	}
}

// fatal is a testing.TB whose Fatal and Fatalf record the failure and
// stop the helper with a panic the test recovers.
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

// TestReplayUntilWithoutTheStop: a stop that is not a command of the
// script fails the test, after the whole script ran.
func TestReplayUntilWithoutTheStop(t *testing.T) {
	f := &fatal{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != (stopped{}) {
				panic(r)
			}
		}()
		nodetest.ReplayUntil(f, pingerConfig(), "testdata/scripts/ping.txt", "deliver n9 n1")
	}()
	if want := `testdata/scripts/ping.txt has no command "deliver n9 n1"`; f.msg != want {
		t.Fatalf("failure %q, want %q", f.msg, want)
	}
}
