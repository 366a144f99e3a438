package zoo_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
)

func runZoo(t *testing.T, args ...string) (string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := (cli.Program{Services: zoo.PropertyServices()}).Run(args, &out, &errb); code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errb.String())
	}
	return out.String(), errb.String()
}

// TestPropertyServicesOnTheCommandLine: check --json finds the register's
// stale read, and trace show replays its report and prints the path's
// client history; emulate --json gives every liveness and bounded
// property's availability and outages, and the text summary prints them.
func TestPropertyServicesOnTheCommandLine(t *testing.T) {
	out, _ := runZoo(t, "check", "--service", "zoo-register", "--nodes", "3", "--max-depth", "8", "--json")
	file := filepath.Join(t.TempDir(), "check.json")
	if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	shown, _ := runZoo(t, "trace", "show", file)
	for _, want := range []string{"violation of Linearizable (safety) at depth 6", "client history at the end of the path (2 operations",
		"n3 zoo-register.Read{} -> zoo-register.Value{V:0} [2,3]"} {
		if !strings.Contains(shown, want) {
			t.Errorf("trace show lacks %q:\n%s", want, shown)
		}
	}

	out, _ = runZoo(t, "emulate", "--service", "zoo-follower", "--nodes", "3", "--duration", "1m", "--churn", "0", "--json")
	var doc struct {
		Result emulation.Result `json:"result"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if tr := doc.Result.Timed; len(tr) != 2 || tr[1].Name != "CaughtUpWithin" || tr[1].Kind != "bounded" || tr[1].Outages == 0 || tr[0].Availability >= 1 {
		t.Errorf("emulate --json timed: %+v, want AllCaughtUp's availability and CaughtUpWithin's outage (the late follower)", tr)
	}
	text, _ := runZoo(t, "emulate", "--service", "zoo-register", "--nodes", "4", "--duration", "30s", "--churn", "0")
	for _, want := range []string{"history — the client operations of the whole run:", "Linearizable 40 operations (0 open): violated"} {
		if !strings.Contains(text, want) {
			t.Errorf("emulate's summary lacks %q:\n%s", want, text)
		}
	}
}
