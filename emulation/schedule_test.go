package emulation_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/emulation"
)

// TestScheduleParse pins the fault schedule's grammar and its errors
// (testdata/schedule.txt): "parse" prints the canonical form of the
// schedule in its input, in time order, or its error; "check nodes=N"
// also checks its nodes against a run of N nodes.
func TestScheduleParse(t *testing.T) {
	datadriven.RunTest(t, "testdata/schedule.txt", func(t *testing.T, d *datadriven.TestData) string {
		s, err := emulation.ParseSchedule(d.Input)
		if err == nil && d.Cmd == "check" {
			var nodes int
			d.ScanArgs(t, "nodes", &nodes)
			err = s.Check(nodes)
		}
		if err != nil {
			if !errors.Is(err, emulation.ErrSchedule) {
				t.Errorf("%v does not wrap ErrSchedule", err)
			}
			return "error: " + err.Error() + "\n"
		}
		return s.String()
	})
}

// FuzzParseSchedule: any text parses or fails with ErrSchedule, never
// panics, and a parsed schedule's canonical form parses to itself.
func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{
		"at 30s partition {1,2} | {3}; at 90s heal; at 100s crash 2 for 60s",
		"at 2m isolate 3 for 30s\nat 3m cut 1->2\n# comment\nat 3m cut 1-2 for 1s",
		"at 0s jump n2 -10s; at 1h restart 2; at 5m heal 1->2; at 6m heal 3",
		"at 1s partition {1 , 2} | {3} | {4,5} for 1m",
		"at -1s crash 1", "at 1s partition {1,1} | {2}", "at 1s cut 1->1", "at",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s, err := emulation.ParseSchedule(text)
		if err != nil {
			if !errors.Is(err, emulation.ErrSchedule) {
				t.Fatalf("%q: error %v does not wrap ErrSchedule", text, err)
			}
			return
		}
		canon := s.String()
		again, err := emulation.ParseSchedule(canon)
		if err != nil {
			t.Fatalf("%q: the canonical form %q does not parse: %v", text, canon, err)
		}
		if got := again.String(); got != canon {
			t.Fatalf("%q: canonical form %q parses to %q", text, canon, got)
		}
		_ = s.Check(5)
		if strings.Count(canon, "\n") != len(s.Faults) {
			t.Fatalf("%q: %d statements, canonical form %q", text, len(s.Faults), canon)
		}
	})
}
