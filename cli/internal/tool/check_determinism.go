package tool

import (
	"flag"
	"strconv"

	"github.com/seed6eee2ec7/crystalball/consequence"
)

// registerDeterminism defines --verify-determinism: the share of a
// service search's transitions the explorer runs twice
// (consequence.DeterminismCheck), so that a handler reading the wall
// clock, a map's order or a global variable, or a Clone sharing memory,
// stops the search with "the service is not deterministic: …" instead of
// making it explore states no deployment reaches.
func (f *checkFlags) registerDeterminism(fs *flag.FlagSet) {
	fs.IntVar(&f.verifyEvery, "verify-determinism", consequence.DefaultVerifyEvery,
		"run about one transition in N twice, once on a copy decoded from its checkpoint, and stop at the first that differs: the service is not deterministic (1: every transition; 0: no check; default "+strconv.Itoa(consequence.DefaultVerifyEvery)+", about 2% of a search's time)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress on stderr: no level lines, no status line on a terminal nor a line every 10s elsewhere")
}
