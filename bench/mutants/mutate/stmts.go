package mutate

import (
	"go/ast"
	"go/token"
)

// listSites returns the statement sites of one statement list of fd.
func listSites(fset *token.FileSet, file string, fd *ast.FuncDecl, list *[]ast.Stmt) []site {
	var out []site
	add := func(op string, s ast.Stmt, desc string) {
		out = append(out, site{op: op, fn: fd.Name.Name, file: file, desc: desc, pos: s.Pos(), stage: 1,
			apply: func(r *renderer, id int) { r.drop(list, s, id) }})
	}
	recover := fd.Recv != nil && fd.Name.Name == "Recover"
	for _, s := range *list {
		switch x := s.(type) {
		case *ast.ExprStmt:
			name := calleeName(x.X)
			switch {
			case name == "":
			case isSendName(name):
				add(OpDropSend, s, show(fset, s)+" → dropped")
			case isTimerName(name):
				add(OpDropTimer, s, show(fset, s)+" → dropped")
			case name == "delete" || name == "clear":
				add(OpForgetClear, s, show(fset, s)+" → dropped")
			}
		case *ast.AssignStmt:
			switch {
			case x.Tok != token.ASSIGN:
			case recover:
				add(OpDropDurable, s, show(fset, s)+" → dropped")
			case allZero(x.Rhs):
				add(OpForgetClear, s, show(fset, s)+" → dropped")
			}
		case *ast.IncDecStmt:
			add(OpOffByOne, s, show(fset, s)+" → dropped")
		}
	}
	// Swaps take disjoint pairs, so that two swaps never share a
	// statement (each is a mutant of the original order).
	for i := 0; i+1 < len(*list); i++ {
		a, b := (*list)[i], (*list)[i+1]
		if !swappable(a) || !swappable(b) || show(fset, a) == show(fset, b) {
			continue
		}
		out = append(out, site{op: OpSwap, fn: fd.Name.Name, file: file, pos: a.Pos(), stage: 2,
			desc:  show(fset, a) + "; " + show(fset, b) + " → swapped",
			apply: func(r *renderer, id int) { r.swap(list, a, b, id) }})
		i++
	}
	return out
}

// calleeName is the name of the function e calls, or "".
func calleeName(e ast.Expr) string {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return ""
	}
	switch f := call.Fun.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

// allZero reports whether every expression is a zero value: nil, false,
// 0, "", an empty composite literal or a slice cut to nothing (x[:0]).
func allZero(rhs []ast.Expr) bool {
	for _, e := range rhs {
		if !isZero(e) {
			return false
		}
	}
	return len(rhs) > 0
}

// isZero reports whether e is one of allZero's zero values.
func isZero(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name == "nil" || x.Name == "false"
	case *ast.BasicLit:
		return x.Value == "0" || x.Value == `""`
	case *ast.CompositeLit:
		return len(x.Elts) == 0
	case *ast.SliceExpr:
		lit, ok := x.High.(*ast.BasicLit)
		return x.Low == nil && ok && lit.Value == "0"
	case *ast.CallExpr:
		// node.None and the like are constants; a conversion of 0 is zero.
		return len(x.Args) == 1 && isZero(x.Args[0])
	case *ast.SelectorExpr:
		return x.Sel.Name == "None"
	}
	return false
}

// swappable reports whether s may change places with a neighbour: a
// statement that declares nothing and does not leave the block.
func swappable(s ast.Stmt) bool {
	switch x := s.(type) {
	case *ast.ExprStmt, *ast.IncDecStmt, *ast.SendStmt:
		return true
	case *ast.AssignStmt:
		return x.Tok != token.DEFINE
	}
	return false
}
