package consequence

// SetMinParallel makes the checker expand frontiers of at least n states in
// parallel (default parallelMinStates), so tests run the parallel phases on
// small models.
func SetMinParallel[S, A any](c *Checker[S, A], n int) *Checker[S, A] {
	c.opts.minParallel = n
	return c
}
