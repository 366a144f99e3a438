package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := mainErr(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// errUsage is returned (wrapped) for bad command-line usage.
var errUsage = errors.New("mutants: usage")

// mainErr runs one subcommand.
func mainErr(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: mutants gen|run|merge|show [flags] (see go doc ./bench/mutants)", errUsage)
	}
	switch args[0] {
	case "gen":
		return genCmd(args[1:], stdout, stderr)
	case "run":
		return runCmd(ctx, args[1:], stdout, stderr)
	case "show":
		return showCmd(args[1:], stdout, stderr)
	case "merge":
		return mergeCmd(args[1:], stdout, stderr)
	}
	return fmt.Errorf("%w: unknown subcommand %q (gen, run, merge or show)", errUsage, args[0])
}

// newFlags is a flag set that reports errors rather than exiting.
func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("mutants "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// parseFlags parses args, wrapping errors as usage errors and refusing
// positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return nil
}

// genCmd selects the corpus, builds the runner with it and writes the
// manifest.
func genCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", stderr)
	out := fs.String("out", "bin/mutants", "directory for the schema, the overlay, the runner and the manifest")
	seed := fs.Uint64("seed", 1, "selection seed")
	perOp := fs.Int("per-op", 4, "mutants per service and operator (fewer where fewer sites exist)")
	root := fs.String("root", ".", "the module's root directory")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *perOp <= 0 {
		return fmt.Errorf("%w: --per-op must be positive, got %d", errUsage, *perOp)
	}
	ms, err := selectCorpus(*root, *seed, *perOp)
	if err != nil {
		return err
	}
	kept, gone, err := buildCorpus(*root, *out, *seed, ms)
	if err != nil {
		return err
	}
	m := manifest{Format: manifestFormat, Seed: *seed, PerOp: *perOp, Digest: digestOf(*seed, kept), Mutants: kept, Discarded: gone}
	if m.Discarded == nil {
		m.Discarded = []discarded{}
	}
	b, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		return err
	}
	path := *out + "/manifest.json"
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("mutants: %w", err)
	}
	fmt.Fprintf(stdout, "mutants: %d selected, %d built into %s/run, %d discarded (did not compile); manifest %s\n",
		len(ms), len(kept), *out, len(gone), path)
	return nil
}
