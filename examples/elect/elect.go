package elect

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timing. Node n's election timeout is ElectionTimeout + (n-1)·Stagger, so
// that the nodes time out one after another (no split votes to explore);
// a leader sends its heartbeat every HeartbeatEvery.
const (
	ElectionTimeout = time.Second
	Stagger         = 200 * time.Millisecond
	HeartbeatEvery  = 300 * time.Millisecond
)

// Role is a node's part in the election.
type Role uint8

// The roles.
const (
	Follower Role = iota
	Candidate
	Leader
)

// RequestVote asks for a vote in Term.
type RequestVote struct{ Term uint64 }

// Vote answers a RequestVote of Term: granted or not.
type Vote struct {
	Term    uint64
	Granted bool
}

// Heartbeat is a leader's of Term.
type Heartbeat struct{ Term uint64 }

// Stale answers a heartbeat of an older term with the follower's Term, so
// that a deposed leader steps down.
type Stale struct{ Term uint64 }

// MessageType implements node.Message.
func (RequestVote) MessageType() string { return "elect.RequestVote" }

// MessageType implements node.Message.
func (Vote) MessageType() string { return "elect.Vote" }

// MessageType implements node.Message.
func (Heartbeat) MessageType() string { return "elect.Heartbeat" }

// MessageType implements node.Message.
func (Stale) MessageType() string { return "elect.Stale" }

// Spec returns the election of a cluster of nodes 1..n: with the planted
// bug (fixed false: a candidate decides once every peer has answered) or
// corrected (a majority of votes decides).
func Spec(n int, fixed bool) node.Spec {
	return node.Spec{
		Name:     "elect",
		New:      func() node.Service { return &State{n: n, fixed: fixed} },
		Messages: []node.Message{RequestVote{}, Vote{}, Heartbeat{}, Stale{}},
		Properties: []node.Property{
			node.Always("OneLeaderPerTerm", oneLeaderPerTerm),
			node.Eventually("LeaderElected", func(v node.View) error { return leaderElected(v, n) }),
		},
	}
}

// Workload is the election's: no application call (the nodes campaign on
// their own).
func Workload(node.ID, bool) []node.Message { return nil }

// State is a node's state.
type State struct {
	node.NopHandlers

	// Term and VotedFor are Raft's: the latest term seen and the
	// candidate voted for in it (0: none). They are kept on disk
	// (Recover).
	Term     uint64
	VotedFor node.ID
	Role     Role
	// Leader is the leader this node follows in Term (0: none heard since
	// its election timer last fired).
	Leader node.ID
	// Votes are the votes a candidate has in Term, Answered the peers
	// that answered its request (granted or not), itself included.
	Votes, Answered []node.ID

	n     int
	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("term=%d voted=%v role=%v leader=%v votes=%v answered=%v", s.Term, s.VotedFor, s.Role, s.Leader, s.Votes, s.Answered)
}

// String names the role.
func (r Role) String() string {
	switch r {
	case Follower:
		return "follower"
	case Candidate:
		return "candidate"
	case Leader:
		return "leader"
	}
	return fmt.Sprintf("role(%d)", uint8(r))
}

// Recover implements node.Durable: the term and the vote survive a crash.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Term, s.VotedFor = p.Term, p.VotedFor
	}
}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	c.Votes, c.Answered = slices.Clone(s.Votes), slices.Clone(s.Answered)
	return &c
}

// Init implements node.Service: a node starts as a follower.
func (s *State) Init(env node.Env) { s.resetElection(env) }

// resetElection arms the election timer for the node's timeout.
func (s *State) resetElection(env node.Env) {
	env.SetTimer("election", ElectionTimeout+time.Duration(env.Self()-1)*Stagger)
}

// peers returns the other nodes of the cluster.
func (s *State) peers(self node.ID) []node.ID {
	out := make([]node.ID, 0, s.n)
	for id := node.ID(1); id <= node.ID(s.n); id++ {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

// HandleTimer implements node.Service: a follower or candidate whose
// election timer fires campaigns in the next term; a leader sends its
// heartbeats.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case "election":
		if s.Role == Leader {
			return
		}
		s.Term++
		s.Role, s.VotedFor, s.Leader = Candidate, env.Self(), node.None
		s.Votes, s.Answered = []node.ID{env.Self()}, []node.ID{env.Self()}
		for _, p := range s.peers(env.Self()) {
			env.Send(p, RequestVote{Term: s.Term})
		}
		s.resetElection(env)
		s.decide(env)
	case "heartbeat":
		if s.Role == Leader {
			s.heartbeat(env)
		}
	}
}

// heartbeat sends the leader's heartbeats and arms the next.
func (s *State) heartbeat(env node.Env) {
	for _, p := range s.peers(env.Self()) {
		env.Send(p, Heartbeat{Term: s.Term})
	}
	env.SetTimer("heartbeat", HeartbeatEvery)
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case RequestVote:
		s.requestVote(env, from, m)
	case Vote:
		if m.Term > s.Term {
			s.stepDown(env, m.Term)
			return
		}
		if s.Role != Candidate || m.Term != s.Term || slices.Contains(s.Answered, from) {
			return
		}
		s.Answered = append(s.Answered, from)
		if m.Granted {
			s.Votes = append(s.Votes, from)
		}
		s.decide(env)
	case Heartbeat:
		if m.Term < s.Term {
			env.Send(from, Stale{Term: s.Term})
			return
		}
		if m.Term > s.Term {
			s.Term, s.VotedFor = m.Term, node.None
		}
		s.Role, s.Leader = Follower, from
		s.Votes, s.Answered = nil, nil
		env.CancelTimer("heartbeat")
		s.resetElection(env)
	case Stale:
		if m.Term > s.Term {
			s.stepDown(env, m.Term)
		}
	}
}

// requestVote answers a candidate. A follower that follows a leader
// ignores other candidates until its election timer fires (Raft's guard
// against disruptive servers): a candidate cut off from the leader cannot
// depose it.
func (s *State) requestVote(env node.Env, from node.ID, m RequestVote) {
	if s.Role == Follower && s.Leader != node.None && s.Leader != from {
		return
	}
	if m.Term > s.Term {
		s.stepDown(env, m.Term)
	}
	granted := m.Term == s.Term && (s.VotedFor == node.None || s.VotedFor == from)
	if granted {
		s.VotedFor = from
		s.resetElection(env)
	}
	env.Send(from, Vote{Term: s.Term, Granted: granted})
}

// stepDown makes the node a follower of no one in term.
func (s *State) stepDown(env node.Env, term uint64) {
	if s.Role == Leader {
		env.CancelTimer("heartbeat")
		s.resetElection(env)
	}
	s.Term, s.VotedFor, s.Role, s.Leader = term, node.None, Follower, node.None
	s.Votes, s.Answered = nil, nil
}

// decide makes a candidate the leader once its votes are a majority. The
// planted bug waits, before it counts, until every peer has answered —
// granted or refused — so as to tell a lost election from a slow one: a
// peer that never answers (down, or cut off) keeps the candidate waiting
// for good, while a majority is there to elect it. The correction counts
// at every vote.
func (s *State) decide(env node.Env) {
	if s.Role != Candidate {
		return
	}
	if !s.fixed && len(s.Answered) < s.n {
		return
	}
	if 2*len(s.Votes) > s.n {
		s.Role, s.Leader = Leader, env.Self()
		s.Votes, s.Answered = nil, nil
		env.CancelTimer("election")
		s.heartbeat(env)
	}
}

// oneLeaderPerTerm: no two nodes lead in the same term (Raft's election
// safety).
func oneLeaderPerTerm(v node.View) error {
	for i, a := range v.Nodes() {
		sa, ok := v.Service(a).(*State)
		if !ok || sa.Role != Leader {
			continue
		}
		for _, b := range v.Nodes()[i+1:] {
			if sb, ok := v.Service(b).(*State); ok && sb.Role == Leader && sb.Term == sa.Term {
				return fmt.Errorf("%v and %v both lead term %d", a, b, sa.Term)
			}
		}
	}
	return nil
}

// leaderElected: some node leads, followed in its term by a majority of
// the cluster of n (itself included) among the nodes up.
func leaderElected(v node.View, n int) error {
	for _, l := range v.Nodes() {
		sl, ok := v.Service(l).(*State)
		if !ok || sl.Role != Leader {
			continue
		}
		count := 0
		for _, id := range v.Nodes() {
			if s, ok := v.Service(id).(*State); ok && (id == l || (s.Leader == l && s.Term == sl.Term)) {
				count++
			}
		}
		if 2*count > n {
			return nil
		}
	}
	return fmt.Errorf("no leader followed by a majority of the %d nodes", n)
}
