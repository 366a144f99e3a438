package schema

// Active is the ID of the mutant the program runs; 0 runs every service
// as written. The runner sets it between runs, never during one.
var Active int

// On reports whether mutant id is the active one. Generated code guards a
// mutated statement or expression with it.
func On(id int) bool { return Active == id }

// Pick returns mut when mutant id is active, else orig. Both arguments are
// evaluated, so the generator passes it only expressions without calls.
func Pick[T any](id int, orig, mut T) T {
	if Active == id {
		return mut
	}
	return orig
}
