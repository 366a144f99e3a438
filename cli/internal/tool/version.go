package tool

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion prints what the binary was built from: its main module and
// version, crystalball's version when the main module is a user's program,
// the VCS revision and whether the tree was modified, and the Go version.
// A binary without build information (some test binaries) says so.
func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", stderr)
	setUsage(fs, "version", "Prints the program's module version, crystalball's, the VCS revision it was built from and the Go version.")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("version takes no arguments, got %q", fs.Arg(0))
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		fmt.Fprintf(stdout, "%s: no build information (%s)\n", programName, runtime.Version())
		return nil
	}
	fmt.Fprintf(stdout, "%s %s %s\n", programName, bi.Main.Path, moduleVersion(bi.Main))
	for _, d := range bi.Deps {
		if d.Path == crystalballModule {
			fmt.Fprintf(stdout, "crystalball %s\n", moduleVersion(*d))
		}
	}
	var rev, modified string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		if modified == "true" {
			rev += " (modified)"
		}
		fmt.Fprintf(stdout, "revision %s\n", rev)
	}
	fmt.Fprintf(stdout, "go %s\n", bi.GoVersion)
	return nil
}

// crystalballModule is this module's path, as a user's program lists it
// among its dependencies.
const crystalballModule = "github.com/seed6eee2ec7/crystalball"

// moduleVersion is m's version, "(devel)" when built from a checkout.
func moduleVersion(m debug.Module) string {
	if m.Replace != nil && m.Replace.Version != "" {
		return m.Replace.Version
	}
	if m.Version == "" {
		return "(devel)"
	}
	return m.Version
}
