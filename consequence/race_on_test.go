//go:build race

package consequence

// raceEnabled reports whether the tests run under the race detector, which
// slows the handlers tenfold: the heaviest round-trip tests then explore a
// level less.
const raceEnabled = true
