package paxos

import (
	"strconv"

	"github.com/seed6eee2ec7/crystalball/node"
)

var (
	_ node.AppCaller = (*State)(nil)
	_ node.Restarter = (*State)(nil)
)

// ValueOf is the value node id proposes when the explorer or the CLI's
// workload asks it to: "v" and the node number, e.g. "v3", so a trace shows
// whose proposal was chosen.
func ValueOf(id node.ID) string { return "v" + strconv.FormatUint(uint64(id), 10) }

// AppCalls implements node.AppCaller: a proposer (Options.Proposers) that
// has neither proposed nor learned a value may be asked to propose
// ValueOf(self). This is how
// the explorer tries the paper's "second round" from a live state.
func (s *State) AppCalls(self node.ID) []node.Message {
	if s.Proposal != "" || s.Learned != "" || !s.opts.isProposer(self) {
		return nil
	}
	return []node.Message{Propose{Value: ValueOf(self)}}
}

// RestartCalls implements node.Restarter: an application whose proposal
// had not been chosen when its node reset submits it again.
func (s *State) RestartCalls(self node.ID) []node.Message {
	if s.Proposal == "" || s.Learned != "" {
		return nil
	}
	return []node.Message{Propose{Value: s.Proposal}}
}
