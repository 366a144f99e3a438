package lease

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Grantor is the node that grants the lease; every other node is a client.
const Grantor node.ID = 1

// LeaseFor is how long a lease lasts at the grantor, from the grant. A
// client stops acting Margin before its lease ends as it reckons it (from
// when it asked), the allowance for its clock running slow. AskAgain is
// how long a client waits after its lease lapsed before it asks again;
// a client that waits for the lease asks again every AskRetry (a
// grantor that restarted has forgotten its queue).
const (
	LeaseFor = 30 * time.Second
	Margin   = 100 * time.Millisecond
	AskAgain = time.Second
	AskRetry = 2 * time.Second
)

// Acquire is the application call that makes a client ask for the lease.
type Acquire struct{}

// Request asks the grantor for the lease.
type Request struct{}

// Granted gives the client the lease for LeaseFor.
type Granted struct{}

// MessageType implements node.Message.
func (Acquire) MessageType() string { return "zoo-lease.Acquire" }

// MessageType implements node.Message.
func (Request) MessageType() string { return "zoo-lease.Request" }

// MessageType implements node.Message.
func (Granted) MessageType() string { return "zoo-lease.Granted" }

// Spec returns the lease service: with the planted bug (fixed false: a
// grantor that starts grants at once) or corrected (a grantor that starts
// waits out any lease its previous incarnation may have granted).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-lease",
		New:      func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Acquire{}, Request{}, Granted{}},
		Properties: []node.Property{
			node.Always("OneHolder", oneHolder),
			node.Eventually("ClientsServed", clientsServed),
		},
	}
}

// Workload makes every client ask for the lease when it starts and after
// a reset.
func Workload(id node.ID, restart bool) []node.Message {
	if id == Grantor {
		return nil
	}
	return []node.Message{Acquire{}}
}

// State is a node's state. Nothing is on disk: a grantor that restarts
// has forgotten its holder, which is why it must wait.
type State struct {
	// HandleTransportError does nothing: a lease is a matter of time, not of
	// connections, and a waiting client's "retry" timer asks again if its
	// Request was lost.
	node.NopHandlers

	// Holder is the client holding the grantor's lease (0: none), Queue
	// the clients waiting for it, Recovering whether the grantor is
	// waiting out the leases of its previous incarnation.
	Holder     node.ID
	Queue      []node.ID
	Recovering bool
	// Wants is set while a client waits for the lease, Holds while it
	// acts under it; AskedAt is when it first asked for this lease.
	Wants, Holds bool
	AskedAt      time.Time

	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("holder=%v queue=%v recovering=%v wants=%v holds=%v", s.Holder, s.Queue, s.Recovering, s.Wants, s.Holds)
}

// Init implements node.Service. The grantor cannot tell a first start from
// a restart; the correction waits out a lease it may have granted.
func (s *State) Init(env node.Env) {
	if env.Self() == Grantor && s.fixed {
		s.Recovering = true
		env.SetTimer("recovered", LeaseFor)
	}
}

// HandleApp implements node.Service: Acquire asks for the lease.
func (s *State) HandleApp(env node.Env, call node.Message) {
	if _, ok := call.(Acquire); ok && env.Self() != Grantor && !s.Wants && !s.Holds {
		s.ask(env)
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case Request: // at the grantor
		switch {
		case !s.Recovering && (s.Holder == node.None || s.Holder == from):
			s.grant(env, from)
		case !slices.Contains(s.Queue, from):
			s.Queue = append(s.Queue, from)
		}
	case Granted: // at a client: the lease runs from when it asked
		if !s.Wants {
			return
		}
		s.Wants = false
		env.CancelTimer("retry")
		if left := s.AskedAt.Add(LeaseFor - Margin).Sub(env.Now()); left > 0 {
			s.Holds = true
			env.SetTimer("lapse", left)
		} else {
			env.SetTimer("again", AskAgain) // granted too late to use
		}
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	switch {
	case name == "expire" || name == "recovered": // at the grantor
		s.Holder, s.Recovering = node.None, false
		if len(s.Queue) > 0 {
			next := s.Queue[0]
			s.Queue = s.Queue[1:]
			s.grant(env, next)
		}
	case name == "lapse" && s.Holds:
		s.Holds = false
		env.SetTimer("again", AskAgain)
	case name == "again" && !s.Wants && !s.Holds:
		s.ask(env)
	case name == "retry" && s.Wants:
		env.Send(Grantor, Request{})
		env.SetTimer("retry", AskRetry)
	}
}

// ask requests the lease, remembering when.
func (s *State) ask(env node.Env) {
	s.Wants, s.AskedAt = true, env.Now()
	env.Send(Grantor, Request{})
	env.SetTimer("retry", AskRetry)
}

// grant gives client c the lease for LeaseFor from now.
func (s *State) grant(env node.Env, c node.ID) {
	s.Holder = c
	env.SetTimer("expire", LeaseFor)
	env.Send(c, Granted{})
}

// oneHolder: at most one client acts under the lease.
func oneHolder(v node.View) error {
	first := node.None // no allocation while the property holds
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && c.Holds {
			if first != node.None {
				return fmt.Errorf("%v and %v hold the lease", first, id)
			}
			first = id
		}
	}
	return nil
}

// clientsServed: eventually no client waits for the lease.
func clientsServed(v node.View) error {
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && c.Wants {
			return fmt.Errorf("%v still waits for the lease", id)
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
