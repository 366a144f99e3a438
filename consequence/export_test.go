package consequence

// SetMinParallel makes the checker expand frontiers of at least n states in
// parallel (default parallelMinStates), so tests run the parallel phases on
// small models.
func SetMinParallel[S, A any](c *Checker[S, A], n int) *Checker[S, A] {
	c.opts.minParallel = n
	return c
}

// SetParallelRound makes the checker expand parallel levels in rounds of n
// frontier states (default parallelRound), so tests cover levels that span
// many rounds.
func SetParallelRound[S, A any](c *Checker[S, A], n int) *Checker[S, A] {
	c.opts.parallelRound = n
	return c
}

// SetPacking makes a search of a PackingModel pack its levels (true) or
// keep them as states (false) whatever its state budget, so tests run
// small searches both ways.
func SetPacking[S, A any](c *Checker[S, A], pack bool) *Checker[S, A] {
	c.opts.packing = -1
	if pack {
		c.opts.packing = 1
	}
	return c
}

// SetSleepByPosition makes a KeyedCommuter's sleep sets name positions in
// the Actions list, as a plain Commuter's do, so tests compare the two.
func SetSleepByPosition[S, A any](c *Checker[S, A]) *Checker[S, A] {
	c.opts.sleepByPosition = 1
	return c
}

// SetPORProbe makes the checker weigh its sleep sets after n transitions
// (default porProbe), so tests make small searches decide.
func SetPORProbe[S, A any](c *Checker[S, A], n int) *Checker[S, A] {
	c.opts.porProbe = n
	return c
}

// SetOnDirect makes the checker call f with the number of frontier states
// each sequential stretch of a level expanded, so tests see how much of a
// parallel search ran on one core.
func SetOnDirect[S, A any](c *Checker[S, A], f func(n int)) *Checker[S, A] {
	c.opts.onDirect = f
	return c
}
