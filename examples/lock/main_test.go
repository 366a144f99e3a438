package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// runMainEnv makes the test binary run main (cli.Main) instead of the
// tests: the tests run the program as a process without building it.
const runMainEnv = "LOCK_EXAMPLE_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		os.Args = append([]string{"lock"}, os.Args[1:]...)
		main()
		os.Exit(0) // cli.Main exits; not reached
	}
	goleak.VerifyTestMain(m)
}

// lockProgram runs a lock program (bin, with args) in dir and returns its
// standard output; it fails the test unless the program exits with 0
// before the deadline of ctx.
func lockProgram(t *testing.T, ctx context.Context, env []string, dir, bin string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lock %s: %v\nstderr: %s\nstdout: %s", strings.Join(args, " "), err, stderr.Bytes(), out)
	}
	return out
}

// exercise runs emulate --json, check --json and trace show on the check's
// report with the lock program bin, and checks what they say.
func exercise(t *testing.T, env []string, dir, bin string) {
	t.Helper()
	// Deadlines, not sleeps: each command takes well under a second.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var em struct {
		Format  string `json:"format"`
		Service string `json:"service"`
		Result  struct {
			Liveness []struct {
				Name  string `json:"name"`
				Holds bool   `json:"holds"`
			} `json:"liveness"`
		} `json:"result"`
	}
	out := lockProgram(t, ctx, env, dir, bin, "emulate", "--nodes", "4", "--duration", "2m", "--seed", "3", "--json")
	if err := json.Unmarshal(out, &em); err != nil || em.Service != "lock" || em.Format != "crystalball-emulate/1" ||
		len(em.Result.Liveness) != 1 || !em.Result.Liveness[0].Holds {
		t.Errorf("emulate --json: %v\n%s", err, out)
	}
	out = lockProgram(t, ctx, env, dir, bin, "check", "--nodes", "3", "--resets", "1", "--budget", "0", "--json")
	var co struct {
		Format     string `json:"format"`
		Target     string `json:"target"`
		Violations []struct {
			Property string `json:"property"`
		} `json:"violations"`
	}
	if err := json.Unmarshal(out, &co); err != nil || co.Format != "crystalball-check/1" || co.Target != "lock" ||
		len(co.Violations) == 0 || co.Violations[0].Property != "MutualExclusion" {
		t.Fatalf("check --json: %v\n%s", err, out)
	}
	report := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(report, out, 0o644); err != nil {
		t.Fatal(err)
	}
	out = lockProgram(t, ctx, env, dir, bin, "trace", "show", report)
	if !strings.Contains(string(out), "violation of MutualExclusion (safety) at depth 7") || !strings.Contains(string(out), "  7. n3 deliver lock.Grant from n1") {
		t.Errorf("trace show:\n%s", out)
	}
}

// TestProgramInModule runs the example's subcommands (the test binary
// runs main).
func TestProgramInModule(t *testing.T) {
	exercise(t, []string{runMainEnv + "=1"}, "", os.Args[0])
}

// TestProgramOutsideTheModule builds this example as a module of its own,
// which requires crystalball and replaces it with this checkout, in the
// module and build caches the repository uses, and runs its emulate
// --json, check --json and trace show. It skips only when there is no go
// tool.
func TestProgramOutsideTheModule(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH: cannot build a module outside this one")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example.com/lockoutside\n\ngo 1.26\n\n" +
		"require github.com/seed6eee2ec7/crystalball v0.0.0-00010101000000-000000000000\n\n" +
		"replace github.com/seed6eee2ec7/crystalball => " + root + "\n"
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": src} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := filepath.Join(dir, "lockoutside")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	started := time.Now()
	build := exec.CommandContext(ctx, goBin, append(args, ".")...)
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("go build of the outside module did not finish in 5 minutes:\n%s", out)
		}
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	t.Logf("built the outside module in %v (race: %v)", time.Since(started).Round(time.Millisecond), raceEnabled)
	exercise(t, nil, dir, bin)
}
