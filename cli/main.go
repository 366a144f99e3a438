// Package cli is the command-line tool of the crystalball runtime:
// a live node over TCP and memberlist (node), emulated deployments of
// hundreds of nodes with deep online debugging and steering (emulate),
// offline model checking from an initial state, MaceMC's mode (check),
// replaying and inspecting violations (trace show), and the papers'
// experiments (experiment NAME). README.md documents every command.
//
// Every command that involves randomness takes --seed, and the same seed and
// flags give the same output. --json prints one machine-readable JSON object
// instead of the human summary.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the command ran and failed (e.g. an emulated run crashed)
	exitUsage   = 2 // bad flags or arguments
)

// command is one subcommand.
type command struct {
	name    string
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

func commands() map[string]command {
	cs := []command{
		{name: "check", summary: "explore a service from its initial state (or the 2pc model) and report violations", run: runCheck},
		{name: "emulate", summary: "run an emulated deployment of a service and report what happened", run: runEmulate},
		{name: "experiment", summary: "run one of the paper's experiments (crystalball experiment NAME; run it without NAME for the list)", run: runExperiment},
		{name: "node", summary: "run one live node of a service over TCP and memberlist", run: runNode},
		{name: "trace", summary: "trace show FILE: replay a violation found by check --json step by step", run: runTrace},
	}
	m := make(map[string]command, len(cs))
	for _, c := range cs {
		m[c.name] = c
	}
	return m
}

// usageError marks errors caused by the user's input: they exit with
// exitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// Main runs the command line in os.Args for the services it is given and
// exits the process with the CLI's exit status (0 success, 1 the command
// failed, 2 bad usage). It is what a program's main calls.
func Main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code. Errors
// are printed as one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(stdout, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "crystalball: unknown command %q (run 'crystalball help')\n", args[0])
		return exitUsage
	}
	err := c.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	}
	fmt.Fprintf(stderr, "crystalball %s: %v\n", c.name, oneLine(err))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprintln(w, "usage: crystalball COMMAND [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "run 'crystalball COMMAND -h' for a command's flags")
}

// oneLine keeps an error message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// newFlagSet returns a flag set that reports errors instead of exiting, and
// whose parse errors become usage errors.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("crystalball "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args and rejects positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	// Usage text goes to stderr only when asked for; parse errors come back
	// as one-line errors from run.
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	if errors.Is(err, flag.ErrHelp) {
		fs.Usage()
		return err
	}
	if err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}
