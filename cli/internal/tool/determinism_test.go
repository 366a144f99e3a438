package tool

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// stampService is a service of a user's own that reads the wall clock in
// a handler (wallClock) or not: n1 pings n2 on a timer, three times; n2
// counts the pings and stamps the last one. Its safety property,
// AtMostTwoPings, fails at the third ping.
func stampService(wallClock bool) Service {
	name := "stamp"
	if wallClock {
		name = "stamp-now"
	}
	spec := node.Spec{
		Name:     name,
		New:      func() node.Service { return &stampState{wallClock: wallClock} },
		Messages: []node.Message{stampPing{}, stampStart{}},
		Properties: []node.Property{node.Always("AtMostTwoPings", func(v node.View) error {
			if s, ok := v.Service(2).(*stampState); ok && s.Pings > 2 {
				return fmt.Errorf("n2 got %d pings", s.Pings)
			}
			return nil
		})},
	}
	return Service{Spec: spec, Workload: func(id node.ID, _ bool) []node.Message {
		if id == 1 {
			return []node.Message{stampStart{}}
		}
		return nil
	}}
}

type stampPing struct{ N int }

func (stampPing) MessageType() string { return "stamp.Ping" }

type stampStart struct{}

func (stampStart) MessageType() string { return "stamp.Start" }

type stampState struct {
	node.NopHandlers
	Sent, Pings int
	Stamp       int64

	wallClock bool
}

func (s *stampState) HandleApp(env node.Env, _ node.Message) { env.SetTimer("ping", time.Second) }

func (s *stampState) HandleTimer(env node.Env, _ string) {
	s.Sent++
	env.Send(2, stampPing{N: s.Sent})
	if s.Sent < 3 {
		env.SetTimer("ping", time.Second)
	}
}

func (s *stampState) HandleMessage(env node.Env, _ node.ID, _ node.Message) {
	s.Pings++
	s.Stamp = env.Now().UnixNano()
	if s.wallClock {
		s.Stamp = time.Now().UnixNano() // the user's mistake
	}
}

func stampProgram() Program {
	return Program{Services: []Service{stampService(false), stampService(true)}}
}

// check runs a sample of its transitions twice and stops at a service
// that reads the wall clock, where it would otherwise explore states no
// deployment reaches and find nothing wrong.
func TestCheckStopsAtANonDeterministicService(t *testing.T) {
	args := []string{"check", "--service", "stamp-now", "--nodes", "2", "--verify-determinism", "1"}
	code, stdout, stderr := runProgram(stampProgram(), args...)
	if code != exitFailure || !strings.Contains(stderr, "the service is not deterministic: n2 message stamp.Ping from n1") || !strings.Contains(stderr, "state.Stamp: ") {
		t.Fatalf("check of a service reading the wall clock: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runProgram(stampProgram(), "check", "--service", "stamp", "--nodes", "2", "--verify-determinism", "1")
	if code != exitOK || !strings.Contains(stdout, "AtMostTwoPings") {
		t.Fatalf("check of the deterministic twin: exit %d\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := runProgram(stampProgram(), "check", "--verify-determinism", "-1"); code != exitUsage {
		t.Fatalf("--verify-determinism -1: exit %d %s", code, stderr)
	}
}

// emulate --check-determinism runs twice and shows the first event where
// the runs differ, both sides; a deterministic service passes.
func TestEmulateCheckDeterminismShowsTheFirstDivergence(t *testing.T) {
	args := []string{"emulate", "--service", "stamp-now", "--nodes", "2", "--duration", "30s", "--churn", "0", "--check-determinism"}
	code, stdout, stderr := runProgram(stampProgram(), args...)
	if code != exitFailure || !strings.Contains(stderr, "the service is not deterministic: two runs of seed 1 in this process differ: at event ") ||
		!strings.Contains(stderr, "first run: ") || !strings.Contains(stderr, "; second run: ") || !strings.Contains(stderr, "n2's states differ at state.Stamp: ") {
		t.Fatalf("emulate --check-determinism of a service reading the wall clock: exit %d\n%s%s", code, stdout, stderr)
	}
	args[2] = "stamp"
	if code, stdout, stderr := runProgram(stampProgram(), args...); code != exitOK {
		t.Fatalf("the deterministic twin: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A report that does not replay names both causes; for a service that is
// not deterministic it says so, and at which step and field.
func TestTraceShowNamesWhyAReportDoesNotReplay(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "check.json")
	code, stdout, stderr := runProgram(stampProgram(), "check", "--service", "stamp", "--nodes", "2", "--json")
	if code != exitOK {
		t.Fatalf("check: exit %d %s", code, stderr)
	}
	if err := os.WriteFile(file, []byte(stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	// The same service, since changed to read the wall clock.
	changed := stampService(true)
	changed.Name = "stamp"
	code, _, stderr = runProgram(Program{Services: []Service{changed}}, "trace", "show", file)
	if code == exitOK || !strings.Contains(stderr, "bad report: replay reached") ||
		!strings.Contains(stderr, "replaying it again with every step run twice shows why: consequence: the service is not deterministic: n2 message stamp.Ping") {
		t.Fatalf("trace show of a non-deterministic service's report: exit %d\n%s", code, stderr)
	}
	// A report of another build: the recorded fingerprint is not what
	// this build reaches, and this build replays it the same way twice.
	code, stdout, _ = runProgram(stampProgram(), "check", "--service", "stamp", "--nodes", "2", "--json")
	if code != exitOK {
		t.Fatalf("check: exit %d", code)
	}
	i := strings.Index(stdout, `"fingerprint":"`) + len(`"fingerprint":"`)
	forged := stdout[:i] + "0123456789abcdef0123456789abcdef" + stdout[i+32:]
	if err := os.WriteFile(file, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runProgram(stampProgram(), "trace", "show", file)
	if code == exitOK || !strings.Contains(stderr, "the report was written by another build of the program or version of the service") ||
		!strings.Contains(stderr, "or the service is not deterministic") {
		t.Fatalf("trace show of another build's report: exit %d\n%s", code, stderr)
	}
}
