package mutate

import (
	"bytes"
	"errors"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/printer"
	"go/token"
	"hash/fnv"
	"math/rand/v2"

	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// ErrTarget is returned (wrapped) when a target's package cannot be read.
var ErrTarget = errors.New("mutate: bad target")

// Mutant is one mutant of the corpus: its original's handler code with
// one site rewritten.
type Mutant struct {
	// ID selects the mutant (schema.Active); IDs start at 1.
	ID      int    `json:"id"`
	Service string `json:"service"`
	Op      string `json:"op"`
	// File is the rewritten file, relative to the module root; Func the
	// function and Line the line of the site in the original.
	File string `json:"file"`
	Func string `json:"func"`
	Line int    `json:"line"`
	// Desc says what changed, in the original's words.
	Desc string `json:"desc"`
	// Site is the site's index among its target's sites (its identity
	// when the package is parsed again).
	Site int `json:"site"`
}

// parsedFile is one non-test file of a target's package.
type parsedFile struct {
	path string // relative to the module root
	ast  *ast.File
}

// parsed is a target's package, parsed.
type parsed struct {
	fset  *token.FileSet
	files []*parsedFile
	sites []site
}

// parseTarget parses t's package under root and lists its sites.
func parseTarget(root string, t Target) (*parsed, error) {
	names, err := filepath.Glob(filepath.Join(root, t.Dir, "*.go"))
	if err != nil || len(names) == 0 {
		return nil, fmt.Errorf("%w: %s: no Go files in %s", ErrTarget, t.Service, t.Dir)
	}
	sort.Strings(names)
	p := &parsed{fset: token.NewFileSet()}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(p.fset, name, nil, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrTarget, t.Service, err)
		}
		if hasBuildConstraint(f) {
			continue
		}
		rel, err := filepath.Rel(root, name)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrTarget, t.Service, err)
		}
		p.files = append(p.files, &parsedFile{path: filepath.ToSlash(rel), ast: f})
	}
	handlers := handlerFuncs(p.files)
	for _, f := range p.files {
		for _, d := range f.ast.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && handlers[fd] {
				p.sites = append(p.sites, funcSites(p.fset, f.path, fd)...)
			}
		}
	}
	return p, nil
}

// hasBuildConstraint reports whether f has a //go:build line (the corpus
// leaves such files alone: an overlay of one would hold in every build).
func hasBuildConstraint(f *ast.File) bool {
	for _, g := range f.Comments {
		if g.Pos() > f.Package {
			break
		}
		for _, c := range g.List {
			if strings.HasPrefix(c.Text, "//go:build") {
				return true
			}
		}
	}
	return false
}

// Select lists every target's sites and picks, per target and operator,
// up to perOp of them in an order shuffled by seed (the same seed, code
// and targets give the same corpus). IDs are numbered from 1 in target
// order, then operator order (Ops), then the shuffled order.
func Select(root string, targets []Target, seed uint64, perOp int) ([]Mutant, error) {
	if perOp <= 0 {
		return nil, fmt.Errorf("mutate: mutants per operator must be positive, got %d", perOp)
	}
	var out []Mutant
	for _, t := range targets {
		p, err := parseTarget(root, t)
		if err != nil {
			return nil, err
		}
		for _, op := range Ops {
			var idx []int
			for i, s := range p.sites {
				if s.op == op {
					idx = append(idx, i)
				}
			}
			h := fnv.New64a()
			h.Write([]byte(t.Service + "/" + op))
			rand.New(rand.NewPCG(seed, h.Sum64())).Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
			for _, i := range idx[:min(perOp, len(idx))] {
				s := p.sites[i]
				out = append(out, Mutant{ID: len(out) + 1, Service: t.Service, Op: op, File: s.file, Func: s.fn,
					Line: p.fset.Position(s.pos).Line, Desc: s.desc, Site: i})
			}
		}
	}
	return out, nil
}

// Schema renders the mutants' files as a schema: for every file with a
// mutant, its path relative to root and its generated source. Mutants
// whose Service is not among targets are an error.
func Schema(root string, targets []Target, mutants []Mutant) (map[string][]byte, error) {
	bySvc := map[string][]Mutant{}
	for _, m := range mutants {
		bySvc[m.Service] = append(bySvc[m.Service], m)
	}
	out := map[string][]byte{}
	for _, t := range targets {
		ms := bySvc[t.Service]
		delete(bySvc, t.Service)
		if len(ms) == 0 {
			continue
		}
		files, err := render(root, t, ms, false)
		if err != nil {
			return nil, err
		}
		for k, v := range files {
			out[k] = v
		}
	}
	for svc := range bySvc {
		return nil, fmt.Errorf("%w: mutants of %q, which is no target", ErrTarget, svc)
	}
	return out, nil
}

// Direct renders mutant m alone as plain code: its file's path and source.
func Direct(root string, t Target, m Mutant) (string, []byte, error) {
	files, err := render(root, t, []Mutant{m}, true)
	if err != nil {
		return "", nil, err
	}
	return m.File, files[m.File], nil
}

// render parses t again and applies ms's sites, schema or direct.
func render(root string, t Target, ms []Mutant, direct bool) (map[string][]byte, error) {
	p, err := parseTarget(root, t)
	if err != nil {
		return nil, err
	}
	type job struct {
		s  site
		id int
	}
	var jobs []job
	for _, m := range ms {
		if m.Site < 0 || m.Site >= len(p.sites) || p.sites[m.Site].op != m.Op || p.sites[m.Site].file != m.File {
			return nil, fmt.Errorf("%w: %s: mutant %d names site %d, which the code no longer has (regenerate the corpus)", ErrTarget, t.Service, m.ID, m.Site)
		}
		jobs = append(jobs, job{p.sites[m.Site], m.ID})
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return a.s.stage - b.s.stage })
	r := &renderer{direct: direct, cur: map[ast.Stmt]ast.Stmt{}}
	touched := map[string]bool{}
	for _, j := range jobs {
		j.s.apply(r, j.id)
		touched[j.s.file] = true
	}
	out := map[string][]byte{}
	for _, f := range p.files {
		if !touched[f.path] {
			continue
		}
		if !direct {
			addImport(f.ast)
		}
		f.ast.Comments = nil
		var b bytes.Buffer
		b.WriteString("// Code generated by bench/mutants; DO NOT EDIT.\n\n")
		if err := (&printer.Config{Mode: printer.UseSpaces | printer.TabIndent, Tabwidth: 8}).Fprint(&b, p.fset, f.ast); err != nil {
			return nil, fmt.Errorf("mutate: %s: printing %s: %w", t.Service, f.path, err)
		}
		src := b.Bytes()
		if formatted, err := format.Source(src); err == nil {
			src = formatted
		}
		out[f.path] = src
	}
	return out, nil
}
