package newcomer_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/examples/newcomer"
)

// run runs one command line of the services' program.
func run(args ...string) (status int, stdout, stderr string) {
	var out, errb bytes.Buffer
	status = cli.Program{Services: newcomer.Services()}.Run(args, &out, &errb)
	return status, out.String(), errb.String()
}

// TestCheckFindsEachPlantedBug: check --breaks 1 finds the permit
// limiter's and the commit's planted bugs at their depths, and nothing on
// their twins to the same depth.
func TestCheckFindsEachPlantedBug(t *testing.T) {
	for _, c := range []struct {
		service, property string
		depth             int
	}{
		{"permits", "AtMostLimit", 5},
		{"commit", "AgreementAtomic", 9},
	} {
		for _, fix := range []string{"", "all"} {
			args := []string{"check", "--service", c.service, "--nodes", "3", "--breaks", "1", "--max-depth", "10", "--json", "--quiet"}
			if fix != "" {
				args = append(args, "--fix", fix)
			}
			status, out, stderr := run(args...)
			if status != 0 {
				t.Fatalf("%v: status %d: %s", args, status, stderr)
			}
			var rep struct {
				Violations []struct {
					Property string `json:"property"`
					Depth    int    `json:"depth"`
				} `json:"violations"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("%v: %v", args, err)
			}
			switch {
			case fix == "" && (len(rep.Violations) == 0 || rep.Violations[0].Property != c.property || rep.Violations[0].Depth != c.depth):
				t.Errorf("%s: %+v, want %s at depth %d", c.service, rep.Violations, c.property, c.depth)
			case fix != "" && len(rep.Violations) > 0:
				t.Errorf("%s --fix all: %+v", c.service, rep.Violations)
			}
		}
	}
}

// TestCorrections: a correction the service does not have is bad usage;
// the mutual exclusion takes none.
func TestCorrections(t *testing.T) {
	for _, args := range [][]string{
		{"check", "--service", "permits", "--fix", "nonsense"},
		{"check", "--service", "mutex", "--fix", "all"},
	} {
		if status, _, stderr := run(args...); status != 2 || !strings.Contains(stderr, "fix") && !strings.Contains(stderr, "correction") {
			t.Errorf("%v: status %d, %q", args, status, stderr)
		}
	}
}
