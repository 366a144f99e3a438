package main

import (
	"strings"
	"testing"
)

// RandTree learns no value: its line does not say "values learned []".
func TestSurvivedLineNamesValuesOnlyForAServiceThatLearns(t *testing.T) {
	tree := survivedLine("randtree", outcome{Cycles: 3, Summary: "one tree"}, false)
	if strings.Contains(tree, "values learned") || !strings.HasSuffix(tree, "states observed: one tree") {
		t.Errorf("randtree: %q", tree)
	}
	paxos := survivedLine("paxos", outcome{Cycles: 3, Values: []string{"v1"}}, true)
	if !strings.Contains(paxos, `values learned ["v1"]`) {
		t.Errorf("paxos: %q", paxos)
	}
}
