package cli

import (
	"flag"
	"io"

	"github.com/seed6eee2ec7/crystalball/cli/internal/tool"
)

// Program is a command-line program built on this package: its services
// (required), and optionally subcommands and hand-written models of its
// own. Main(services...) is Program{Services: services}.Main();
// cmd/crystalball adds the papers' experiments (the experiment command)
// and the two-phase commit model (check --model 2pc) from package
// cli/papers, which nothing else imports.
//
// A Program is plain data: its methods read it and never change it, and
// Run may run any number of command lines with one Program.
type Program struct {
	// Services are the services --service selects (Service's contract).
	// At least one is required.
	Services []Service
	// Commands are subcommands beside the built-in ones (check, emulate,
	// node, serve, trace, version); a name may not repeat a built-in's.
	Commands []Command
	// Models are the hand-written models 'check --model NAME' explores
	// instead of a service (Model's contract).
	Models []Model
}

// Command is a subcommand of a Program's own (cmd/crystalball's
// experiment). Run gets the arguments after the command's name and the
// program's standard output and error; an error it returns is printed on
// one line, prefixed with the program and command names, and exits with
// status 1, or 2 when it is (or wraps) a usage error (UsageErrorf), or 0
// with nothing printed when it is flag.ErrHelp.
type Command struct {
	// Name is the subcommand's name: non-empty, no spaces, not "help" nor
	// a built-in command's, unique among the program's commands.
	Name string
	// Summary is its line in the program's usage text.
	Summary string
	// Run runs it. It must not call os.Exit.
	Run func(args []string, stdout, stderr io.Writer) error
}

// Model is a hand-written model that 'check --model NAME' explores
// instead of a service: a state machine of its own, outside node.Spec
// (cmd/crystalball's two-phase commit), built with NewModelSearch.
type Model struct {
	// Name selects the model (--model NAME): non-empty, without spaces or
	// commas, unique among the program's models.
	Name string
	// Flags defines the model's own flags on check's flag set (2pc:
	// --rms) and returns the function check calls once the command line
	// is parsed, with --symmetry, to build the search; an error it
	// returns is bad usage. A flag check already has (or another model
	// defines) is a programming error, reported when the program starts.
	Flags func(fs *flag.FlagSet) func(symmetry bool) (*ModelSearch, error)
}

// Main runs the command line in os.Args for p and exits the process with
// the CLI's exit status: 0 success, 1 the command failed, 2 bad usage. A
// Program that breaks its contract (no service, an invalid one, a name
// given twice) is a programming error: Main says so on standard error and
// exits with status 1. It does not return.
func (p Program) Main() { p.internal().Main() }

// Run executes the command line args (a subcommand and its flags) for p,
// writing to stdout and stderr, and returns the exit status Main would
// exit with. It is what a program's own tests call.
func (p Program) Run(args []string, stdout, stderr io.Writer) int {
	return p.internal().Run(args, stdout, stderr)
}

// internal returns p in the form the subcommands run (package
// cli/internal/tool's, which cannot import this package).
func (p Program) internal() tool.Program {
	t := tool.Program{}
	for _, s := range p.Services {
		t.Services = append(t.Services, s.internal())
	}
	for _, c := range p.Commands {
		t.Commands = append(t.Commands, tool.Command(c))
	}
	for _, m := range p.Models {
		t.Models = append(t.Models, tool.Model(m))
	}
	return t
}
