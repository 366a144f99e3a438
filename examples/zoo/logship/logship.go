package logship

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Leader is the node whose log is shipped; every other node follows it.
const Leader node.ID = 1

// AppendEvery is how often the leader appends an entry and ships what its
// followers have not been sent; HelloAfter how long after a broken
// connection a follower says Hello again.
const (
	AppendEvery = 300 * time.Millisecond
	HelloAfter  = time.Second
)

// Join is the application call that makes a node a follower of the
// leader, once: the leader keeps its followers on disk.
type Join struct{}

// Hello tells the leader that a follower has the first Have entries.
type Hello struct{ Have uint64 }

// Entry is entry number Seq of the leader's log (its value is Seq).
type Entry struct{ Seq uint64 }

// Ack says the follower has entries up to Seq.
type Ack struct{ Seq uint64 }

// Nack says the follower has the first Have entries and got one that does
// not follow them (the correction only).
type Nack struct{ Have uint64 }

// MessageType implements node.Message.
func (Join) MessageType() string { return "zoo-logship.Join" }

// MessageType implements node.Message.
func (Hello) MessageType() string { return "zoo-logship.Hello" }

// MessageType implements node.Message.
func (Entry) MessageType() string { return "zoo-logship.Entry" }

// MessageType implements node.Message.
func (Ack) MessageType() string { return "zoo-logship.Ack" }

// MessageType implements node.Message.
func (Nack) MessageType() string { return "zoo-logship.Nack" }

// Spec returns the log shipper: with the planted bug (fixed false: a
// follower appends whatever entry it receives) or corrected (it appends
// only the entry that continues its log and tells the leader where it
// stands otherwise).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-logship",
		New:      func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Join{}, Hello{}, Entry{}, Ack{}, Nack{}},
		Properties: []node.Property{
			node.Always("FollowerPrefix", followerPrefix),
			node.Eventually("FollowersCaughtUp", followersCaughtUp),
		},
	}
}

// Workload makes every follower join when it first starts; a follower that
// restarts is already known to the leader, and waits for its entries.
func Workload(id node.ID, restart bool) []node.Message {
	if id == Leader || restart {
		return nil
	}
	return []node.Message{Join{}}
}

// Progress is what the leader knows of one follower.
type Progress struct {
	Follower node.ID
	// Acked is the highest entry the follower acknowledged; Next the next
	// entry to send it.
	Acked, Next uint64
}

// State is a node's state: the log, and at the leader its followers.
type State struct {
	// Log holds entries 1..len(Log). The leader keeps it on disk
	// (Recover); a follower's is a cache it rebuilds from the leader.
	Log []uint64
	// Followers is the leader's progress of each follower, by ID (on
	// disk).
	Followers []Progress
	// Nacked is 1 + the log length at a follower's last Nack (0: none).
	Nacked uint64

	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("log=%v followers=%v nacked=%d", s.Log, s.Followers, s.Nacked)
}

// Recover implements node.Durable: the leader's log and its followers'
// progress survive a crash. Recover has no Env to tell the leader from a
// follower, so every node gets them back and a follower's Init drops
// them.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Log = append([]uint64(nil), p.Log...)
		s.Followers = append([]Progress(nil), p.Followers...)
	}
}

// Init implements node.Service: the leader appends, and ships again what
// its followers have not acknowledged (what was in flight is lost); a
// follower starts with an empty log.
func (s *State) Init(env node.Env) {
	if env.Self() != Leader {
		s.Log, s.Followers = nil, nil
		return
	}
	for i := range s.Followers {
		s.Followers[i].Next = s.Followers[i].Acked + 1
	}
	env.SetTimer("append", AppendEvery)
}

// HandleApp implements node.Service: Join says Hello to the leader.
func (s *State) HandleApp(env node.Env, call node.Message) {
	if _, ok := call.(Join); ok && env.Self() != Leader {
		env.Send(Leader, Hello{Have: uint64(len(s.Log))})
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Hello: // at the leader: (re)start shipping where the follower is
		p := s.progress(from)
		p.Acked, p.Next = m.Have, m.Have+1
		s.ship(env, p)
	case Ack:
		if p := s.progress(from); m.Seq > p.Acked {
			p.Acked = m.Seq
		}
	case Nack:
		p := s.progress(from)
		p.Acked, p.Next = m.Have, m.Have+1
		s.ship(env, p)
	case Entry: // at a follower
		s.entry(env, from, m.Seq)
	}
}

// entry appends a shipped entry.
func (s *State) entry(env node.Env, from node.ID, seq uint64) {
	have := uint64(len(s.Log))
	// The bug: the follower trusts the connection to bring every entry
	// once and in order, so it appends whatever comes. A connection to a
	// new incarnation does not continue the old one's stream.
	if s.fixed && seq != have+1 {
		if seq > have+1 && s.Nacked != have+1 {
			s.Nacked = have + 1 // one Nack per gap: the leader ships it all again
			env.Send(from, Nack{Have: have})
		}
		return
	}
	s.Log = append(s.Log, seq)
	env.Send(from, Ack{Seq: seq})
}

// HandleTimer implements node.Service: the leader appends an entry and
// ships it; a follower says Hello again.
func (s *State) HandleTimer(env node.Env, name string) {
	if name == "hello" {
		env.Send(Leader, Hello{Have: uint64(len(s.Log))})
		return
	}
	s.Log = append(s.Log, uint64(len(s.Log)+1))
	for i := range s.Followers {
		s.ship(env, &s.Followers[i])
	}
	env.SetTimer("append", AppendEvery)
}

// HandleTransportError implements node.Service. The leader takes a broken
// connection for a lost stream: what was not acknowledged is shipped
// again, from Acked+1, at the next append. A follower says Hello again
// HelloAfter later (the leader may be down a while).
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if env.Self() != Leader {
		if !env.TimerScheduled("hello") {
			env.SetTimer("hello", HelloAfter)
		}
		return
	}
	for i := range s.Followers {
		if p := &s.Followers[i]; p.Follower == peer {
			p.Next = p.Acked + 1
		}
	}
}

// progress returns the leader's progress of follower f, added if new.
func (s *State) progress(f node.ID) *Progress {
	for i := range s.Followers {
		if s.Followers[i].Follower == f {
			return &s.Followers[i]
		}
	}
	s.Followers = append(s.Followers, Progress{Follower: f, Next: 1})
	return &s.Followers[len(s.Followers)-1]
}

// ship sends follower p the entries it has not been sent.
func (s *State) ship(env node.Env, p *Progress) {
	for ; p.Next <= uint64(len(s.Log)); p.Next++ {
		env.Send(p.Follower, Entry{Seq: p.Next})
	}
}

// followerPrefix: every follower's log is a prefix of the leader's.
func followerPrefix(v node.View) error {
	l, ok := v.Service(Leader).(*State)
	if !ok {
		return nil
	}
	for _, id := range v.Nodes() {
		f, ok := v.Service(id).(*State)
		if !ok || id == Leader {
			continue
		}
		for i, e := range f.Log {
			if i >= len(l.Log) || e != l.Log[i] {
				return fmt.Errorf("%v's log %v is not a prefix of the leader's (%d entries)", id, f.Log, len(l.Log))
			}
		}
	}
	return nil
}

// followersCaughtUp: eventually every follower has the leader's log.
func followersCaughtUp(v node.View) error {
	l, ok := v.Service(Leader).(*State)
	if !ok {
		return nil
	}
	for _, id := range v.Nodes() {
		if f, ok := v.Service(id).(*State); ok && id != Leader && len(f.Log) != len(l.Log) {
			return fmt.Errorf("%v has %d of the leader's %d entries", id, len(f.Log), len(l.Log))
		}
	}
	return nil
}

// Clone implements node.Cloner: the explorer copies a state on every
// transition.
func (s *State) Clone() node.Service {
	c := *s
	c.Log, c.Followers = slices.Clone(s.Log), slices.Clone(s.Followers)
	return &c
}
