package crystalball_test

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The import graph the architecture allows: docs/ARCHITECTURE.md's table
// ("Packages and their dependencies") is the one description of which
// package may import which, and this test holds the code to it.

// module is this module's import path.
const module = "github.com/seed6eee2ec7/crystalball"

// arrow separates a table line's packages from what they may import.
const arrow = "──▶"

// rule is one line of the table: the packages it names (a "/*" pattern:
// every package below) and the packages they may import (patterns too).
type rule struct {
	line    int
	names   []string
	imports []string
}

// TestImportGraph: every package of the module is named by the table and
// imports, in its non-test files, only packages a line naming it allows;
// every line names a package.
func TestImportGraph(t *testing.T) {
	rules, err := readRules("docs/ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	graph, err := importGraph(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range checkGraph(rules, graph) {
		t.Error(problem)
	}
}

// TestImportGraphCatchesAnEdge: the check fails on an import outside the
// table, on a package the table does not name and on a line naming none,
// and passes a graph the table allows.
func TestImportGraphCatchesAnEdge(t *testing.T) {
	rules := []rule{
		{line: 1, names: []string{"node"}},
		{line: 2, names: []string{"services/*"}, imports: []string{"node", "services/idspace"}},
		{line: 3, names: []string{"steering", "snapshot"}, imports: []string{"node"}},
	}
	ok := map[string][]string{"node": nil, "services/chord": {"node", "services/idspace"}, "services/idspace": {"node"},
		"steering": {"node"}, "snapshot": {"node"}}
	if problems := checkGraph(rules, ok); len(problems) != 0 {
		t.Fatalf("an allowed graph: %v", problems)
	}
	for name, edit := range map[string]func(g map[string][]string){
		"edge":    func(g map[string][]string) { g["services/chord"] = append(g["services/chord"], "steering") },
		"package": func(g map[string][]string) { g["live"] = []string{"node"} },
		"line":    func(g map[string][]string) { delete(g, "steering"); delete(g, "snapshot") },
	} {
		g := map[string][]string{}
		for k, v := range ok {
			g[k] = slices.Clone(v)
		}
		edit(g)
		if problems := checkGraph(rules, g); len(problems) == 0 {
			t.Errorf("%s: no problem found", name)
		}
	}
}

// checkGraph returns what in graph (package: its imports, both relative
// to the module) the rules do not allow.
func checkGraph(rules []rule, graph map[string][]string) []string {
	var problems []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	used := make([]bool, len(rules))
	for _, p := range pkgs {
		var allowed []string
		named := false
		for i, r := range rules {
			if slices.ContainsFunc(r.names, func(n string) bool { return matches(n, p) }) {
				named, used[i] = true, true
				allowed = append(allowed, r.imports...)
			}
		}
		if !named {
			problems = append(problems, fmt.Sprintf("package %s is not in docs/ARCHITECTURE.md's table: add a line for it", p))
			continue
		}
		for _, imp := range graph[p] {
			if imp != p && !slices.ContainsFunc(allowed, func(a string) bool { return matches(a, imp) }) {
				problems = append(problems, fmt.Sprintf("%s imports %s, which no line of docs/ARCHITECTURE.md's table naming %s allows", p, imp, p))
			}
		}
	}
	for i, r := range rules {
		if !used[i] {
			problems = append(problems, fmt.Sprintf("docs/ARCHITECTURE.md:%d names no package of the module (%s)", r.line, strings.Join(r.names, ", ")))
		}
	}
	return problems
}

// matches says whether pattern (a package, or "dir/*": every package
// below dir) covers pkg.
func matches(pattern, pkg string) bool {
	if dir, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(pkg, dir+"/")
	}
	return pattern == pkg
}

// readRules reads the table: the fenced block after the heading
// "## Packages and their dependencies".
func readRules(file string) ([]rule, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rules []rule
	sc := bufio.NewScanner(f)
	n, state := 0, "before"
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case state == "before" && line == "## Packages and their dependencies":
			state = "heading"
		case state == "heading" && line == "```":
			state = "table"
		case state == "table" && line == "```":
			return rules, nil
		case state == "table":
			r, err := parseRule(n, line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", file, n, err)
			}
			rules = append(rules, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: no table after \"## Packages and their dependencies\"", file)
}

// parseRule parses "a, b ──▶ c, d   description" (the arrow and the
// imports are optional; the description follows two spaces or more).
func parseRule(n int, line string) (rule, error) {
	r := rule{line: n}
	names, rest, hasArrow := strings.Cut(line, arrow)
	if !hasArrow {
		names, _, _ = strings.Cut(line, "  ")
	}
	r.names = splitList(names)
	if hasArrow {
		imports, _, _ := strings.Cut(strings.TrimSpace(rest), "  ")
		r.imports = splitList(imports)
		if len(r.imports) == 0 {
			return r, fmt.Errorf("nothing after %s", arrow)
		}
	}
	for _, p := range append(slices.Clone(r.names), r.imports...) {
		if p == "" || strings.ContainsAny(p, " ()…") {
			return r, fmt.Errorf("%q is not a package path or dir/* pattern", p)
		}
	}
	if len(r.names) == 0 {
		return r, fmt.Errorf("no package named")
	}
	return r, nil
}

// splitList splits "a, b" into its trimmed items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// importGraph reads the module's packages under root and the packages of
// the module each one's non-test Go files import, both relative to the
// module. A directory with its own go.mod, testdata, bin and hidden
// directories are not the module's; files constrained by "ignore" are
// not built.
func importGraph(root string) (map[string][]string, error) {
	graph := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(root, p, d.Name())
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if ignored(f.Comments) {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(p))
		if _, ok := graph[pkg]; !ok {
			graph[pkg] = nil
		}
		for _, imp := range f.Imports {
			q, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(q, module+"/"); ok && !slices.Contains(graph[pkg], rel) {
				graph[pkg] = append(graph[pkg], rel)
			}
		}
		return nil
	})
	return graph, err
}

// skipDir says whether the walk leaves out directory p (named name).
func skipDir(root, p, name string) error {
	if p == root {
		return nil
	}
	if name == "testdata" || name == "bin" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return filepath.SkipDir
	}
	if _, err := os.Stat(path.Join(filepath.ToSlash(p), "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}

// ignored says whether a file is left out of every build
// ("//go:build ignore", as generators are).
func ignored(groups []*ast.CommentGroup) bool {
	for _, g := range groups {
		for _, c := range g.List {
			if strings.TrimSpace(c.Text) == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}
