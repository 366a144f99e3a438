// Package schema is the switch of the mutation corpus (bench/mutants):
// the corpus compiles every mutant of every service into one program as a
// mutant schema — each mutation site becomes code that behaves as the
// original unless that site's mutant is the active one — so that hundreds
// of mutants cost one build, and a mutant is selected at run time.
//
// Only the overlay files bench/mutants generates import this package; the
// shipped services never do, so their determinism rules are untouched. In
// a mutant build, Active is set once before a run and only read while it
// runs: the emulator and the explorer's workers read it, nothing writes
// it concurrently.
package schema
