package cli

import (
	"encoding/json"
	"slices"
	"testing"
)

// pastryBugArgs is the command that reproduces MaceMC's Pastry bug (a node
// that rejoins with the same identifier before its old entry is purged
// cannot join): three nodes, one reset, walks biased MaceMC-style (rare
// timers and resets) that may count as live only after 300 steps, so that
// a walk whose reset comes after the ring formed is judged on what follows.
var pastryBugArgs = []string{"check", "--service", "pastry", "--nodes", "3", "--strategy", "walk", "--budget", "0",
	"--resets", "1", "--walks", "100", "--dinit", "300", "--dmax", "1000", "--weights", "timer=0.02,reset=0.05",
	"--seed", "1", "--json"}

// runPastryCheck runs args (plus extra) and decodes the JSON output.
func runPastryCheck(t *testing.T, extra ...string) checkOutput {
	t.Helper()
	code, stdout, stderr := runCLI(append(slices.Clone(pastryBugArgs), extra...)...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCheckReproducesMaceMCPastryBug pins the offline reproduction of
// MaceMC's Pastry bug (§1 of the MaceMC paper; FreePastry 1.4.3's "Dropped
// JoinRequest on rapid rejoin problem"): X = n2 joins through the
// bootstrap n1 and announces itself, then resets and rejoins at once with
// the same identifier, before n1 has heard its old incarnation's Announce.
// The critical transition (C1) is n1 delivering that Announce: it puts X's
// old entry into n1's leaf set, and from then on n1 routes X's Join to the
// node numerically closest to X — X itself, unjoined, which drops it —
// while the new X answers n1's probes, so the entry is never purged. Before
// it n1 did not know X and would have answered the Join itself. With the
// correction (--fix rapid-rejoin) the same walks find nothing.
func TestCheckReproducesMaceMCPastryBug(t *testing.T) {
	l := runPastryCheck(t).Liveness
	if l == nil || l.Verdict != "C1" || l.Action != "n1 deliver-datagram pastry.Announce from n2" {
		t.Fatalf("liveness %+v", l)
	}
	if len(l.Failing) == 0 || l.Failing[0] != "AllJoined: n2: joining" {
		t.Fatalf("failing %q", l.Failing)
	}
	// X had joined, reset and rejoined (its restart call) before the
	// critical step ...
	before := l.Suspect[:l.Critical]
	joined := slices.Index(before, "n2 deliver-datagram pastry.JoinReply from n1")
	reset := slices.Index(before, "n2 reset rst")
	rejoin := -1
	for i, a := range before {
		if a == "n2 app pastry.JoinOverlay" {
			rejoin = i
		}
	}
	if joined < 0 || reset < joined || rejoin < reset {
		t.Fatalf("before the critical step %d: joined at %d, reset at %d, rejoined at %d: %q", l.Critical+1, joined, reset, rejoin, before)
	}
	// ... and after it n1 forwards X's Join to X itself, which drops it.
	after := l.Suspect[l.Critical+1:]
	fwd := slices.Index(after, "n2 deliver-datagram pastry.Join from n1")
	if fwd < 0 || slices.Contains(after, "n2 deliver-datagram pastry.JoinReply from n1") {
		t.Fatalf("after the critical step: %q", after[:min(len(after), 40)])
	}

	fixed := runPastryCheck(t, "--fix", "rapid-rejoin").Liveness
	if fixed == nil || fixed.Verdict != "" || fixed.Suspects != 0 || fixed.Walks != 100 || fixed.Live != 100 {
		t.Fatalf("fixed: %+v", fixed)
	}
}
