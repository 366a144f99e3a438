// Command crystalball is the command-line tool of the crystalball runtime
// for the papers' services built into this module (RandTree, Chord, Paxos,
// MaceTransport, Pastry, Bullet′), with the papers' experiments and the
// two-phase commit model: package cli's generic command line over package
// cli/papers. A program of one's own gets the same subcommands for its own
// services by calling cli.Main with them (examples/lock), and links none
// of the papers. README.md introduces every command; docs/ has each one's
// reference (docs/emulate.md, docs/check.md, docs/live-node.md, ...).
package main

import "github.com/seed6eee2ec7/crystalball/cli/papers"

func main() { papers.Program().Main() }
