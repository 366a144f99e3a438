package tool

// testProgram is the program most of this package's tests run: the
// papers' (package cli/papers: their services, the experiment command and
// the 2pc model). papers imports this package, so this package's own test
// files cannot import it; papers_link_test.go, an external test file,
// sets it before any test runs.
var testProgram Program

// SetTestProgram sets testProgram. It exists for papers_link_test.go only.
func SetTestProgram(p Program) { testProgram = p }

// testCatalog is testProgram's catalog.
func testCatalog() *catalog {
	c, err := newCatalog(testProgram)
	if err != nil {
		panic(err) // the papers' program is valid; papers_link_test.go set it
	}
	return c
}
