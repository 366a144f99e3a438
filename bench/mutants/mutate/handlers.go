package mutate

import (
	"go/ast"
	"path/filepath"
	"strings"
)

// handlerRoots are the methods a node runs on an event.
var handlerRoots = map[string]bool{
	"Init": true, "HandleMessage": true, "HandleTimer": true, "HandleApp": true,
	"HandleTransportError": true, "HandleSendRefused": true, "Recover": true,
}

// notHandlerFiles hold what a mutant must keep: its properties, state
// encoding, summaries, symmetry, options and messages.
var notHandlerFiles = map[string]bool{
	"properties.go": true, "encoding.go": true, "summary.go": true, "symmetry.go": true,
	"spec.go": true, "options.go": true, "messages.go": true, "doc.go": true,
}

// notHandlerMethods are methods that describe a state rather than act on
// an event (cloning, printing, the snapshot neighbourhood, workloads).
var notHandlerMethods = map[string]bool{
	"String": true, "Clone": true, "Options": true, "Neighbors": true,
	"RestartCalls": true, "AppCalls": true,
}

// handlerFuncs returns the package's handler code (see the package
// documentation): the functions reachable from handlerRoots by name,
// less those reachable from a property check or from a file in
// notHandlerFiles. Reachability is by identifier — a conservative
// over-approximation that keeps shared helpers out of the corpus.
func handlerFuncs(files []*parsedFile) map[*ast.FuncDecl]bool {
	byName := map[string][]*ast.FuncDecl{}
	var roots, kept []*ast.FuncDecl
	for _, f := range files {
		base := filepath.Base(f.path)
		for _, d := range f.ast.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			byName[fd.Name.Name] = append(byName[fd.Name.Name], fd)
			switch {
			case notHandlerFiles[base] || notHandlerMethods[fd.Name.Name]:
				kept = append(kept, fd)
			case fd.Recv != nil && handlerRoots[fd.Name.Name]:
				roots = append(roots, fd)
			}
		}
	}
	// Property checks may name functions declared in a later file.
	for _, f := range files {
		kept = append(kept, propertyChecks(f.ast, byName)...)
	}
	excluded := reach(kept, byName)
	out := map[*ast.FuncDecl]bool{}
	for fd := range reach(roots, byName) {
		if !excluded[fd] {
			out[fd] = true
		}
	}
	return out
}

// reach returns the functions reachable from roots through identifiers
// that name a function of the package.
func reach(roots []*ast.FuncDecl, byName map[string][]*ast.FuncDecl) map[*ast.FuncDecl]bool {
	seen := map[*ast.FuncDecl]bool{}
	stack := append([]*ast.FuncDecl(nil), roots...)
	for len(stack) > 0 {
		fd := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[fd] {
			continue
		}
		seen[fd] = true
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				stack = append(stack, byName[id.Name]...)
			}
			return true
		})
	}
	return seen
}

// propertyChecks returns the functions a node.Property literal's Check
// names (directly or inside a function literal).
func propertyChecks(f *ast.File, byName map[string][]*ast.FuncDecl) []*ast.FuncDecl {
	var out []*ast.FuncDecl
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "Check" {
			return true
		}
		ast.Inspect(kv.Value, func(m ast.Node) bool {
			if id, ok := m.(*ast.Ident); ok {
				out = append(out, byName[id.Name]...)
			}
			return true
		})
		return true
	})
	return out
}

// isSendName reports whether a called function's name says it emits a
// message: the Env's sends, or a helper named for sending.
func isSendName(name string) bool {
	switch name {
	case "Send", "SendDatagram", "TrySend":
		return true
	}
	l := strings.ToLower(name)
	return strings.HasPrefix(l, "send") || strings.HasPrefix(l, "broadcast") || strings.HasPrefix(l, "reply")
}

// isTimerName reports whether a called function's name says it arms a
// timer: the Env's SetTimer, or a helper named for arming or scheduling.
func isTimerName(name string) bool {
	if name == "SetTimer" {
		return true
	}
	l := strings.ToLower(name)
	return strings.HasPrefix(l, "arm") || strings.HasPrefix(l, "schedule") || strings.HasPrefix(l, "rearm")
}
