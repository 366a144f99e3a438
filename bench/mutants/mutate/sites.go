package mutate

import (
	"bytes"
	"go/ast"
	"go/printer"
	"go/token"
	"strconv"
	"strings"
)

// The mutation operators (Ops lists them in corpus order).
const (
	// OpGuardTrue and OpGuardFalse drop a guard: if c → if true / false.
	OpGuardTrue  = "guard-true"
	OpGuardFalse = "guard-false"
	// OpCompare negates or loosens a comparison: < ↔ <=, > ↔ >=, == ↔ !=.
	OpCompare = "compare"
	// OpOffByOne takes one off an integer term (x+k → x+k-1, x-k →
	// x-k+1) or drops an increment or decrement (a term, a ballot).
	OpOffByOne = "off-by-one"
	// OpDropSend drops a call that emits a message.
	OpDropSend = "drop-send"
	// OpDropTimer drops a call that arms a timer.
	OpDropTimer = "drop-timer"
	// OpDropDurable drops a field Recover carries over a restart.
	OpDropDurable = "drop-durable"
	// OpSwap swaps two adjacent simple statements of a handler.
	OpSwap = "swap"
	// OpForgetClear drops a statement that clears a field (an assignment
	// of a zero value, a delete or a clear).
	OpForgetClear = "forget-clear"
)

// Ops are the mutation operators, in corpus order.
var Ops = []string{OpGuardTrue, OpGuardFalse, OpCompare, OpOffByOne, OpDropSend, OpDropTimer, OpDropDurable, OpSwap, OpForgetClear}

// site is one place an operator applies, in one parse of a package.
type site struct {
	op, fn, file, desc string
	pos                token.Pos
	// stage orders the rewrites of a file: expressions first (0), then
	// statements wrapped (1), then swaps (2), so that each finds the
	// nodes the others left.
	stage int
	apply func(r *renderer, id int)
}

// funcSites returns fd's sites in a fixed order: expression sites in
// ast.Inspect order, then statement sites list by list.
func funcSites(fset *token.FileSet, file string, fd *ast.FuncDecl) []site {
	var out []site
	add := func(op string, n ast.Node, stage int, desc string, apply func(*renderer, int)) {
		out = append(out, site{op: op, fn: fd.Name.Name, file: file, desc: desc, pos: n.Pos(), stage: stage, apply: apply})
	}
	root := fd.Body
	ast.Inspect(root, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false // closures run later, elsewhere: not this handler's code
		case *ast.IfStmt:
			c := show(fset, x.Cond)
			add(OpGuardTrue, x, 0, "if "+c+" → if true", func(r *renderer, id int) { r.guard(x, true, id) })
			add(OpGuardFalse, x, 0, "if "+c+" → if false", func(r *renderer, id int) { r.guard(x, false, id) })
		case *ast.BinaryExpr:
			if op, ok := compareMutation[x.Op]; ok {
				desc := show(fset, x) + " → " + x.Op.String() + " becomes " + op.String()
				add(OpCompare, x, 0, desc, func(r *renderer, id int) { r.compare(root, x, op, id) })
			} else if k, ok := offByOneTerm(x); ok {
				desc := show(fset, x) + " → term " + strconv.Itoa(k) + " becomes " + strconv.Itoa(k-1)
				add(OpOffByOne, x, 0, desc, func(r *renderer, id int) { r.offByOne(root, x, k, id) })
			}
		}
		return true
	})
	ast.Inspect(root, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.BlockStmt:
			out = append(out, listSites(fset, file, fd, &x.List)...)
		case *ast.CaseClause:
			out = append(out, listSites(fset, file, fd, &x.Body)...)
		case *ast.CommClause:
			out = append(out, listSites(fset, file, fd, &x.Body)...)
		}
		return true
	})
	return out
}

// compareMutation maps a comparison to its mutant.
var compareMutation = map[token.Token]token.Token{
	token.LSS: token.LEQ, token.LEQ: token.LSS, token.GTR: token.GEQ, token.GEQ: token.GTR,
	token.EQL: token.NEQ, token.NEQ: token.EQL,
}

// offByOneTerm reports whether b is x ± k with k a positive integer
// literal and x free of calls (schema.Pick evaluates both forms).
func offByOneTerm(b *ast.BinaryExpr) (int, bool) {
	if b.Op != token.ADD && b.Op != token.SUB {
		return 0, false
	}
	lit, ok := b.Y.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, false
	}
	k, err := strconv.Atoi(lit.Value)
	if err != nil || k < 1 {
		return 0, false
	}
	if _, isLit := b.X.(*ast.BasicLit); isLit || hasCall(b.X) {
		return 0, false
	}
	return k, true
}

// hasCall reports whether e contains a call.
func hasCall(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.CallExpr); ok {
			found = true
		}
		return !found
	})
	return found
}

// show renders n on one line, shortened for a description.
func show(fset *token.FileSet, n ast.Node) string {
	var b bytes.Buffer
	if err := printer.Fprint(&b, fset, n); err != nil {
		return "?"
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if len(s) > 70 {
		s = s[:67] + "..."
	}
	return s
}
