package paxos

import (
	"slices"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Symmetry. With Options.Proposers set, the members that do not propose are
// acceptors and learners only, and Paxos does not tell them apart: it
// compares their IDs only for equality (is the sender a member, has it
// promised or reported already), keeps them in sorted sets (Promises,
// Tally.From) that RenameIDs re-sorts, never names a value after them and
// never draws from their random source (only a proposer starts ballots and
// arms the jittered retry timer). Ballots are ordered by their node, but
// every ballot belongs to a proposer, which stays fixed. The proposers are
// not interchangeable: their ballots are tied by ID and their values named
// after them (ValueOf).

var (
	_ node.Symmetric       = (*State)(nil)
	_ node.RenamingService = (*State)(nil)
	_ node.RenamingMessage = Prepare{}
	_ node.RenamingMessage = Promise{}
	_ node.RenamingMessage = Accept{}
	_ node.RenamingMessage = Learn{}
)

// SymmetryGroups implements node.Symmetric: with Options.Proposers set, the
// members among ids that do not propose form one group, if there are at
// least two of them; otherwise none. The properties (OneValueChosen,
// OneValueLearned, AllLearned) quantify over all nodes alike, so they are
// symmetric in it.
func (s *State) SymmetryGroups(ids []node.ID) [][]node.ID {
	if len(s.opts.Proposers) == 0 {
		return nil
	}
	var group []node.ID
	for _, id := range ids {
		if s.opts.isMember(id) && !s.opts.isProposer(id) {
			group = append(group, id)
		}
	}
	if len(group) < 2 {
		return nil
	}
	return [][]node.ID{group}
}

// RenameIDs implements node.RenamingService: a deep copy with the node of
// every ballot, the Promises and every Tally's senders renamed, the sets
// re-sorted and the tallies kept in ballot order; s itself when the
// renaming moves none of them. The options (Members, Proposers) are not
// renamed: a renaming the service declares (SymmetryGroups) maps the
// non-proposing members onto themselves.
func (s *State) RenameIDs(rename func(node.ID) node.ID) (node.Service, bool) {
	if !s.holdsRenamed(rename) {
		return s, false
	}
	c := s.Clone().(*State)
	c.Promised, _ = c.Promised.rename(rename)
	c.Accepted, _ = c.Accepted.rename(rename)
	c.Ballot, _ = c.Ballot.rename(rename)
	c.Highest, _ = c.Highest.rename(rename)
	c.Last, _ = c.Last.rename(rename)
	c.Promises = renameSet(c.Promises, rename)
	for i := range c.Tallies {
		t := &c.Tallies[i]
		t.Ballot, _ = t.Ballot.rename(rename)
		t.From = renameSet(t.From, rename)
	}
	slices.SortFunc(c.Tallies, func(a, b Tally) int { return a.Ballot.Compare(b.Ballot) })
	return c, true
}

// holdsRenamed reports whether rename moves an ID s holds.
func (s *State) holdsRenamed(rename func(node.ID) node.ID) bool {
	moved := func(ids []node.ID) bool {
		return slices.ContainsFunc(ids, func(id node.ID) bool { return rename(id) != id })
	}
	for _, b := range []Ballot{s.Promised, s.Accepted, s.Ballot, s.Highest, s.Last} {
		if _, ok := b.rename(rename); ok {
			return true
		}
	}
	if moved(s.Promises) {
		return true
	}
	for _, t := range s.Tallies {
		if _, ok := t.Ballot.rename(rename); ok || moved(t.From) {
			return true
		}
	}
	return false
}

// rename renames the ballot's node and reports whether it moved; the zero
// ballot stays zero.
func (b Ballot) rename(rename func(node.ID) node.ID) (Ballot, bool) {
	if b.Node == node.None {
		return b, false
	}
	to := rename(b.Node)
	moved := to != b.Node
	b.Node = to
	return b, moved
}

// renameSet renames an ascending set of IDs in place and sorts it again.
func renameSet(ids []node.ID, rename func(node.ID) node.ID) []node.ID {
	for i, id := range ids {
		ids[i] = rename(id)
	}
	slices.Sort(ids)
	return ids
}

// RenameIDs implements node.RenamingMessage: the ballot's node renamed.
func (m Prepare) RenameIDs(rename func(node.ID) node.ID) (node.Message, bool) {
	var moved bool
	m.Ballot, moved = m.Ballot.rename(rename)
	return m, moved
}

// RenameIDs implements node.RenamingMessage: the ballots' nodes renamed.
func (m Promise) RenameIDs(rename func(node.ID) node.ID) (node.Message, bool) {
	var b, a bool
	m.Ballot, b = m.Ballot.rename(rename)
	m.Accepted, a = m.Accepted.rename(rename)
	return m, b || a
}

// RenameIDs implements node.RenamingMessage: the ballot's node renamed.
func (m Accept) RenameIDs(rename func(node.ID) node.ID) (node.Message, bool) {
	var moved bool
	m.Ballot, moved = m.Ballot.rename(rename)
	return m, moved
}

// RenameIDs implements node.RenamingMessage: the ballot's node renamed.
func (m Learn) RenameIDs(rename func(node.ID) node.ID) (node.Message, bool) {
	var moved bool
	m.Ballot, moved = m.Ballot.rename(rename)
	return m, moved
}
