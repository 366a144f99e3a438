package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestBreaksFlagErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"emulate", "--breaks", "often"}, "--breaks: invalid rate"},
		{[]string{"emulate", "--breaks", "1/fortnight"}, "--breaks: invalid rate"},
		{[]string{"emulate", "--breaks", "-1/m"}, "--breaks: invalid rate"},
		{[]string{"emulate", "--churn", "0", "--breaks", "1/m", "--duration", "1m", "--heal", "40s"}, "leaves no time for churn or breaks"},
	}
	for _, c := range cases {
		expectUsageError(t, c.args, c.want)
	}
}

// --breaks schedules connection breaks in the churn phase; the JSON and
// the summary report them, and the run stays a function of its seed.
func TestEmulateBreaks(t *testing.T) {
	args := []string{"emulate", "--nodes", "8", "--duration", "2m", "--heal", "30s", "--churn", "0", "--breaks", "0.2/s", "--seed", "4", "--json"}
	code, first, stderr := runCLI(args...)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		BreaksPerMinute float64 `json:"breaks_per_minute"`
		Result          struct {
			Breaks struct {
				Broken, Skipped int64
			} `json:"breaks"`
			EventsByKind map[string]int64 `json:"events_by_kind"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(first), &out); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, first)
	}
	b := out.Result.Breaks
	// 12 expected in the minute between the warm-up (30s) and the heal.
	if out.BreaksPerMinute != 12 || b.Broken+b.Skipped < 4 || b.Broken == 0 || out.Result.EventsByKind["break"] != b.Broken {
		t.Fatalf("breaks_per_minute %v, breaks %+v, break events %d", out.BreaksPerMinute, b, out.Result.EventsByKind["break"])
	}
	if _, second, _ := runCLI(args...); stripWall(t, first) != stripWall(t, second) {
		t.Fatalf("same flags, different output:\n%s\n%s", first, second)
	}
	code, human, stderr := runCLI(args[:len(args)-1]...)
	if code != exitOK || !strings.Contains(human, "connection breaks 12/min") || !strings.Contains(human, "connections broken") {
		t.Fatalf("exit %d, summary lacks the breaks:\n%s%s", code, human, stderr)
	}
}
