package scoreboard_test

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/examples/zoo"
	"github.com/seed6eee2ec7/crystalball/node"
)

// lockCase is a test-local zoo case: a lock server (n1) and clients that
// take the lock in turns, hold it for a second, release it and ask again a
// second later. The planted bug: the server takes the lock back from a
// holder whose connection broke and grants it to the next client, while
// the holder, whose process is up, still holds it. The twin keeps the
// holder until its Release arrives.
func lockCase() zoo.Case {
	return zoo.Case{
		Name:     "lock",
		Bug:      "the server revokes the lock when the holder's connection breaks",
		Fix:      "the server keeps the holder until it releases",
		Covers:   []string{"break"},
		Spec:     lockSpec,
		Workload: lockWorkload,
		Nodes:    4,
		Property: "MutualExclusion",
		Breaks:   6,
		Duration: 2 * time.Minute,
	}
}

const lockServer node.ID = 1

func lockSpec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-lock",
		New:      func() node.Service { return &lockState{fixed: fixed} },
		Messages: []node.Message{lockAcquire{}, lockRequest{}, lockGrant{}, lockRelease{}},
		Properties: []node.Property{
			{Name: "MutualExclusion", Kind: node.Safety, Check: lockMutex},
		},
	}
}

func lockWorkload(id node.ID, _ bool) []node.Message {
	if id == lockServer {
		return nil
	}
	return []node.Message{lockAcquire{}}
}

// lockMutex: at most one node holds the lock.
func lockMutex(v node.View) error {
	var holders []node.ID
	for _, id := range v.Nodes() {
		if s, ok := v.Service(id).(*lockState); ok && s.Holds {
			holders = append(holders, id)
		}
	}
	if len(holders) > 1 {
		return fmt.Errorf("%v hold the lock", holders)
	}
	return nil
}

type (
	lockAcquire struct{}
	lockRequest struct{}
	lockGrant   struct{}
	lockRelease struct{}
)

func (lockAcquire) MessageType() string { return "zoolock.Acquire" }
func (lockRequest) MessageType() string { return "zoolock.Request" }
func (lockGrant) MessageType() string   { return "zoolock.Grant" }
func (lockRelease) MessageType() string { return "zoolock.Release" }

// lockState is the server's holder and queue, or a client's wish and
// hold; fixed (the variant) is configuration, not state.
type lockState struct {
	Holder  node.ID
	Waiting []node.ID
	Wants   bool
	Holds   bool
	fixed   bool
}

func (s *lockState) Init(node.Env) {}

func (s *lockState) HandleApp(env node.Env, _ node.Message) { s.ask(env) }

func (s *lockState) ask(env node.Env) {
	if !s.Holds && !s.Wants {
		s.Wants = true
		env.Send(lockServer, lockRequest{})
	}
}

func (s *lockState) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case lockRequest:
		switch {
		case s.Holder == node.None:
			s.grant(env, from)
		case s.Holder != from && !containsID(s.Waiting, from):
			s.Waiting = append(s.Waiting, from)
		}
	case lockGrant:
		s.Wants, s.Holds = false, true
		env.SetTimer("release", time.Second)
	case lockRelease:
		if s.Holder == from {
			s.next(env)
		}
	}
}

func (s *lockState) HandleTimer(env node.Env, name string) {
	switch {
	case name == "release" && s.Holds:
		s.Holds = false
		env.Send(lockServer, lockRelease{})
		env.SetTimer("again", time.Second)
	case name == "again":
		s.ask(env)
	case name == "retry" && s.Wants:
		env.Send(lockServer, lockRequest{})
	}
}

func (s *lockState) HandleTransportError(env node.Env, peer node.ID) {
	if peer == lockServer && s.Wants {
		env.SetTimer("retry", 500*time.Millisecond)
	}
	if s.Holder == peer && !s.fixed {
		s.next(env) // the planted bug: a broken connection is not a released lock
	}
}

func (s *lockState) grant(env node.Env, c node.ID) {
	s.Holder = c
	env.Send(c, lockGrant{})
}

func (s *lockState) next(env node.Env) {
	s.Holder = node.None
	if len(s.Waiting) > 0 {
		c := s.Waiting[0]
		s.Waiting = s.Waiting[1:]
		s.grant(env, c)
	}
}

func containsID(ids []node.ID, id node.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}
