// Command lock is a service of its own run through the crystalball
// command line: a lock server (node 1) grants one lock to the clients
// (every other node), each of which holds it for a while and releases it.
// The server keeps its holder in memory only, so a server that crashes
// and restarts grants the lock again while a client still holds it: the
// MutualExclusion property breaks, which 'lock check --resets 1' finds and
// 'lock trace show' replays. Every subcommand comes from cli.Main:
//
//	go run ./examples/lock emulate --nodes 4 --duration 2m --churn 0
//	go run ./examples/lock check --nodes 3 --resets 1 --json > report.json
//	go run ./examples/lock trace show report.json
//	go run ./examples/lock node --id 1 --listen 127.0.0.1:7001 --http 127.0.0.1:8001
package main

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/cli"
	"github.com/seed6eee2ec7/crystalball/node"
)

// server is the lock server's node ID.
const server node.ID = 1

func main() {
	cli.Main(cli.Service{
		Spec: spec(), // served as "lock", the spec's name
		// Every client asks for the lock when it starts and after a reset.
		Workload: workload,
	})
}

// spec describes the lock service to the runtimes.
func spec() node.Spec {
	return node.Spec{
		Name:     "lock",
		New:      func() node.Service { return &State{} },
		Messages: []node.Message{Acquire{}, Request{}, Grant{}, Release{}},
		Properties: []node.Property{
			{Name: "MutualExclusion", Kind: node.Safety, Check: mutualExclusion},
			{Name: "ClientsServed", Kind: node.Liveness, Check: clientsServed},
		},
	}
}

// workload: every client but the server asks for the lock.
func workload(id node.ID, restart bool) []node.Message {
	if id == server {
		return nil
	}
	return []node.Message{Acquire{}}
}

// mutualExclusion: at most one node holds the lock.
func mutualExclusion(v node.View) error {
	var holders []node.ID
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.Holds {
			holders = append(holders, id)
		}
	}
	if len(holders) > 1 {
		return fmt.Errorf("%v hold the lock", holders)
	}
	return nil
}

// clientsServed: eventually no client is still waiting for the lock.
func clientsServed(v node.View) error {
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*State); ok && s.Wants {
			return fmt.Errorf("%v still waits for the lock", id)
		}
	}
	return nil
}

// Acquire is the application call that makes a client ask for the lock;
// Request, Grant and Release are the protocol's messages.
type (
	Acquire struct{}
	Request struct{}
	Grant   struct{}
	Release struct{}
)

func (Acquire) MessageType() string { return "lock.Acquire" }
func (Request) MessageType() string { return "lock.Request" }
func (Grant) MessageType() string   { return "lock.Grant" }
func (Release) MessageType() string { return "lock.Release" }

// State is a node's state: the server's holder and waiting clients, a
// client's hold. Exported fields are the node state the runtime encodes.
type State struct {
	node.NopHandlers           // Init does nothing: a node starts with nothing
	Holder           node.ID   // server: the client holding the lock (0: none)
	Waiting          []node.ID // server: clients waiting, first come first served
	Wants            bool      // client: it asked for the lock and has not got it
	Holds            bool      // client: it holds the lock
}

// String is the state on one line (trace show prints it).
func (s *State) String() string {
	return fmt.Sprintf("holder=%v waiting=%v wants=%v holds=%v", s.Holder, s.Waiting, s.Wants, s.Holds)
}

// HandleApp implements node.Service: Acquire sends a Request to the server.
func (s *State) HandleApp(env node.Env, call node.Message) {
	if _, ok := call.(Acquire); ok && !s.Holds && !s.Wants {
		s.Wants = true
		env.Send(server, Request{})
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case Request: // at the server
		if s.Holder == node.None {
			s.grant(env, from)
		} else if s.Holder != from {
			s.Waiting = append(s.Waiting, from)
		}
	case Grant: // at a client: hold the lock for a second
		s.Wants, s.Holds = false, true
		env.SetTimer("release", time.Second)
	case Release: // at the server
		if s.Holder == from {
			s.next(env)
		}
	}
}

// HandleTimer implements node.Service: a client releases the lock, or asks
// again for it.
func (s *State) HandleTimer(env node.Env, name string) {
	switch {
	case name == "release" && s.Holds:
		s.Holds = false
		env.Send(server, Release{})
	case name == "retry" && s.Wants:
		env.Send(server, Request{})
	}
}

// HandleTransportError implements node.Service: a waiting client asks
// again a second later (the server may not be up yet, or have restarted);
// the server takes the lock back from a holder whose connection broke, and
// forgets a waiting one.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if peer == server && s.Wants {
		env.SetTimer("retry", time.Second)
	}
	for i, id := range s.Waiting {
		if id == peer {
			s.Waiting = append(s.Waiting[:i:i], s.Waiting[i+1:]...)
			break
		}
	}
	if s.Holder == peer {
		s.next(env)
	}
}

// grant gives the lock to client.
func (s *State) grant(env node.Env, client node.ID) {
	s.Holder = client
	env.Send(client, Grant{})
}

// next gives the lock to the first waiting client, if any.
func (s *State) next(env node.Env) {
	s.Holder = node.None
	if len(s.Waiting) > 0 {
		client := s.Waiting[0]
		s.Waiting = s.Waiting[1:]
		s.grant(env, client)
	}
}
