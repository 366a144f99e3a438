// Package cli is the command-line tool of the crystalball runtime, as a
// library: Main parses os.Args and runs every subcommand for the services
// a program gives it, so a program of one's own gets the whole tool for its
// own services in one call:
//
//	func main() {
//		cli.Main(cli.Service{Spec: lockSpec(), Workload: lockWorkload})
//	}
//
// The subcommands: a live node over TCP and memberlist, with checkpoints,
// snapshots and steering (node); emulated deployments of hundreds of nodes
// with deep online debugging and steering (emulate); offline model checking
// from an initial state, MaceMC's mode (check); replaying and inspecting
// violations (trace show, trace debug); a web view of reports, traces and
// results (serve); and the program's version (version). README.md
// introduces every command and docs/ documents each (docs/emulate.md,
// docs/check.md, docs/trace.md, docs/serve.md, docs/live-node.md);
// examples/lock is a program of its own.
//
// The package is generic: it links no service, experiment or model of the
// papers. A Program adds subcommands (Command) and hand-written models
// for check --model (Model) of its own; cmd/crystalball is the Program of
// package cli/papers (the papers' services, their experiments and the
// two-phase commit model), which only it imports. The subcommands'
// implementation is internal (cli/internal/tool), which runs a Program
// converted to its own form.
//
// Every command that involves randomness takes --seed, and the same seed and
// flags give the same output. --json prints one machine-readable JSON object
// instead of the human summary. Reports (check --json, --reports files)
// carry a format version and the service's name and flags, and 'trace show'
// rebuilds their model from the services of the program that runs it.
//
// Exit status: 0 success, 1 the command failed, 2 bad usage (one line on
// standard error).
package cli

import (
	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
	"github.com/seed6eee2ec7/crystalball/consequence"
)

// ModelSearch is a Model ready for check (NewModelSearch).
type ModelSearch = tool.ModelSearch

// Main runs the command line in os.Args (a subcommand and its flags) for
// the services it is given, which --service selects, and exits the process
// with the CLI's exit status: 0 success, 1 the command failed, 2 bad usage.
// It is what a program's main calls, and it does not return. Services that
// break Service's contract (no name, a name given twice, an invalid Spec or
// no Workload) are a programming error: Main says so on standard error and
// exits with status 1.
func Main(services ...Service) { Program{Services: services}.Main() }

// UsageErrorf returns an error, formatted as fmt.Errorf does (%w wraps),
// that makes a Command exit with status 2, bad usage, its message on one
// line of standard error.
func UsageErrorf(format string, args ...any) error { return tool.UsageErrorf(format, args...) }

// NewModelSearch returns the search of model m against props that a
// Model's builder hands to check: nodes is how many processes the model
// has and options its configuration ("rms=3,symmetry"), both as check's
// output and reports name them.
func NewModelSearch[S, A any](m consequence.Model[S, A], props []consequence.Property[S], nodes int, options string) *ModelSearch {
	return tool.NewModelSearch(m, props, nodes, options)
}
