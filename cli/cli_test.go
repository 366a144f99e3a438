package cli_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/node"
)

// TestCLILinksNoPaper: package cli, what a program of one's own imports,
// depends on none of the papers' services, experiments or models, nor on
// cli/papers: a user's binary links only the runtime.
func TestCLILinksNoPaper(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped with -short: runs go list")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	goBin := "go"
	if root := os.Getenv("GOROOT"); root != "" {
		goBin = root + "/bin/go"
	}
	out, err := exec.CommandContext(ctx, goBin, "list", "-deps", "github.com/seed6eee2ec7/crystalball/cli").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	const mod = "github.com/seed6eee2ec7/crystalball/"
	var linked []string
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		linked = append(linked, strings.TrimPrefix(pkg, mod))
		for _, paper := range []string{"services/", "experiments", "consequence/twophase", "cli/papers", "examples/", "bench/"} {
			if strings.HasPrefix(strings.TrimPrefix(pkg, mod), paper) {
				t.Errorf("cli depends on %s", pkg)
			}
		}
	}
	t.Logf("cli links %d packages of the module: %v", len(linked), linked)
}

// quiet is the smallest service: it does nothing (node.NopHandlers).
type quiet struct{ node.NopHandlers }

func (q *quiet) Clone() node.Service { c := *q; return &c }

func quietSpec() node.Spec {
	return node.Spec{Name: "quiet", New: func() node.Service { return &quiet{} }}
}

// ExampleProgram: a program of its own with a command of its own beside
// the built-in ones. Program.Run is what its tests call; main calls Main.
func ExampleProgram() {
	prog := cli.Program{
		Services: []cli.Service{{Name: "quiet", Spec: quietSpec(), Workload: func(node.ID, bool) []node.Message { return nil }}},
		Commands: []cli.Command{{Name: "greet", Summary: "print a greeting", Run: func(args []string, stdout, _ io.Writer) error {
			if len(args) != 1 {
				return cli.UsageErrorf("usage: greet NAME")
			}
			_, err := fmt.Fprintf(stdout, "hello, %s\n", args[0])
			return err
		}}},
	}
	fmt.Println(prog.Run([]string{"greet", "world"}, os.Stdout, os.Stdout))
	fmt.Println(prog.Run([]string{"greet"}, os.Stdout, os.Stdout))
	// Output:
	// hello, world
	// 0
	// crystalball greet: usage: greet NAME
	// 2
}
