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
// re-sorted and the tallies kept in ballot order. The options (Members,
// Proposers) are not renamed: a renaming the service declares
// (SymmetryGroups) maps the non-proposing members onto themselves.
func (s *State) RenameIDs(rename func(node.ID) node.ID) node.Service {
	c := s.Clone().(*State)
	c.Promised = c.Promised.rename(rename)
	c.Accepted = c.Accepted.rename(rename)
	c.Ballot = c.Ballot.rename(rename)
	c.Highest = c.Highest.rename(rename)
	c.Last = c.Last.rename(rename)
	c.Promises = renameSet(c.Promises, rename)
	for i := range c.Tallies {
		t := &c.Tallies[i]
		t.Ballot = t.Ballot.rename(rename)
		t.From = renameSet(t.From, rename)
	}
	slices.SortFunc(c.Tallies, func(a, b Tally) int { return a.Ballot.Compare(b.Ballot) })
	return c
}

// rename renames the ballot's node; the zero ballot stays zero.
func (b Ballot) rename(rename func(node.ID) node.ID) Ballot {
	if b.Node != node.None {
		b.Node = rename(b.Node)
	}
	return b
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
func (m Prepare) RenameIDs(rename func(node.ID) node.ID) node.Message {
	m.Ballot = m.Ballot.rename(rename)
	return m
}

// RenameIDs implements node.RenamingMessage: the ballots' nodes renamed.
func (m Promise) RenameIDs(rename func(node.ID) node.ID) node.Message {
	m.Ballot, m.Accepted = m.Ballot.rename(rename), m.Accepted.rename(rename)
	return m
}

// RenameIDs implements node.RenamingMessage: the ballot's node renamed.
func (m Accept) RenameIDs(rename func(node.ID) node.ID) node.Message {
	m.Ballot = m.Ballot.rename(rename)
	return m
}

// RenameIDs implements node.RenamingMessage: the ballot's node renamed.
func (m Learn) RenameIDs(rename func(node.ID) node.ID) node.Message {
	m.Ballot = m.Ballot.rename(rename)
	return m
}
