package paxos

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/viewstate"
)

// Property names.
const (
	// OneValueChosen (safety) is the paper's Paxos property: at most one
	// value is chosen, across all nodes. A value counts as chosen when a
	// node in the view has learned it, or when a majority of the members
	// currently hold it as accepted at one ballot (a decision no learner
	// has heard of yet). Only the nodes in the view are consulted, so a
	// partial snapshot can miss a choice but never invents one.
	OneValueChosen = "OneValueChosen"
	// OneValueLearned (safety) is the weaker property the paper's
	// experiment evidently enforces: no two nodes in the view learned
	// different values. Its immediate safety check "prevents the
	// inconsistency ... by dropping the Learn message from C at node B",
	// which stops a conflicting decision from being learned but not a
	// majority from accepting it — so the paper judged the learners.
	// Every violation of it is one of OneValueChosen.
	OneValueLearned = "OneValueLearned"
	// AllLearned (liveness): every member in the view has learned a value.
	AllLearned = "AllLearned"
)

// SafetyProperties returns Paxos's safety properties, OneValueChosen and
// OneValueLearned.
func SafetyProperties() []node.Property {
	return []node.Property{
		node.Always(OneValueChosen, checkOneValueChosen),
		node.Always(OneValueLearned, checkOneValueLearned),
	}
}

// LivenessProperties returns Paxos's liveness property, AllLearned.
func LivenessProperties() []node.Property {
	return []node.Property{node.Eventually(AllLearned, checkAllLearned)}
}

// Properties returns the safety then the liveness properties.
func Properties() []node.Property {
	return append(SafetyProperties(), LivenessProperties()...)
}

// choice is one piece of evidence that a value was chosen: learned at
// node, or accepted at ballot by a majority (ballot non-zero).
type choice struct {
	value  string
	node   node.ID
	ballot Ballot
}

func (c choice) String() string {
	if c.ballot.IsZero() {
		return fmt.Sprintf("%v learned %q", c.node, c.value)
	}
	return fmt.Sprintf("a majority accepted %q at %v", c.value, c.ballot)
}

// choices calls yield with every piece of evidence of a chosen value in v,
// learned values first, until yield returns false.
func choices(v node.View, yield func(choice) bool) {
	nodes := v.Nodes()
	for _, id := range nodes {
		if s := viewstate.Of[*State](v, id); s != nil && s.Learned != "" {
			if !yield(choice{value: s.Learned, node: id}) {
				return
			}
		}
	}
	for i, id := range nodes {
		s := viewstate.Of[*State](v, id)
		if s == nil || s.Accepted.IsZero() || !s.opts.isMember(id) {
			continue
		}
		count, first := 0, true
		for j, other := range nodes {
			o := viewstate.Of[*State](v, other)
			if o == nil || o.Accepted != s.Accepted || !o.opts.isMember(other) {
				continue
			}
			if j < i {
				first = false // this ballot was counted from an earlier node
				break
			}
			count++
		}
		if first && count >= s.opts.majority() {
			if !yield(choice{value: s.AcceptedValue, ballot: s.Accepted}) {
				return
			}
		}
	}
}

func checkOneValueChosen(v node.View) error {
	var first choice
	conflict := false
	choices(v, func(c choice) bool {
		switch {
		case first.value == "":
			first = c
		case c.value != first.value:
			conflict = true
			return false
		}
		return true
	})
	if !conflict {
		return nil
	}
	var all []string
	choices(v, func(c choice) bool {
		all = append(all, c.String())
		return true
	})
	return errors.New("two values chosen: " + strings.Join(all, "; "))
}

func checkOneValueLearned(v node.View) error {
	var first *State
	var firstID node.ID
	for _, id := range v.Nodes() {
		s := viewstate.Of[*State](v, id)
		if s == nil || s.Learned == "" {
			continue
		}
		if first == nil {
			first, firstID = s, id
			continue
		}
		if s.Learned != first.Learned {
			return fmt.Errorf("two values learned: %v learned %q, %v learned %q", firstID, first.Learned, id, s.Learned)
		}
	}
	return nil
}

func checkAllLearned(v node.View) error {
	var missing []node.ID
	for _, id := range v.Nodes() {
		if s := viewstate.Of[*State](v, id); s != nil && s.Learned == "" && s.opts.isMember(id) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%v have not learned a value", missing)
}
