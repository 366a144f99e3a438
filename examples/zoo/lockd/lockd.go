package lockd

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Server is the lock server's node ID; every other node is a client.
const Server node.ID = 1

// A client holds the lock for HoldFor and asks for it again AcquireAgain
// after giving it back; ResendAfter its connection to the server broke, it
// sends its Request or Release again.
const (
	HoldFor      = time.Second
	AcquireAgain = 2 * time.Second
	ResendAfter  = time.Second
)

// Acquire is the application call that makes a client ask for the lock.
type Acquire struct{}

// Request asks the server for the lock.
type Request struct{}

// Grant gives a client the lock.
type Grant struct{}

// Release gives the lock back.
type Release struct{}

// MessageType implements node.Message.
func (Acquire) MessageType() string { return "zoo-lockd.Acquire" }

// MessageType implements node.Message.
func (Request) MessageType() string { return "zoo-lockd.Request" }

// MessageType implements node.Message.
func (Grant) MessageType() string { return "zoo-lockd.Grant" }

// MessageType implements node.Message.
func (Release) MessageType() string { return "zoo-lockd.Release" }

// Spec returns the lock server: with the planted bug (fixed false: the
// server takes the lock back from a holder whose connection broke) or
// corrected (the lock stays with its holder until the holder gives it back
// or asks for it again).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-lockd",
		New:      func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Acquire{}, Request{}, Grant{}, Release{}},
		Properties: []node.Property{
			node.Always("MutualExclusion", mutualExclusion),
			node.Eventually("ClientsServed", clientsServed),
		},
	}
}

// Workload makes every client ask for the lock when it starts and after a
// reset.
func Workload(id node.ID, restart bool) []node.Message {
	if id == Server {
		return nil
	}
	return []node.Message{Acquire{}}
}

// State is a node's state: the server's holder and queue, a client's
// wishes.
type State struct {
	// Init does nothing: a node starts with nothing.
	node.NopHandlers

	// Holder is the client the server gave the lock to (0: none); Queue
	// the clients waiting, first come first served. The server keeps both
	// on disk (Recover).
	Holder node.ID
	Queue  []node.ID
	// Wants is set while a client waits for the lock, Holds while it
	// holds it.
	Wants, Holds bool

	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("holder=%v queue=%v wants=%v holds=%v", s.Holder, s.Queue, s.Wants, s.Holds)
}

// Recover implements node.Durable: the server's holder and queue survive
// a crash (a client's Init forgets them: it has none).
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Holder, s.Queue = p.Holder, slices.Clone(p.Queue)
	}
}

// HandleApp implements node.Service: Acquire sends a Request.
func (s *State) HandleApp(env node.Env, call node.Message) {
	if _, ok := call.(Acquire); ok && env.Self() != Server && !s.Wants && !s.Holds {
		s.Wants = true
		env.Send(Server, Request{})
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case Request: // at the server
		switch {
		case s.Holder == node.None || s.Holder == from:
			// The holder asking again has restarted, or lost the Grant
			// to a broken connection: it is still its lock.
			s.Holder = from
			env.Send(from, Grant{})
		case !slices.Contains(s.Queue, from):
			s.Queue = append(s.Queue, from)
		}
	case Release: // at the server
		if s.Holder == from {
			s.next(env)
		}
	case Grant: // at a client
		if s.Wants {
			s.Wants, s.Holds = false, true
			env.SetTimer("release", HoldFor)
		}
	}
}

// HandleTimer implements node.Service: a client gives the lock back, asks
// for it again, or resends what a broken connection may have lost.
func (s *State) HandleTimer(env node.Env, name string) {
	switch {
	case name == "release" && s.Holds:
		s.Holds = false
		env.Send(Server, Release{})
		env.SetTimer("again", AcquireAgain)
	case name == "again" && !s.Wants && !s.Holds:
		s.Wants = true
		env.Send(Server, Request{})
	case name == "resend" && s.Wants:
		env.Send(Server, Request{})
	case name == "resend" && !s.Holds:
		env.Send(Server, Release{}) // the server ignores it from a non-holder
	}
}

// HandleTransportError implements node.Service.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if env.Self() != Server {
		// What was in flight to the server may be lost: ask again, or give
		// the lock back again, ResendAfter later (the server may be down a
		// while). A holder keeps its lock: it is alive.
		if !env.TimerScheduled("resend") {
			env.SetTimer("resend", ResendAfter)
		}
		return
	}
	// The bug: the server takes a broken connection for a crashed client
	// and passes its lock on, while the client, alive, still holds it.
	if !s.fixed && s.Holder == peer {
		s.next(env)
	}
}

// next gives the lock to the first waiting client, if any.
func (s *State) next(env node.Env) {
	s.Holder = node.None
	if len(s.Queue) > 0 {
		s.Holder, s.Queue = s.Queue[0], s.Queue[1:]
		env.Send(s.Holder, Grant{})
	}
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
	c.Queue = slices.Clone(s.Queue)
	return &c
}
