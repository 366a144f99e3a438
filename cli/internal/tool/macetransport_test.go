package tool

import (
	"encoding/json"
	"slices"
	"strconv"
	"testing"
)

// maceTransportWalk is docs/check.md's MaceTransport reproduction: two nodes,
// n1 sending two messages to n2 (MaceMC's case), up to four packets lost,
// walks of dmax steps (docs/check.md's: 100) biased as MaceMC biases them (a
// packet is far more likely to arrive, or, while the drop budget lasts, to
// be lost, than a retransmission timer to fire); docs/check.md takes up to
// 5,000 walks. --budget 0: the walks must not stop at the default 30s on
// a loaded machine.
func maceTransportWalk(walks, dmax int, fix ...string) []string {
	args := []string{"check", "--service", "macetransport", "--nodes", "2", "--strategy", "walk", "--walks", strconv.Itoa(walks),
		"--drops", "4", "--dinit", "5", "--dmax", strconv.Itoa(dmax), "--weights", "timer=1,datagram=20,drop=200", "--seed", "2",
		"--budget", "0", "--json"}
	return append(args, fix...)
}

// TestCheckReproducesMaceMCTransportBug: the walks find MaceMC's Figure 4
// (AllAcked dead), and the critical transition is the paper's step 5, the
// sender receiving the ACK of the new connection 6001 after the receiver
// switched back to the stale 2001 one. The path up to it is Figure 4's:
// SYN 2001 and its four retransmissions lost but the last, the fifth
// timeout closing the connection (SYN 6001), SYN 6001 then the stale SYN
// 2001 delivered. With the correction (monotone-syn) the same walks all
// reach a live state. The suspect is the 45th walk: this test takes 100
// walks of 60 steps, where the suspect, its critical step and the
// corrected service's verdict are the same as at docs/check.md's 100 steps
// (at 40 the probes judge the suspect C2) and the critical-transition
// search, most of the cost, is shorter (the corrected service's 5,000
// walks of docs/check.md's command took 1.7 s of CPU under the race
// detector, 500 walks 0.3 s: TestCheckReproducesMaceMCTransportBugLong in
// cli_long_test.go runs docs/check.md's command).
func TestCheckReproducesMaceMCTransportBug(t *testing.T) {
	checkMaceTransportBug(t, 100, 60)
}

// checkMaceTransportBug checks the reproduction with at most walks walks
// of dmax steps.
func checkMaceTransportBug(t *testing.T, walks, dmax int) {
	t.Helper()
	out := macetransportCheckJSON(t, maceTransportWalk(walks, dmax)...)
	l := out.Liveness
	if l == nil || l.Verdict != "C1" || l.Action != "n1 deliver-datagram macetransport.Ack from n2" || l.Critical != 12 {
		t.Fatalf("liveness %+v", l)
	}
	if len(l.Failing) != 1 || l.Failing[0] != "AllAcked: n1: to n2 (conn 6001): [m2] unacknowledged" {
		t.Fatalf("failing %q", l.Failing)
	}
	want := []string{
		"n1 app macetransport.SendMessages",              // step 1: SYN 2001
		"n2 drop-datagram macetransport.Data from n1",    // lost
		"n1 timer rtx-n2",                                // retransmission 1
		"n2 drop-datagram macetransport.Data from n1",    //
		"n1 timer rtx-n2",                                // 2
		"n2 drop-datagram macetransport.Data from n1",    //
		"n1 timer rtx-n2",                                // 3
		"n2 drop-datagram macetransport.Data from n1",    //
		"n1 timer rtx-n2",                                // 4: this SYN 2001 stays in flight
		"n1 timer rtx-n2",                                // step 2: the connection closes, SYN 6001
		"n2 deliver-datagram macetransport.Data from n1", // step 3: SYN 6001, ACK 6001
		"n2 deliver-datagram macetransport.Data from n1", // step 4: the stale SYN 2001, ACK 2001
		"n1 deliver-datagram macetransport.Ack from n2",  // step 5: ACK 6001, DATA 6002
		"n1 deliver-datagram macetransport.Ack from n2",  // ACK 2001: a sign of life
		"n2 deliver-datagram macetransport.Data from n1", // DATA 6002 ignored, ACK 2001
	}
	if len(l.Suspect) < len(want) || !slices.Equal(l.Suspect[:len(want)], want) {
		t.Fatalf("suspect path:\n%q\nwant it to start with\n%q", l.Suspect, want)
	}
	if len(l.LivePath) <= l.Critical || !slices.Equal(l.LivePath[:l.Critical], l.Suspect[:l.Critical]) {
		t.Fatalf("live path %q does not share the suspect's first %d steps", l.LivePath, l.Critical)
	}

	out = macetransportCheckJSON(t, maceTransportWalk(walks, dmax, "--fix", "monotone-syn")...)
	if l := out.Liveness; l == nil || l.Walks != walks || l.Live != walks || l.Suspects != 0 || l.Verdict != "" {
		t.Fatalf("fixed: liveness %+v", l)
	}
}

// macetransportCheckJSON runs 'crystalball check' with args (which include --json)
// and decodes its output.
func macetransportCheckJSON(t *testing.T, args ...string) checkOutput {
	t.Helper()
	code, stdout, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("%q: exit %d: %s", args, code, stderr)
	}
	var out checkOutput
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
