package mutex

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Timing. A node thinks for ThinkTime plus up to ThinkJitter (drawn from
// its random source) between two visits to the critical section, the
// first time too, and stays in it for CSLength. RetryAfter after a
// transport error with a peer that owes it a Reply it sends that peer its
// Request again.
const (
	ThinkTime   = 3 * time.Second
	ThinkJitter = 2 * time.Second
	CSLength    = 300 * time.Millisecond
	RetryAfter  = time.Second
)

// GrantBound is EveryRequestGranted's bound: within it of a node asking,
// a moment comes when no node waits (every request then pending has been
// granted).
const GrantBound = 60 * time.Second

// Request asks every peer for permission to enter the critical section,
// stamped with the sender's Lamport clock TS; Reply grants the request
// stamped TS.
type (
	Request struct{ TS uint64 }
	Reply   struct{ TS uint64 }
)

// MessageType implements node.Message.
func (Request) MessageType() string { return "mutex.Request" }

// MessageType implements node.Message.
func (Reply) MessageType() string { return "mutex.Reply" }

func (m Request) String() string { return fmt.Sprintf("Request(%d)", m.TS) }
func (m Reply) String() string   { return fmt.Sprintf("Reply(%d)", m.TS) }

// Spec returns mutual exclusion among nodes 1..n.
func Spec(n int) node.Spec {
	return node.Spec{
		Name:     "mutex",
		New:      func() node.Service { return &State{n: n} },
		Messages: []node.Message{Request{}, Reply{}},
		Properties: []node.Property{
			node.Always("MutualExclusion", mutualExclusion),
			node.Within("EveryRequestGranted", GrantBound, nil, noneWaits),
		},
	}
}

// Workload is the mutual exclusion's: no application call (every node
// asks on its own timer).
func Workload(node.ID, bool) []node.Message { return nil }

// Deferred is a request a node answers when it leaves the critical
// section (or gives its own request up).
type Deferred struct {
	From node.ID
	TS   uint64
}

// State is a node's state. Clock and Deferred are kept on disk (Recover):
// a restarted node stamps its requests after every one it answered, and
// still owes the replies it deferred. Its own request and its visit end
// with the reset.
type State struct {
	node.NopHandlers

	// Clock is the node's Lamport clock.
	Clock uint64
	// Req is the stamp of the node's request under way (0: none); Granted
	// are the peers that replied to it.
	Req     uint64
	Granted []node.ID
	// InCS is set while the node is in the critical section.
	InCS bool
	// Deferred are the requests the node answers later, one per peer (the
	// newest).
	Deferred []Deferred

	n int
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("clock=%d req=%d granted=%v in-cs=%v deferred=%v", s.Clock, s.Req, s.Granted, s.InCS, s.Deferred)
}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	c.Granted, c.Deferred = slices.Clone(s.Granted), slices.Clone(s.Deferred)
	return &c
}

// Recover implements node.Durable.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Clock, s.Deferred = p.Clock, slices.Clone(p.Deferred)
	}
}

// Neighbors implements node.Neighborer: every other node.
func (s *State) Neighbors(self node.ID) []node.ID {
	out := make([]node.ID, 0, s.n)
	for id := node.ID(1); id <= node.ID(s.n); id++ {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

// Init implements node.Service: a node starts thinking; a restarted one
// first answers the requests it had deferred (it holds no request of its
// own now).
func (s *State) Init(env node.Env) {
	s.answerDeferred(env)
	s.think(env)
}

// think arms the timer of the node's next request.
func (s *State) think(env node.Env) {
	env.SetTimer("request", ThinkTime+time.Duration(env.Rand().IntN(int(ThinkJitter/time.Millisecond)))*time.Millisecond)
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case "request":
		s.Clock++
		s.Req, s.Granted = s.Clock, nil
		for _, p := range s.Neighbors(env.Self()) {
			env.Send(p, Request{TS: s.Req})
		}
	case "exit":
		s.InCS, s.Req, s.Granted = false, 0, nil
		s.answerDeferred(env)
		s.think(env)
	case "retry":
		if s.Req != 0 && !s.InCS {
			for _, p := range s.Neighbors(env.Self()) {
				if !slices.Contains(s.Granted, p) {
					env.Send(p, Request{TS: s.Req})
				}
			}
		}
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Request:
		s.Clock = max(s.Clock, m.TS) + 1
		if s.InCS || (s.Req != 0 && before(s.Req, env.Self(), m.TS, from)) {
			s.deferRequest(from, m.TS)
			return
		}
		env.Send(from, Reply(m)) // granted: the reply carries the request's stamp
	case Reply:
		if m.TS != s.Req || s.InCS || slices.Contains(s.Granted, from) {
			return
		}
		s.Granted = append(s.Granted, from)
		if len(s.Granted) == s.n-1 {
			s.InCS = true
			env.SetTimer("exit", CSLength)
		}
	}
}

// before reports whether request (ta, a) comes before (tb, b): Lamport
// stamps, ties broken by node ID.
func before(ta uint64, a node.ID, tb uint64, b node.ID) bool {
	return ta < tb || (ta == tb && a < b)
}

// deferRequest keeps peer's request stamped ts for later: only the newest
// of a peer's requests is answered (an older one may arrive late).
func (s *State) deferRequest(peer node.ID, ts uint64) {
	for i := range s.Deferred {
		if s.Deferred[i].From == peer {
			s.Deferred[i].TS = max(s.Deferred[i].TS, ts)
			return
		}
	}
	s.Deferred = append(s.Deferred, Deferred{From: peer, TS: ts})
	slices.SortFunc(s.Deferred, func(a, b Deferred) int { return cmp.Compare(a.From, b.From) })
}

// answerDeferred replies to every deferred request.
func (s *State) answerDeferred(env node.Env) {
	for _, d := range s.Deferred {
		env.Send(d.From, Reply{TS: d.TS})
	}
	s.Deferred = nil
}

// HandleTransportError implements node.Service: a node whose request a
// peer has not granted sends that peer its request again RetryAfter later
// (the request, or the reply, may have been lost; the peer, down, may be
// back). A deferred request stays: the peer asks again if it lost it.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if s.Req != 0 && !s.InCS && !slices.Contains(s.Granted, peer) {
		env.SetTimer("retry", RetryAfter)
	}
}

// mutualExclusion: at most one node is in the critical section.
func mutualExclusion(v node.View) error {
	first := node.None
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.InCS {
			if first != node.None {
				return fmt.Errorf("%v and %v are both in the critical section", first, id)
			}
			first = id
		}
	}
	return nil
}

// noneWaits: no node waits for the replies to its request.
func noneWaits(v node.View) error {
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.Req != 0 && !s.InCS {
			return fmt.Errorf("%v waits for %d replies to its request %d", id, s.n-1-len(s.Granted), s.Req)
		}
	}
	return nil
}
