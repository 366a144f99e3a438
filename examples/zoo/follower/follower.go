// Package follower is a log follower that falls behind for good while one
// leader lasts: the leader (node 1) appends an entry every AppendEvery and
// pipelines its log to the followers (nodes 2..n), advancing its next
// index for a follower as it sends; a follower takes an Append only if it
// continues its log and answers Nack with its length otherwise. The
// planted bug: the leader drops a Nack, so a follower that lost entries
// (it reset, or a connection broke) is sent only new ones, which it
// refuses, for as long as the leader's incarnation lasts. The leader keeps
// its log on disk but not what it knows of its followers, so a leader
// that restarts ships from the start and the follower catches up. The
// correction: on a Nack the leader sends from the follower's length.
//
// No state is wrong at any moment — a follower's log is a prefix of the
// leader's — and the unbounded liveness property AllCaughtUp holds at the
// end of a run in which the leader restarts after the follower fell
// behind: only the bounded property CaughtUpWithin (node.Within: while the
// leader is up, every follower within one entry of it within
// CatchUpBound) sees the outage, during the run.
package follower

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Leader is the node whose log the others follow.
const Leader node.ID = 1

// AppendEvery is how often the leader appends an entry and ships it;
// CatchUpBound is the bound of CaughtUpWithin.
const (
	AppendEvery  = time.Second
	CatchUpBound = 10 * time.Second
)

// Append carries entries From+1..Upto of the leader's log (entry i's
// value is i, so the entries are their numbers).
type Append struct{ From, Upto uint64 }

// Ack says the follower has Len entries; Nack that it has Len entries and
// got an Append that does not continue them.
type (
	Ack  struct{ Len uint64 }
	Nack struct{ Len uint64 }
)

// MessageType implements node.Message.
func (Append) MessageType() string { return "zoo-follower.Append" }

// MessageType implements node.Message.
func (Ack) MessageType() string { return "zoo-follower.Ack" }

// MessageType implements node.Message.
func (Nack) MessageType() string { return "zoo-follower.Nack" }

// Spec returns the service for nodes 1..nodes: with the planted bug
// (fixed false) or corrected.
func Spec(fixed bool, nodes int) node.Spec {
	return node.Spec{
		Name:     "zoo-follower",
		New:      func() node.Service { return &State{fixed: fixed, nodes: nodes} },
		Messages: []node.Message{Append{}, Ack{}, Nack{}},
		Properties: []node.Property{
			node.Always("FollowerPrefix", followerPrefix),
			node.Eventually("AllCaughtUp", allCaughtUp),
			node.Within("CaughtUpWithin", CatchUpBound, leaderUp, allCaughtUp),
		},
	}
}

// Workload gives no application calls: the leader appends on its own.
func Workload(node.ID, bool) []node.Message { return nil }

// Progress is the next entry the leader sends one follower.
type Progress struct {
	Follower node.ID
	Next     uint64
}

// State is a node's state: its log's length and, at the leader, the next
// entry of each follower.
type State struct {
	Len  uint64
	Next []Progress

	fixed bool
	nodes int
}

// String is the state on one line.
func (s *State) String() string { return fmt.Sprintf("len=%d next=%v", s.Len, s.Next) }

// Recover implements node.Durable: the leader's log survives a restart
// (a follower's is dropped by Init); what it knew of its followers does
// not.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Len = p.Len
	}
}

// Init implements node.Service.
func (s *State) Init(env node.Env) {
	if env.Self() != Leader {
		s.Len = 0
		return
	}
	s.Next = nil
	for id := node.ID(2); int(id) <= s.nodes; id++ {
		s.Next = append(s.Next, Progress{Follower: id})
	}
	env.SetTimer("append", AppendEvery)
}

// HandleTimer implements node.Service: the leader appends and ships.
func (s *State) HandleTimer(env node.Env, _ string) {
	s.Len++
	for i := range s.Next {
		p := &s.Next[i]
		env.Send(p.Follower, Append{From: p.Next, Upto: s.Len})
		p.Next = s.Len
	}
	env.SetTimer("append", AppendEvery)
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Append:
		if m.From > s.Len {
			env.Send(from, Nack{Len: s.Len})
			return
		}
		s.Len = max(s.Len, m.Upto)
		env.Send(from, Ack{Len: s.Len})
	case Nack:
		if !s.fixed {
			return // the planted bug: the pipeline is trusted
		}
		if i := slices.IndexFunc(s.Next, func(p Progress) bool { return p.Follower == from }); i >= 0 {
			s.Next[i].Next = m.Len
		}
	}
}

// HandleApp implements node.Service.
func (s *State) HandleApp(node.Env, node.Message) {}

// HandleTransportError implements node.Service.
func (s *State) HandleTransportError(node.Env, node.ID) {}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	c.Next = slices.Clone(s.Next)
	return &c
}

func leaderOf(v node.View) (*State, bool) {
	l, ok := v.Service(Leader).(*State)
	return l, ok
}

// leaderUp is CaughtUpWithin's precondition.
func leaderUp(v node.View) bool {
	_, ok := leaderOf(v)
	return ok
}

// followerPrefix: no follower has entries the leader has not appended.
func followerPrefix(v node.View) error {
	l, ok := leaderOf(v)
	if !ok {
		return nil
	}
	for _, id := range v.Nodes() {
		if f, ok := v.Service(id).(*State); ok && id != Leader && f.Len > l.Len {
			return fmt.Errorf("%v has %d entries, the leader %d", id, f.Len, l.Len)
		}
	}
	return nil
}

// allCaughtUp: every follower is within one entry of the leader (the
// latest may be on its way).
func allCaughtUp(v node.View) error {
	l, ok := leaderOf(v)
	if !ok {
		return nil
	}
	for _, id := range v.Nodes() {
		if f, ok := v.Service(id).(*State); ok && id != Leader && f.Len+1 < l.Len {
			return fmt.Errorf("%v has %d of %d entries", id, f.Len, l.Len)
		}
	}
	return nil
}
