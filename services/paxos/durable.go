package paxos

import "github.com/seed6eee2ec7/crystalball/node"

var _ node.Durable = (*State)(nil)

// Recover implements node.Durable: after a reset the node finds on disk the
// value it learned and the highest round it proposed in, and — unless bug2
// (BugVolatileAcceptor) is injected — its acceptor's promise and accepted
// proposal. Everything else (the proposer's ballot in progress, the
// learner's tallies, the application's proposal) is lost. All durable
// fields are values or immutable strings, so copying them aliases nothing.
func (s *State) Recover(previous node.Service) {
	p, ok := previous.(*State)
	if !ok {
		return
	}
	s.Learned = p.Learned
	s.Round = p.Round
	if s.opts.BugVolatileAcceptor {
		return // bug2: the promise was never written to disk
	}
	s.Promised = p.Promised
	s.Accepted, s.AcceptedValue = p.Accepted, p.AcceptedValue
}
