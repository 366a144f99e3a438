package nodetest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
)

// ReplayUntil replays the script at path on a fresh Harness built from
// cfg, up to (not including) its first command whose text is stop, and
// returns the harness in that state — for a test that goes on from the
// middle of a scenario, e.g. to explore what may follow from it. The rest
// of the script is not run and the outputs are not compared: the script's
// own test (Walk) does that. It fails t when the script cannot be read, a
// command cannot run, or stop is not one of its commands.
//
// A command is a line followed by "----"; its output runs to the next
// blank line, so a script replayed this way must have no blank line
// inside an output.
func ReplayUntil(t testing.TB, cfg Config, path, stop string) *Harness {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	for i := 0; i+1 < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if line == "" || strings.HasPrefix(line, "#") || lines[i+1] != "----" {
			continue
		}
		if line == stop {
			return h
		}
		cmd, args, err := datadriven.ParseLine(line)
		if err != nil {
			t.Fatalf("%s:%d: %v", path, i+1, err)
		}
		h.Run(t, &datadriven.TestData{Pos: fmt.Sprintf("%s:%d", path, i+1), Cmd: cmd, CmdArgs: args})
	}
	t.Fatalf("%s has no command %q", path, stop)
	return nil
}
