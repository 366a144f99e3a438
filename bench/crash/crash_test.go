package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/paxos"
)

// TestPaxosJudge: the judge passes a history in which promises and
// acceptances only grow and one value is learned, and names each broken
// promise: a value learned after another, a value forgotten, a promise or
// an acceptance gone back (an amnesiac restart), an acceptance below a
// promise seen before.
func TestPaxosJudge(t *testing.T) {
	b := func(round uint64, n node.ID) paxos.Ballot { return paxos.Ballot{Round: round, Node: n} }
	j := newPaxosJudge()
	good := []paxos.State{
		{},
		{Promised: b(1, 2)},
		{Promised: b(1, 2), Accepted: b(1, 2), AcceptedValue: "v2"},
		{Promised: b(2, 3), Accepted: b(1, 2), AcceptedValue: "v2"},
		{Promised: b(2, 3), Accepted: b(2, 3), AcceptedValue: "v2", Learned: "v2"},
	}
	for i := range good {
		if bad := j.observe(1, &good[i]); bad != nil {
			t.Fatalf("step %d: %q", i, bad)
		}
	}
	cases := []struct {
		s    paxos.State
		want string
	}{
		{paxos.State{Promised: b(2, 3), Accepted: b(2, 3), Learned: "v3"}, `n1 learned "v3", but "v2" was learned before`},
		{paxos.State{Promised: b(2, 3), Accepted: b(2, 3)}, `n1 forgot the value it learned ("v2")`},
		{paxos.State{Promised: b(1, 1), Accepted: b(2, 3), Learned: "v2"}, "n1's promise went back from 2.n3 to 1.n1"},
		{paxos.State{Promised: b(2, 3), Learned: "v2"}, "n1's accepted ballot went back from 2.n3 to -"},
	}
	for _, c := range cases {
		got := strings.Join(j.observe(1, &c.s), "; ")
		if !strings.Contains(got, c.want) {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
	j = newPaxosJudge()
	j.observe(2, &paxos.State{Promised: b(3, 1), Accepted: b(1, 1)})
	if got := strings.Join(j.observe(2, &paxos.State{Promised: b(3, 1), Accepted: b(2, 2)}), ""); !strings.Contains(got, "n2 accepted 2.n2 after promising 3.n1") {
		t.Errorf("acceptance below a promise: %q", got)
	}
	if vals := (&target{paxos: j}).values(); len(vals) != 0 {
		t.Errorf("values %q", vals)
	}
}

// TestCrashShort is the crash test's short form: three Paxos processes on
// their data directories through four kill cycles (kill-all and kill-some,
// at settled and at random moments of the protocol); the learned value
// never changes and no acceptor breaks a promise. The binary is built as
// the test binary was (with -race under the race detector, so the node
// processes are checked for races and the build reuses the suite's
// compiled packages). Skipped with -short.
func TestCrashShort(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: builds the binary and runs 3 OS processes")
	}
	var out, errs bytes.Buffer
	dir := t.TempDir()
	bin := filepath.Join(dir, "crystalball")
	build := []string{"build", "-o", bin}
	if raceEnabled {
		build = append(build, "-race")
	}
	if msg, err := exec.Command("go", append(build, "github.com/seed6eee2ec7/crystalball/cmd/crystalball")...).CombinedOutput(); err != nil {
		t.Fatalf("go %q: %v\n%s", build, err, msg)
	}
	args := []string{"--services", "paxos", "--nodes", "3", "--cycles", "4", "--seed", "3", "--dir", dir, "--bin", bin}
	if err := run(args, &out, &errs); err != nil {
		t.Fatalf("%v\n%s%s", err, out.String(), errs.String())
	}
	if !strings.Contains(out.String(), "4 cycles survived") {
		t.Fatalf("output:\n%s", out.String())
	}
	t.Log(out.String())
}

// TestParseRefuses: bad flags are errors.
func TestParseRefuses(t *testing.T) {
	for _, args := range [][]string{{"--services", "chord"}, {"--nodes", "1"}, {"--cycles", "0"}, {"--settle", "0s"}, {"stray"}} {
		if _, err := parse(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
