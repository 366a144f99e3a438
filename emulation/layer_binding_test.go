package emulation

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// layerBindingFiles are the files that bind the built-in layers (the
// snapshot and steering layers) to the emulator: their configuration,
// results, rounds and modes. Every other non-test file is the loop
// itself, which hosts layers through the layer.Layer port (node/layer)
// only and must not name a concrete layer package.
var layerBindingFiles = []string{
	"confirm.go", "directed_verdict.go", "modes.go", "rates.go", "snapshots.go", "steering.go",
}

// concreteLayerPackages are the layers the loop may not import.
var concreteLayerPackages = []string{
	"github.com/seed6eee2ec7/crystalball/snapshot",
	"github.com/seed6eee2ec7/crystalball/steering",
}

func TestLoopHostsLayersThroughThePortOnly(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") || slices.Contains(layerBindingFiles, name) {
			continue
		}
		for _, imp := range importsOf(t, name) {
			if slices.Contains(concreteLayerPackages, imp) {
				t.Errorf("%s imports %s: the loop hosts layers through node/layer only; move the code that needs the concrete layer into one of %v", name, imp, layerBindingFiles)
			}
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked %d loop files; the glob must have missed the package", checked)
	}
	for _, name := range layerBindingFiles {
		if !slices.Contains(files, name) {
			t.Errorf("binding file %s listed but missing: update layerBindingFiles", name)
		}
	}
}

// importsOf returns the import paths of one Go file.
func importsOf(t *testing.T, name string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}
