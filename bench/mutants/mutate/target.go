package mutate

// Target is a service package whose handler code the corpus mutates.
type Target struct {
	// Service names the service in the corpus (its deployment in
	// bench/mutants): "paxos", "zoo-retry", …
	Service string
	// Dir is the package directory, relative to the module root.
	Dir string
}

// DefaultTargets are the services the project ships and the bug zoo's
// cases, in corpus order. examples/lock is not among them: it is a main
// package, which the runner cannot import.
func DefaultTargets() []Target {
	return []Target{
		{"randtree", "services/randtree"},
		{"chord", "services/chord"},
		{"paxos", "services/paxos"},
		{"macetransport", "services/macetransport"},
		{"pastry", "services/pastry"},
		{"bullet", "services/bullet"},
		{"zoo-cache", "examples/zoo/cache"},
		{"zoo-lease", "examples/zoo/lease"},
		{"zoo-lockd", "examples/zoo/lockd"},
		{"zoo-logship", "examples/zoo/logship"},
		{"zoo-meter", "examples/zoo/meter"},
		{"zoo-retry", "examples/zoo/retry"},
	}
}
