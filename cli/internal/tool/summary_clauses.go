package tool

import "fmt"

// Summary lines made of optional clauses: a clause is present only when
// the run or search has what it describes, so a line is built from the
// clauses rather than from a branch per clause.

// joinPresentClauses is the parts that are not empty, joined by sep.
func joinPresentClauses(sep string, parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += sep
		}
		out += p
	}
	return out
}

// summaryClause is fmt.Sprintf(format, args...) when cond holds, else "": a
// clause of a summary line that only some runs have.
func summaryClause(cond bool, format string, args ...any) string {
	if !cond {
		return ""
	}
	return fmt.Sprintf(format, args...)
}
