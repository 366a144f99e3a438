package tool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Program is what a command-line program built on package cli serves:
// its services (required), and optionally subcommands and hand-written
// models of its own. cli.Main(services...) is Program{Services:
// services}.Main(); cmd/crystalball adds the papers' experiments (the
// experiment command) and the two-phase commit model (check --model 2pc)
// from package cli/papers, which nothing else imports.
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

// Command is a subcommand of a Program's own. Run gets the arguments
// after the command's name and the program's standard output and error;
// an error it returns is printed on one line, prefixed with the program
// and command names, and exits with status 1, or 2 when it is (or wraps)
// a usage error (UsageErrorf) or flag.ErrHelp (status 0, nothing printed).
type Command struct {
	// Name is the subcommand's name: non-empty, no spaces, not a
	// built-in command's.
	Name string
	// Summary is its line in the program's usage text.
	Summary string
	// Run runs it. It must not call os.Exit.
	Run func(args []string, stdout, stderr io.Writer) error
}

// Main runs the command line in os.Args for p and exits the process with
// the CLI's exit status: 0 success, 1 the command failed, 2 bad usage. A
// Program that breaks its contract (no service, an invalid one, a name
// given twice) is a programming error: Main says so on standard error and
// exits with status 1. It does not return.
func (p Program) Main() {
	if len(os.Args) > 0 && os.Args[0] != "" {
		programName = filepath.Base(os.Args[0])
	}
	os.Exit(p.Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run executes the command line args (a subcommand and its flags) for p,
// writing to stdout and stderr, and returns the exit status Main would
// exit with. It is what a program's own tests call.
func (p Program) Run(args []string, stdout, stderr io.Writer) int {
	return run(p, args, stdout, stderr)
}

// validateCommands checks the program's own commands against the
// built-in ones and each other.
func validateCommands(cmds []Command, builtin map[string]command) error {
	seen := map[string]bool{}
	for i, c := range cmds {
		switch {
		case c.Name == "" || strings.ContainsAny(c.Name, " \t\n") || c.Name == "help":
			return fmt.Errorf("cli: command %d: name %q is empty, has spaces or is help", i+1, c.Name)
		case builtin[c.Name].run != nil:
			return fmt.Errorf("cli: command %q is a built-in command", c.Name)
		case seen[c.Name]:
			return fmt.Errorf("cli: command %q is given twice", c.Name)
		case c.Run == nil:
			return fmt.Errorf("cli: command %q: Run is nil", c.Name)
		}
		seen[c.Name] = true
	}
	return nil
}

// errNoService is Program's "at least one service" rule.
var errNoService = errors.New("cli: no service given to Main")
