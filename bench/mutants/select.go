package main

import (
	"github.com/seed6eee2ec7/crystalball/bench/mutants/mutate"
)

// selectCorpus selects the corpus over every target.
func selectCorpus(root string, seed uint64, perOp int) ([]mutate.Mutant, error) {
	return mutate.Select(root, mutate.DefaultTargets(), seed, perOp)
}
