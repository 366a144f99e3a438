package mutate

import (
	"go/ast"
	"go/token"
	"reflect"
	"strconv"
)

// schemaImport is the import path of the switch, and schemaName the name
// generated files import it as (no service declares it).
const (
	schemaImport = "github.com/seed6eee2ec7/crystalball/bench/mutants/schema"
	schemaName   = "mutschema"
)

// renderer rewrites sites of one parse: as a schema (every site behind
// its switch) or directly (one site, its switch the constant true).
type renderer struct {
	direct bool
	// cur maps a statement of the original to the statement that stands
	// for it in its list now (a wrapper, or a swap's if).
	cur map[ast.Stmt]ast.Stmt
}

// on is the condition under which mutant id runs.
func (r *renderer) on(id int) ast.Expr {
	if r.direct {
		return ast.NewIdent("true")
	}
	return &ast.CallExpr{Fun: sel(schemaName, "On"), Args: []ast.Expr{intLit(id)}}
}

// pick is orig, or mut when mutant id runs.
func (r *renderer) pick(id int, orig, mut ast.Expr) ast.Expr {
	if r.direct {
		return mut
	}
	return &ast.CallExpr{Fun: sel(schemaName, "Pick"), Args: []ast.Expr{intLit(id), orig, mut}}
}

// guard rewrites if c as if on||c (always taken) or if !on&&c (never).
func (r *renderer) guard(x *ast.IfStmt, taken bool, id int) {
	if taken {
		x.Cond = &ast.BinaryExpr{X: r.on(id), Op: token.LOR, Y: paren(x.Cond)}
		return
	}
	x.Cond = &ast.BinaryExpr{X: not(r.on(id)), Op: token.LAND, Y: paren(x.Cond)}
}

// compare replaces the comparison x by (on && x') || (!on && x), x' being
// x with op: short-circuiting evaluates exactly one of them.
func (r *renderer) compare(root ast.Node, x *ast.BinaryExpr, op token.Token, id int) {
	mut := &ast.BinaryExpr{X: x.X, Op: op, Y: x.Y}
	if r.direct {
		replaceExpr(root, x, paren(mut))
		return
	}
	both := &ast.BinaryExpr{
		X:  paren(&ast.BinaryExpr{X: r.on(id), Op: token.LAND, Y: mut}),
		Op: token.LOR,
		Y:  paren(&ast.BinaryExpr{X: not(r.on(id)), Op: token.LAND, Y: x}),
	}
	replaceExpr(root, x, paren(both))
}

// offByOne replaces x ± k by x ± (k-1) when mutant id runs.
func (r *renderer) offByOne(root ast.Node, x *ast.BinaryExpr, k, id int) {
	var mut ast.Expr = paren(x.X)
	if k > 1 {
		mut = paren(&ast.BinaryExpr{X: x.X, Op: x.Op, Y: intLit(k - 1)})
	}
	replaceExpr(root, x, r.pick(id, x, mut))
}

// drop runs s only when mutant id does not.
func (r *renderer) drop(list *[]ast.Stmt, s ast.Stmt, id int) {
	c := r.current(s)
	i := indexOf(*list, c)
	if i < 0 {
		return
	}
	w := &ast.IfStmt{Cond: not(r.on(id)), Body: &ast.BlockStmt{List: []ast.Stmt{c}}}
	if r.direct {
		w = &ast.IfStmt{Cond: ast.NewIdent("false"), Body: w.Body}
	}
	(*list)[i] = w
	r.cur[s] = w
}

// swap runs a and b in the other order when mutant id runs.
func (r *renderer) swap(list *[]ast.Stmt, a, b ast.Stmt, id int) {
	ca, cb := r.current(a), r.current(b)
	i := indexOf(*list, ca)
	if i < 0 || i+1 >= len(*list) || (*list)[i+1] != cb {
		return
	}
	var w ast.Stmt = &ast.IfStmt{Cond: r.on(id),
		Body: &ast.BlockStmt{List: []ast.Stmt{cb, ca}},
		Else: &ast.BlockStmt{List: []ast.Stmt{ca, cb}}}
	if r.direct {
		w = &ast.BlockStmt{List: []ast.Stmt{cb, ca}}
	}
	*list = append((*list)[:i:i], append([]ast.Stmt{w}, (*list)[i+2:]...)...)
	r.cur[a], r.cur[b] = w, w
}

// current is what stands for the original statement s in its list.
func (r *renderer) current(s ast.Stmt) ast.Stmt {
	if c, ok := r.cur[s]; ok {
		return c
	}
	return s
}

// indexOf is the position of s in list, or -1.
func indexOf(list []ast.Stmt, s ast.Stmt) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

var exprType = reflect.TypeFor[ast.Expr]()

// replaceExpr replaces every occurrence of old under root by repl (an
// expression field or element of a node's expression list), without
// looking inside repl (which may contain old).
func replaceExpr(root ast.Node, old, repl ast.Expr) {
	ast.Inspect(root, func(n ast.Node) bool {
		if n == nil || n == ast.Node(repl) {
			return false
		}
		v := reflect.ValueOf(n)
		if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
			return true
		}
		v = v.Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch {
			case f.Type() == exprType && !f.IsNil() && f.Interface() == ast.Expr(old):
				f.Set(reflect.ValueOf(repl))
			case f.Kind() == reflect.Slice && f.Type().Elem() == exprType:
				for j := range f.Len() {
					if e := f.Index(j); !e.IsNil() && e.Interface() == ast.Expr(old) {
						e.Set(reflect.ValueOf(repl))
					}
				}
			}
		}
		return true
	})
}

func sel(pkg, name string) ast.Expr {
	return &ast.SelectorExpr{X: ast.NewIdent(pkg), Sel: ast.NewIdent(name)}
}

func intLit(i int) *ast.BasicLit { return &ast.BasicLit{Kind: token.INT, Value: strconv.Itoa(i)} }

func paren(e ast.Expr) ast.Expr { return &ast.ParenExpr{X: e} }

func not(e ast.Expr) ast.Expr { return &ast.UnaryExpr{Op: token.NOT, X: e} }

// addImport makes f import the switch as schemaName.
func addImport(f *ast.File) {
	spec := &ast.ImportSpec{Name: ast.NewIdent(schemaName), Path: &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(schemaImport)}}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.IMPORT {
			g.Specs = append(g.Specs, spec)
			if !g.Lparen.IsValid() {
				g.Lparen = g.Pos()
			}
			return
		}
	}
	f.Decls = append([]ast.Decl{&ast.GenDecl{Tok: token.IMPORT, Specs: []ast.Spec{spec}}}, f.Decls...)
}
