// Command crystalball is the command-line tool of the crystalball runtime
// for the services built into this module (RandTree, Chord and Paxos). All
// of it lives in package cli; a program of one's own gets the same
// subcommands for its own services by calling cli.Main with them
// (examples/lock). README.md documents every command.
package main

import "github.com/seed6eee2ec7/crystalball/cli"

func main() { cli.Main(cli.BuiltinServices()...) }
