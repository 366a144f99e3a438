package paxos

import (
	"fmt"
	"slices"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
)

// Summary is a few statistics of the Paxos nodes in a view, for progress
// lines and experiment tables.
type Summary struct {
	// Nodes is the number of Paxos nodes in the view.
	Nodes int
	// Learned is how many of them have learned a value.
	Learned int
	// Values are the distinct learned values, ascending: one in a correct
	// run, two or more after a safety violation.
	Values []string
	// MaxRound is the highest round any node in the view has promised,
	// accepted or proposed in: how many ballots the run took.
	MaxRound uint64
}

// Summarize computes the Summary of v. It allocates, so it is meant for
// reporting, not for the explorer's per-state path.
func Summarize(v node.View) Summary {
	var sum Summary
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil {
			continue
		}
		sum.Nodes++
		sum.MaxRound = max(sum.MaxRound, s.Round, s.Promised.Round, s.Accepted.Round)
		if s.Learned == "" {
			continue
		}
		sum.Learned++
		if !slices.Contains(sum.Values, s.Learned) {
			sum.Values = append(sum.Values, s.Learned)
		}
	}
	slices.Sort(sum.Values)
	return sum
}

// String renders the summary, e.g. `learned 3/3, values ["v1"], 2 rounds`.
func (s Summary) String() string {
	quoted := make([]string, len(s.Values))
	for i, v := range s.Values {
		quoted[i] = fmt.Sprintf("%q", v)
	}
	rounds := "rounds"
	if s.MaxRound == 1 {
		rounds = "round"
	}
	return fmt.Sprintf("learned %d/%d, values [%s], %d %s", s.Learned, s.Nodes, strings.Join(quoted, " "), s.MaxRound, rounds)
}
