package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
)

// showCmd prints a mutant as plain code: its file with only that site
// rewritten (what a build of that mutant alone compiles), or writes it.
func showCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("show", stderr)
	path := fs.String("manifest", "bin/mutants/manifest.json", "the manifest gen wrote")
	id := fs.Int("id", 0, "the mutant's ID")
	root := fs.String("root", ".", "the module's root directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	man, err := openManifest(*path)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(man.Mutants, func(m mutate.Mutant) bool { return m.ID == *id })
	if i < 0 {
		return fmt.Errorf("%w: no mutant %d in %s", errUsage, *id, *path)
	}
	m := man.Mutants[i]
	t := slices.IndexFunc(mutate.DefaultTargets(), func(t mutate.Target) bool { return t.Service == m.Service })
	if t < 0 {
		return fmt.Errorf("mutants: mutant %d: unknown service %q", m.ID, m.Service)
	}
	file, src, err := mutate.Direct(*root, mutate.DefaultTargets()[t], m)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "// mutant %d of %s (%s) at %s:%d in %s: %s\n", m.ID, m.Service, m.Op, m.File, m.Line, m.Func, m.Desc)
	fmt.Fprintf(stdout, "// %s as that mutant alone (go build -overlay replacing it builds the mutant)\n", file)
	_, err = stdout.Write(src)
	return err
}
