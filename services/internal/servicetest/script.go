package servicetest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// ScriptPrefix replays the nodetest script at path on a fresh harness
// built from cfg, up to (not including) its first command whose text is
// stop, and returns the harness; the rest of the script is not run. The
// outputs are not compared: the script's own test (nodetest.Walk) does
// that. It fails t when the script cannot be read, a command cannot run,
// or stop is not one of its commands.
func ScriptPrefix(t testing.TB, cfg nodetest.Config, path, stop string) *nodetest.Harness {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := nodetest.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// A command is a line followed by "----"; its output runs to the next
	// blank line (the scripts' outputs have none inside).
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
