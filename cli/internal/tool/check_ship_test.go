package tool

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/seed6eee2ec7/crystalball/steering"
)

// check --ship writes the filters of the violations found from the
// initial configuration (RandTree with a silent reset and a break, whose
// first violation TestPartialOrderReduction pins at depth 5), and
// emulate --shipped hands them to every node's steering layer (the
// emulator installs them: emulation's TestShippedFilters…).
func TestCheckShipsFiltersEmulateInstallsThem(t *testing.T) {
	file := filepath.Join(t.TempDir(), "shipped.json")
	code, _, stderr := runCLI("check", "--service", "randtree", "--nodes", "3", "--resets", "1", "--silent", "--breaks", "1", "--max-states", "1000", "--budget", "0", "--quiet", "--ship", file)
	if code != exitOK {
		t.Fatalf("check exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := steering.DecodeShipped(b)
	if err != nil || len(fs) == 0 {
		t.Fatalf("shipped %v, %v; want the filters of the violations found", fs, err)
	}
	flags := newFlagSet("emulate", io.Discard)
	p := emulateParams{services: testCatalog()}
	p.register(flags)
	if err := flags.Parse([]string{"--nodes", "3", "--mode", "steer", "--immediate", "--shipped", file}); err != nil {
		t.Fatal(err)
	}
	if err := p.resolve(); err != nil {
		t.Fatal(err)
	}
	got := p.emulationConfig(serviceRun{})
	same := func(a, b steering.ShippedFilter) bool {
		return a.Filter == b.Filter && a.Why.Property == b.Why.Property
	}
	if got.Steering == nil || !slices.EqualFunc(got.Steering.Shipped, fs, same) {
		t.Fatalf("emulate's steering config ships %v, want the file's %v", got.Steering, fs)
	}
}

// --ship and --shipped refuse what they cannot honour, as usage errors.
func TestShipFlagsRejectBadUse(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"format":"something else"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"check", "--model", "2pc", "--ship", filepath.Join(dir, "f")}, "--ship writes a service's filters"},
		{[]string{"check", "--strategy", "walk", "--ship", filepath.Join(dir, "f")}, "--ship needs the violations"},
		{[]string{"emulate", "--mode", "steer", "--shipped", filepath.Join(dir, "missing.json")}, "--shipped:"},
		{[]string{"emulate", "--mode", "steer", "--shipped", bad}, "format"},
	} {
		expectUsageError(t, c.args, c.want)
	}
}
