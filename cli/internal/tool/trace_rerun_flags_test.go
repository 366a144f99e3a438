package tool

import (
	"flag"
	"io"
	"slices"
	"testing"
)

// Every flag 'emulate' accepts parses in a trace's header: a trace written
// by any emulate command line can be re-run by 'trace debug'.
func TestRerunParsesEveryEmulateFlag(t *testing.T) {
	fs := flag.NewFlagSet("emulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	p := emulateParams{services: testCatalog()}
	p.registerCommand(fs)
	args := []string{"--service", "chord", "--nodes", "3", "--duration", "2m"}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if slices.Contains([]string{"service", "nodes", "duration"}, f.Name) {
			return
		}
		n++
		args = append(args, "--"+f.Name+"="+f.DefValue)
	})
	if n < 20 {
		t.Fatalf("emulate registers %d flags besides service, nodes and duration; the flag set is not emulate's", n)
	}
	if _, err := rerunConfig(testCatalog(), args); err != nil {
		t.Fatalf("a header with every emulate flag at its default: %v", err)
	}
	if _, err := rerunConfig(testCatalog(), []string{"--service", "chord", "--quiet", "--json", "--control=false", "--mode", "debug", "--confirm"}); err != nil {
		t.Fatalf("emulate --quiet --json --control=false --mode debug --confirm: %v", err)
	}
}

// TestRerunRefusesWhatEmulateRefuses: a header is a file, which a hand
// may have edited, so the command line it holds passes the rules of
// 'emulate' before it re-runs; a negative auto flag is refused, not read
// as auto.
func TestRerunRefusesWhatEmulateRefuses(t *testing.T) {
	for _, args := range [][]string{
		{"--service", "chord", "--heal", "-1s"},
		{"--service", "chord", "--predictors", "-2"},
		{"--service", "chord", "--confirm"},
		{"--service", "chord", "--nodes", "0"},
	} {
		emErr := runEmulate(testCatalog(), args, io.Discard, io.Discard)
		_, rerunErr := rerunConfig(testCatalog(), args)
		if emErr == nil || rerunErr == nil {
			t.Errorf("emulate %q: emulate's error %v, the re-run's %v; want both refused", args, emErr, rerunErr)
		}
	}
}
