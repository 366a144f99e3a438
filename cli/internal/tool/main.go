// Package tool implements the subcommands of package cli (check, emulate,
// node, serve, trace, version) for the services, commands and models of a
// Program. It is internal so that the public surface stays cli's few
// types; cli/papers, the papers' services and experiments, builds on its
// exported helpers (flags, progress lines, emulated runs) from inside the
// cli tree. See package cli for the command line's contract.
package tool

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
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

// commands returns the built-in subcommands for the services of cat and
// the program's own (cat.commands, validated by newCatalog).
func commands(cat *catalog) map[string]command {
	with := func(f func(*catalog, []string, io.Writer, io.Writer) error) func([]string, io.Writer, io.Writer) error {
		return func(args []string, stdout, stderr io.Writer) error { return f(cat, args, stdout, stderr) }
	}
	cs := []command{
		{name: "check", summary: "explore a service from its initial state (or a model) and report violations", run: with(runCheck)},
		{name: "emulate", summary: "run an emulated deployment of a service and report what happened", run: with(runEmulate)},
		{name: "node", summary: "run one live node of a service over TCP and memberlist", run: with(runNode)},
		{name: "serve", summary: "serve [--listen ADDR] PATH...: a web view of reports, traces and --json outputs (stepper, event graph, figures)", run: with(runServe)},
		{name: "trace", summary: "trace show|debug FILE: replay a check --json, --reports or emulate --trace file step by step (MaceMC's Mdb)", run: with(runTrace)},
		{name: "version", summary: "print the program's module version and the VCS revision it was built from", run: runVersion},
	}
	m := make(map[string]command, len(cs)+len(cat.commands))
	for _, c := range cs {
		m[c.name] = c
	}
	for _, c := range cat.commands {
		m[c.Name] = command{name: c.Name, summary: c.Summary, run: c.Run}
	}
	return m
}

// builtinCommands are the built-in subcommands' names (a program's own
// may not take one).
func builtinCommands() map[string]command { return commands(&catalog{}) }

// programName names the program in usage text and error messages: the
// base name of os.Args[0] once Main runs (a user's own binary says its own
// name), "crystalball" when run is called directly (the package's tests).
var programName = "crystalball"

// usageError marks errors caused by the user's input: they exit with
// exitUsage.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// UsageErrorf returns an error, formatted as fmt.Errorf does (%w wraps),
// that makes a Command exit with status 2, bad usage.
func UsageErrorf(format string, args ...any) error { return usagef(format, args...) }

// run executes the command line for p and returns the process exit code.
// Errors are printed as one line on stderr.
func run(p Program, args []string, stdout, stderr io.Writer) int {
	cat, err := newCatalog(p)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", programName, err)
		return exitFailure
	}
	cmds := commands(cat)
	args, stderr = rewriteHelpArgs(args, cmds, stdout, stderr)
	if asksForUsage(args) {
		printUsage(stdout, cmds)
		if len(args) == 0 {
			return exitUsage
		}
		return exitOK
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q (run '%s help')\n", programName, args[0], programName)
		return exitUsage
	}
	return commandExit(c, c.run(args[1:], stdout, stderr), stderr)
}

// rewriteHelpArgs turns 'help COMMAND' into 'COMMAND -h' printing on
// standard output (so the returned stderr is stdout), and --version into
// the version command.
func rewriteHelpArgs(args []string, cmds map[string]command, stdout, stderr io.Writer) ([]string, io.Writer) {
	switch {
	case len(args) == 2 && args[0] == "help" && cmds[args[1]].run != nil:
		return []string{args[1], "-h"}, stdout
	case len(args) > 0 && args[0] == "--version":
		return []string{"version"}, stderr
	}
	return args, stderr
}

// asksForUsage reports whether args ask for the program's usage: none,
// or help, -h or --help.
func asksForUsage(args []string) bool {
	return len(args) == 0 || slices.Contains([]string{"help", "-h", "--help"}, args[0])
}

// commandExit is the exit code of command c ended with err, which it
// prints on stderr (-h is no error).
func commandExit(c command, err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "%s %s: %v\n", programName, c.name, oneLine(err))
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprintf(w, "usage: %s COMMAND [flags]\n", programName)
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
	fmt.Fprintf(w, "run '%s help COMMAND' (or '%s COMMAND -h') for a command's flags\n", programName, programName)
}

// oneLine keeps an error message on one line.
func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// newFlagSet returns a flag set that reports errors instead of exiting, and
// whose parse errors become usage errors.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(programName+" "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// setUsage makes fs's -h print "usage: PROGRAM synopsis", the command's
// one-paragraph description and its flags.
func setUsage(fs *flag.FlagSet, synopsis, description string) {
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s %s\n", programName, synopsis)
		fmt.Fprintln(fs.Output(), description)
		fs.PrintDefaults()
	}
}

// parseFlags parses args and rejects positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagsOnly(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseFlagsOnly parses args, leaving positional arguments to the caller
// (fs.Args). Usage text goes to the flag set's output only when asked for
// (-h: flag.ErrHelp); parse errors come back as usage errors, which run
// prints on one line.
func parseFlagsOnly(fs *flag.FlagSet, args []string) error {
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
	return nil
}
