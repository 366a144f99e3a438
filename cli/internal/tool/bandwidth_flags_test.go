package tool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

func TestParseBandwidth(t *testing.T) {
	good := map[string]int64{
		"0": 0, "off": 0, "": 0, "inet": 42, "INET": 42,
		"1Mbps": 1_000_000, "5Mb/s": 5_000_000, "800kbps": 800_000, "1.5Mbit/s": 1_500_000,
		"1000000": 1_000_000, "2G": 2_000_000_000, "64Kb/s": 64_000, "100bps": 100,
	}
	for in, want := range good {
		if got, err := parseBandwidth(in, 42); err != nil || got != want {
			t.Errorf("parseBandwidth(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"fast", "1MB/s", "1Bps", "-1Mbps", "0.1", "1Tbps", "NaN", "Mbps", "1e300"} {
		if got, err := parseBandwidth(in, 42); err == nil {
			t.Errorf("parseBandwidth(%q) = %d, want an error", in, got)
		}
	}
}

func TestBandwidthFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"emulate", "--uplink", "fast"}, "--uplink: invalid capacity \"fast\""},
		{[]string{"emulate", "--uplink", "-1Mbps"}, "--uplink: invalid capacity \"-1Mbps\": must not be negative"},
		{[]string{"emulate", "--downlink", "5MB/s"}, "--downlink: invalid capacity \"5MB/s\": give bits per second"},
		{[]string{"emulate", "--send-queue", "-1"}, "--send-queue must not be negative"},
		{[]string{"emulate", "--send-queue", "lots"}, "invalid value"},
	}
	for _, c := range cases {
		expectUsageError(t, c.args, c.want)
	}
}

// --uplink and --downlink turn the link model on: the JSON reports the
// bytes on the links, and the summary has a links line.
func TestEmulateWithLinks(t *testing.T) {
	args := []string{"emulate", "--nodes", "6", "--duration", "1m", "--churn", "0", "--seed", "3", "--uplink", "inet", "--downlink", "5Mb/s"}
	code, stdout, stderr := runCLI(append(args, "--json")...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Result struct {
			Links *emulation.LinkStats `json:"links"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, stdout)
	}
	if l := out.Result.Links; l == nil || l.ServiceBytes == 0 || l.ServiceMessages == 0 {
		t.Fatalf("links = %+v", l)
	}
	code, stdout, stderr = runCLI(args...)
	if code != exitOK || !strings.Contains(stdout, "  links:     service ") {
		t.Fatalf("exit %d, summary without a links line:\n%s%s", code, stdout, stderr)
	}
	if _, plain, _ := runCLI("emulate", "--nodes", "6", "--duration", "1m", "--churn", "0", "--seed", "3"); strings.Contains(plain, "links:") {
		t.Fatalf("links line without bandwidth:\n%s", plain)
	}
}
