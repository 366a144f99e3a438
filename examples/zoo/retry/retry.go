package retry

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Replicas is the number of lock replicas: nodes 1..Replicas. Every other
// node is a client.
const Replicas = 3

// quorum is a majority of the replicas.
const quorum = Replicas/2 + 1

// The client's timers: how long an attempt waits for a quorum of grants
// before it is retried, how long a client holds the lock, and how long it
// waits before asking again.
const (
	RetryAfter   = 100 * time.Millisecond
	HoldFor      = 500 * time.Millisecond
	AcquireAgain = 300 * time.Millisecond
)

// Acquire is the application call that makes a client ask for the lock.
type Acquire struct{}

// Lock asks a replica for the lock, for the client's attempt Attempt
// (always 0 in the planted bug, which does not number its attempts).
type Lock struct{ Attempt uint64 }

// Unlock gives the lock back to a replica (or withdraws a request).
type Unlock struct{}

// Granted is a replica's yes to the Lock of attempt Attempt.
type Granted struct{ Attempt uint64 }

// Denied is a replica's no: another client holds its vote.
type Denied struct{ Attempt uint64 }

// MessageType implements node.Message.
func (Acquire) MessageType() string { return "zoo-retry.Acquire" }

// MessageType implements node.Message.
func (Lock) MessageType() string { return "zoo-retry.Lock" }

// MessageType implements node.Message.
func (Unlock) MessageType() string { return "zoo-retry.Unlock" }

// MessageType implements node.Message.
func (Granted) MessageType() string { return "zoo-retry.Granted" }

// MessageType implements node.Message.
func (Denied) MessageType() string { return "zoo-retry.Denied" }

// Spec returns the quorum lock: with the planted bug (fixed false: a grant
// counts for the current attempt whatever attempt it answers) or corrected
// (attempts are numbered and a grant counts only for its own).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-retry",
		New:      func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Acquire{}, Lock{}, Unlock{}, Granted{}, Denied{}},
		Properties: []node.Property{
			node.Always("LockBacked", lockBacked),
			node.Always("MutualExclusion", mutualExclusion),
			node.Eventually("ClientsServed", clientsServed),
		},
	}
}

// Workload makes every client ask for the lock when it starts and after a
// reset; replicas get no calls.
func Workload(id node.ID, restart bool) []node.Message {
	if id <= Replicas {
		return nil
	}
	return []node.Message{Acquire{}}
}

// State is a node's state. A replica uses Holder; a client the rest.
type State struct {
	// Init does nothing; HandleTransportError neither: a lost Lock or
	// Granted is what the retry timer is for.
	node.NopHandlers

	// Holder is the client a replica has given its vote to (0: none). It is
	// on the replica's disk (Recover).
	Holder node.ID
	// Wants is set while a client waits for a quorum; Holds while it holds
	// the lock.
	Wants, Holds bool
	// Attempt numbers the client's attempts (the correction only).
	Attempt uint64
	// GrantedBy lists the replicas whose grant the client counted for its
	// current attempt.
	GrantedBy []node.ID

	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("holder=%v wants=%v holds=%v attempt=%d granted-by=%v",
		s.Holder, s.Wants, s.Holds, s.Attempt, s.GrantedBy)
}

// Recover implements node.Durable: a replica's vote survives a crash.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Holder = p.Holder
	}
}

// HandleApp implements node.Service: Acquire starts the first attempt.
func (s *State) HandleApp(env node.Env, call node.Message) {
	if _, ok := call.(Acquire); ok && env.Self() > Replicas && !s.Wants && !s.Holds {
		s.Wants = true
		s.attempt(env)
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Lock: // at a replica: one vote, to the first client that asks
		if s.Holder == node.None || s.Holder == from {
			s.Holder = from
			env.Send(from, Granted(m))
		} else {
			env.Send(from, Denied(m))
		}
	case Unlock:
		if s.Holder == from {
			s.Holder = node.None
		}
	case Granted:
		s.granted(env, from, m.Attempt)
	}
}

// granted counts a grant, and takes the lock on a quorum.
func (s *State) granted(env node.Env, from node.ID, attempt uint64) {
	if !s.Wants {
		return
	}
	// The bug is the missing attempt check: a grant is taken for one of
	// this attempt whichever attempt it answers (the planted bug numbers no
	// attempts at all, so every grant says 0).
	if s.fixed && attempt != s.Attempt {
		return
	}
	for _, r := range s.GrantedBy {
		if r == from {
			return
		}
	}
	s.GrantedBy = append(s.GrantedBy, from)
	if len(s.GrantedBy) >= quorum {
		s.Wants, s.Holds = false, true
		env.CancelTimer("retry")
		env.SetTimer("release", HoldFor)
	}
}

// HandleTimer implements node.Service: a client retries an attempt that
// got no quorum, releases the lock it held, or asks for it again.
func (s *State) HandleTimer(env node.Env, name string) {
	switch {
	case name == "retry" && s.Wants:
		// Give back the votes this attempt got, so that a client that
		// holds the others can win, and start afresh.
		for _, r := range s.GrantedBy {
			env.Send(r, Unlock{})
		}
		s.attempt(env)
	case name == "release" && s.Holds:
		s.Holds = false
		s.unlockAll(env)
		env.SetTimer("again", AcquireAgain)
	case name == "again" && !s.Wants && !s.Holds:
		s.Wants = true
		s.attempt(env)
	}
}

// attempt asks every replica for the lock.
func (s *State) attempt(env node.Env) {
	s.GrantedBy = nil
	if s.fixed {
		s.Attempt++
	}
	for r := node.ID(1); r <= Replicas; r++ {
		env.Send(r, Lock{Attempt: s.Attempt})
	}
	env.SetTimer("retry", RetryAfter)
}

// unlockAll gives the client's votes back.
func (s *State) unlockAll(env node.Env) {
	for r := node.ID(1); r <= Replicas; r++ {
		env.Send(r, Unlock{})
	}
}

// lockBacked: a client that holds the lock holds the vote of a majority of
// the replicas (the replicas are in the view).
func lockBacked(v node.View) error {
	for _, id := range v.Nodes() {
		c, ok := v.Service(id).(*State)
		if !ok || !c.Holds {
			continue
		}
		votes := 0
		for r := node.ID(1); r <= Replicas; r++ {
			if rs, ok := v.Service(r).(*State); ok && rs.Holder == id {
				votes++
			} else if !ok {
				votes++ // a replica outside the view is given the benefit of the doubt
			}
		}
		if votes < quorum {
			return fmt.Errorf("%v holds the lock with %d of %d votes", id, votes, Replicas)
		}
	}
	return nil
}

// mutualExclusion: at most one client holds the lock.
func mutualExclusion(v node.View) error {
	first := node.None // no allocation while the property holds
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && c.Holds {
			if first != node.None {
				return fmt.Errorf("%v and %v hold the lock", first, id)
			}
			first = id
		}
	}
	return nil
}

// clientsServed: eventually no client waits for the lock.
func clientsServed(v node.View) error {
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && c.Wants {
			return fmt.Errorf("%v still waits for the lock", id)
		}
	}
	return nil
}

// Clone implements node.Cloner: the explorer copies a state on every
// transition.
func (s *State) Clone() node.Service {
	c := *s
	c.GrantedBy = slices.Clone(s.GrantedBy)
	return &c
}
