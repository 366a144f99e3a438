package tool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Program is a cli.Program in the form the subcommands run (package cli
// converts its own): its services, commands and models. Its fields are
// cli.Program's, whose comments state their contract.
type Program struct {
	Services []Service
	Commands []Command
	Models   []Model
}

// Command is a cli.Command, whose comments state its contract; package cli
// converts its own to this type.
type Command struct {
	Name    string
	Summary string
	Run     func(args []string, stdout, stderr io.Writer) error
}

// Main runs the command line in os.Args for p and exits the process with
// the CLI's exit status (cli.Program.Main). It does not return.
func (p Program) Main() {
	if len(os.Args) > 0 && os.Args[0] != "" {
		programName = filepath.Base(os.Args[0])
	}
	os.Exit(p.Run(os.Args[1:], os.Stdout, os.Stderr))
}

// Run executes the command line args (a subcommand and its flags) for p,
// writing to stdout and stderr, and returns the exit status Main would
// exit with (cli.Program.Run).
func (p Program) Run(args []string, stdout, stderr io.Writer) int {
	return run(p, args, stdout, stderr)
}

// validateCommands checks the program's own commands against the
// built-in ones and each other.
func validateCommands(cmds []Command, builtin map[string]command) error {
	seen := map[string]bool{}
	for i, c := range cmds {
		if err := checkProgramCommand(i, c, builtin, seen); err != nil {
			return err
		}
		seen[c.Name] = true
	}
	return nil
}

// checkProgramCommand checks the program's command i (0-based) against
// Command's contract, the built-in commands and the commands seen before.
func checkProgramCommand(i int, c Command, builtin map[string]command, seen map[string]bool) error {
	return FirstBrokenRule(
		UsageRule{c.Name == "" || strings.ContainsAny(c.Name, " \t\n") || c.Name == "help", fmt.Errorf("cli: command %d: name %q is empty, has spaces or is help", i+1, c.Name)},
		UsageRule{builtin[c.Name].run != nil, fmt.Errorf("cli: command %q is a built-in command", c.Name)},
		UsageRule{seen[c.Name], fmt.Errorf("cli: command %q is given twice", c.Name)},
		UsageRule{c.Run == nil, fmt.Errorf("cli: command %q: Run is nil", c.Name)},
	)
}

// errNoService is Program's "at least one service" rule.
var errNoService = errors.New("cli: no service given to Main")
