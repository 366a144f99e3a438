// Package svc is a fixture for package mutate's tests: a tiny service
// with one site of every operator. It is never built.
package svc

type state struct {
	Term, Voted int
	Peers       []int
	Pending     map[int]bool
}

func (s *state) Init(env Env) {
	s.Term = s.Term + 1
	env.SetTimer("tick", 1)
}

func (s *state) HandleMessage(env Env, from int, msg any) {
	if s.Term < from {
		s.Voted = from
		s.Term++
	}
	env.Send(from, msg)
	s.note(from)
}

func (s *state) HandleTransportError(env Env, peer int) {
	delete(s.Pending, peer)
	s.Peers = nil
}

func (s *state) Recover(previous any) {
	p := previous.(*state)
	s.Term = p.Term
}

// note is handler code: HandleMessage calls it.
func (s *state) note(from int) { s.Voted = from }

// check is a property's: never mutated.
func check(s *state) bool { return s.Term >= 0 }

var props = []Property{{Name: "P", Check: check}}
