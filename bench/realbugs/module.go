package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrNotConfirmed reports a patch the library's own regression test does
// not confirm: the test passes with the patch applied, or fails without
// it. Such a bug is not scored.
var ErrNotConfirmed = errors.New("realbugs: the regression test does not confirm the patch")

// workspace is where the runs of one scoreboard build and keep their
// files: the repository the example is built from and a scratch
// directory of module copies, modfiles and binaries.
type workspace struct {
	repo, dir string
	// moduleDir is the library's module in the module cache (read-only).
	moduleDir string
}

// newWorkspace locates the library's module (downloading it into the
// module cache if it is missing) for the repository at repo.
func newWorkspace(ctx context.Context, repo, dir string) (*workspace, error) {
	out, err := goCmd(ctx, repo, "mod", "download", "-json", Module)
	if err != nil {
		return nil, err
	}
	var m struct{ Dir, Version string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return nil, fmt.Errorf("realbugs: locating %s: go mod download printed %q", Module, out)
	}
	return &workspace{repo: repo, dir: dir, moduleDir: m.Dir}, nil
}

// copyModule copies the library's module to name under the scratch
// directory (writable) and, if patch is not nil, applies it with
// patch(1).
func (w *workspace) copyModule(ctx context.Context, name string, patch []byte) (string, error) {
	dst := filepath.Join(w.dir, "mod", name)
	if err := os.RemoveAll(dst); err != nil {
		return "", fmt.Errorf("realbugs: %w", err)
	}
	if err := os.CopyFS(dst, os.DirFS(w.moduleDir)); err != nil {
		return "", fmt.Errorf("realbugs: copying %s: %w", w.moduleDir, err)
	}
	if patch == nil {
		return dst, nil
	}
	cmd := exec.CommandContext(ctx, "patch", "-p1", "--batch", "--forward", "--quiet", "-d", dst)
	cmd.Stdin = bytes.NewReader(patch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("realbugs: %s: the patch does not apply to %s: %w\n%s", name, w.moduleDir, err, out)
	}
	return dst, nil
}

// regressionTest runs the bug's regression test in the module at dir
// and reports whether it passed; an error means the test could not run
// (a build failure is a failed test: the patch is then wrong, and the
// original's run says so).
func regressionTest(ctx context.Context, dir string, b Bug) (passed bool, out string, err error) {
	pkg := "./" + strings.TrimPrefix(b.Package, ".")
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^("+b.Test+")$", pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	o, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return true, string(o), nil
	case errors.As(err, &exit):
		return false, string(o), nil
	default:
		return false, string(o), fmt.Errorf("realbugs: go test in %s: %w", dir, err)
	}
}

// confirm runs the regression test against the patched copy (it must
// fail) and the original (it must pass).
func confirm(ctx context.Context, patched, original string, b Bug) error {
	okPatched, out, err := regressionTest(ctx, patched, b)
	if err != nil {
		return err
	}
	if okPatched {
		return fmt.Errorf("%w: %s: %s passes with the bug put back", ErrNotConfirmed, b.Name, b.Test)
	}
	okOrig, outOrig, err := regressionTest(ctx, original, b)
	if err != nil {
		return err
	}
	if !okOrig {
		return fmt.Errorf("%w: %s: %s fails on the original too:\n%s\n%s", ErrNotConfirmed, b.Name, b.Test, outOrig, out)
	}
	return nil
}

// build builds examples/etcdraft against the module at modDir (through a
// modfile with a replace directive; the repository's go.mod is not
// touched) as the binary name under the scratch directory.
func (w *workspace) build(ctx context.Context, name, modDir string) (string, error) {
	bin := filepath.Join(w.dir, "bin", name)
	modfile := filepath.Join(w.dir, "modfiles", name+".mod")
	if err := os.MkdirAll(filepath.Dir(modfile), 0o755); err != nil {
		return "", fmt.Errorf("realbugs: %w", err)
	}
	for _, f := range [][2]string{{"go.mod", modfile}, {"go.sum", strings.TrimSuffix(modfile, ".mod") + ".sum"}} {
		b, err := os.ReadFile(filepath.Join(w.repo, f[0]))
		if err != nil {
			return "", fmt.Errorf("realbugs: %w", err)
		}
		if err := os.WriteFile(f[1], b, 0o644); err != nil {
			return "", fmt.Errorf("realbugs: %w", err)
		}
	}
	if _, err := goCmd(ctx, w.repo, "mod", "edit", "-replace", Module+"="+modDir, modfile); err != nil {
		return "", err
	}
	if _, err := goCmd(ctx, w.repo, "build", "-modfile", modfile, "-o", bin, "./examples/etcdraft"); err != nil {
		return "", err
	}
	return bin, nil
}

// goCmd runs the go command in dir and returns its standard output.
func goCmd(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("realbugs: go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}
