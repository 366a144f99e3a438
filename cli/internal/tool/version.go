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
	printCrystalballDep(stdout, bi.Deps)
	if rev := vcsRevision(bi.Settings); rev != "" {
		fmt.Fprintf(stdout, "revision %s\n", rev)
	}
	fmt.Fprintf(stdout, "go %s\n", bi.GoVersion)
	return nil
}

// printCrystalballDep prints crystalball's version when the binary's
// dependencies list it (the main module is a user's program).
func printCrystalballDep(stdout io.Writer, deps []*debug.Module) {
	for _, d := range deps {
		if d.Path == crystalballModule {
			fmt.Fprintf(stdout, "crystalball %s\n", moduleVersion(*d))
		}
	}
}

// vcsRevision is the VCS revision the build settings name, marked
// " (modified)" for a modified tree; "" when they name none.
func vcsRevision(settings []debug.BuildSetting) string {
	vcs := map[string]string{}
	for _, s := range settings {
		vcs[s.Key] = s.Value // the last setting of a key counts
	}
	rev := vcs["vcs.revision"]
	if rev != "" && vcs["vcs.modified"] == "true" {
		rev += " (modified)"
	}
	return rev
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
