package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/cli/papers"
	"github.com/seed6eee2ec7/crystalball/examples/newcomer"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
)

// Registry is the services a measurement can run: those linked into this
// program, run in process through cli.Program.Run (the code path of
// `crystalball emulate`), and the main packages of the repository that
// serve a service of their own (examples/lock, examples/elect's command),
// which no program can import: each is built once with go build and run
// as a process per emulation, with the same command line.
type Registry struct {
	program cli.Program
	// external maps a service to the package of the program serving it.
	external map[string]string
	// dir holds the programs built (made on first use); bins maps a
	// service to its built program.
	dir  string
	bins map[string]string
}

// DefaultRegistry serves the papers' services (cli/papers), the bug zoo's
// (zoo.Services and zoo.PropertyServices), the newcomer's services
// (permits, commit, mutex) in process, and lock and elect as programs.
func DefaultRegistry() *Registry {
	services := slices.Concat(newcomer.Services(), zoo.Services(), zoo.PropertyServices(), papers.Services())
	return &Registry{program: cli.Program{Services: services}, external: map[string]string{
		"lock":  "./examples/lock",
		"elect": "./examples/elect/cmd/elect",
	}, bins: map[string]string{}}
}

// Names lists the services, in-process ones first, each list sorted.
func (r *Registry) Names() (inProcess, programs []string) {
	for _, s := range r.program.Services {
		name := s.Name
		if name == "" {
			name = s.Spec.Name
		}
		inProcess = append(inProcess, name)
	}
	for name := range r.external {
		programs = append(programs, name)
	}
	slices.Sort(inProcess)
	slices.Sort(programs)
	return inProcess, programs
}

// check reports a service the registry does not serve.
func (r *Registry) check(service string) error {
	in, progs := r.Names()
	if slices.Contains(in, service) || slices.Contains(progs, service) {
		return nil
	}
	return fmt.Errorf("%w: --services: unknown service %q (in process: %s; programs: %s)", errUsage, service, strings.Join(in, ", "), strings.Join(progs, ", "))
}

// prepare builds the program of service, if it is served by one and not
// built yet.
func (r *Registry) prepare(ctx context.Context, service string) error {
	if pkg, external := r.external[service]; external {
		_, err := r.build(ctx, service, pkg)
		return err
	}
	return nil
}

// run runs one command line of service and returns the CPU time it took:
// in process, this process's (the runs go one at a time), else the child
// process's.
func (r *Registry) run(ctx context.Context, service string, args []string, stdout, stderr io.Writer) (time.Duration, error) {
	pkg, external := r.external[service]
	if !external {
		before := processCPU()
		if status := r.program.Run(args, stdout, stderr); status != 0 {
			return 0, fmt.Errorf("exit status %d", status)
		}
		return processCPU() - before, nil
	}
	bin, err := r.build(ctx, service, pkg)
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return 0, err
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// build builds the program of service (package pkg, relative to the
// module's root, the working directory) once.
func (r *Registry) build(ctx context.Context, service, pkg string) (string, error) {
	if bin, ok := r.bins[service]; ok {
		return bin, nil
	}
	if r.dir == "" {
		dir, err := os.MkdirTemp("", "steerlive-")
		if err != nil {
			return "", fmt.Errorf("steerlive: %w", err)
		}
		r.dir = dir
	}
	bin := filepath.Join(r.dir, service)
	out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("steerlive: building %s (%s; run from the module's root): %w: %s", pkg, service, err, out)
	}
	r.bins[service] = bin
	return bin, nil
}

// Close removes the programs built.
func (r *Registry) Close() error {
	if r.dir == "" {
		return nil
	}
	return os.RemoveAll(r.dir)
}
