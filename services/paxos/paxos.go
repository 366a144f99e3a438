package paxos

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// TimerRetry restarts a proposal that has not led to a chosen value in time.
const TimerRetry = "retry"

// Phase is where a node's proposer stands.
type Phase uint8

const (
	// PhaseIdle: no ballot under way.
	PhaseIdle Phase = iota
	// PhasePreparing: Prepare sent for Ballot, collecting Promises.
	PhasePreparing
	// PhaseAccepting: Accept sent for Ballot, waiting to learn the outcome.
	PhaseAccepting
)

// String returns "idle", "preparing" or "accepting".
func (p Phase) String() string {
	switch p {
	case PhaseIdle:
		return "idle"
	case PhasePreparing:
		return "preparing"
	case PhaseAccepting:
		return "accepting"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// Tally is a learner's count of the Learn messages for one ballot.
type Tally struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`
	Ballot   Ballot
	// Value is the value the first Learn for Ballot carried.
	Value string
	// From are the acceptors that sent it, ascending, without duplicates.
	From []node.ID
}

// State is the service state of one Paxos node, which is proposer, acceptor
// and learner at once; it implements node.Service, node.Cloner and
// node.Durable. Its exported fields are the state that is checkpointed and
// hashed. The fields marked durable are what a real node keeps on disk:
// Recover carries them across a reset (the acceptor's only when bug2 is
// off). The configuration is unexported and comes from the factory.
//
// Callers other than the runtimes (properties, the CLI) must treat a State
// they did not create as read-only.
type State struct {
	//lint:ignore U1000 msgpack reads the marker's as_array tag by reflection
	_msgpack struct{} `msgpack:",as_array"`

	// Init does nothing: a node starts (and restarts) idle, and a proposal
	// lost in a reset is the application's to resubmit (see RestartCalls).
	// HandleTransportError does nothing: lost messages cost at most a retry.
	node.NopHandlers

	// Promised is the highest ballot this acceptor promised (durable).
	Promised Ballot
	// Accepted is the ballot of the last proposal this acceptor accepted;
	// zero when none (durable).
	Accepted Ballot
	// AcceptedValue is the value accepted at Accepted (durable).
	AcceptedValue string
	// Learned is the value this learner considers chosen; empty until a
	// majority of acceptors reported accepting it at one ballot (durable:
	// a decision is recorded before it is acted upon).
	Learned string
	// Round is the highest round this node used as a proposer (durable,
	// whatever the bugs: a proposer that reused a ballot after a reset
	// could have two values accepted at one ballot, which is not one of the
	// paper's bugs).
	Round uint64

	// Proposal is the value the application asked this node to propose;
	// empty when it asked for none.
	Proposal string
	// Phase is the proposer's phase for Ballot.
	Phase Phase
	// Ballot is the proposer's current ballot; zero when idle.
	Ballot Ballot
	// Promises are the acceptors that promised Ballot, ascending (cleared
	// once the Accept is sent).
	Promises []node.ID
	// Highest is the highest accepted ballot the Promises reported, and
	// HighestValue its value: what step 3 must propose.
	Highest      Ballot
	HighestValue string
	// Last and LastValue are the accepted proposal reported by the last
	// Promise received. They are kept only with bug1, which proposes
	// LastValue instead of HighestValue.
	Last      Ballot
	LastValue string
	// Tallies count the Learn messages per ballot, ascending by ballot,
	// until a value is learned.
	Tallies []Tally

	opts Options
}

var (
	_ node.Service    = (*State)(nil)
	_ node.Cloner     = (*State)(nil)
	_ node.Neighborer = (*State)(nil)
)

// newState returns a node that has promised, accepted and learned nothing.
func newState(opts Options) *State { return &State{opts: opts} }

// Neighbors implements node.Neighborer: every other member. A Paxos node's
// safety depends on what every acceptor promised and accepted and what
// every learner learned, and it talks to all of them in every ballot, so
// its snapshot neighbourhood is the whole membership — also for a node
// that has exchanged nothing yet (Figure 13's C after its partition
// heals), which a neighbourhood of recent peers would leave alone.
func (s *State) Neighbors(self node.ID) []node.ID {
	out := make([]node.ID, 0, len(s.opts.Members))
	for _, id := range s.opts.Members {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

// Options returns the configuration the node runs with.
func (s *State) Options() Options { return s.opts }

// Clone implements node.Cloner: a deep copy sharing no memory with s.
func (s *State) Clone() node.Service {
	c := *s
	c.Promises = slices.Clone(s.Promises)
	if s.Tallies != nil {
		c.Tallies = make([]Tally, len(s.Tallies))
		for i, t := range s.Tallies {
			c.Tallies[i] = Tally{Ballot: t.Ballot, Value: t.Value, From: slices.Clone(t.From)}
		}
	}
	return &c
}

// HandleApp implements node.Service: Propose starts a ballot for the value
// (at a proposer: Options.Proposers).
func (s *State) HandleApp(env node.Env, call node.Message) {
	p, ok := call.(Propose)
	if !ok || p.Value == "" || s.Learned != "" || s.Proposal != "" || !s.opts.mayPropose(env.Self()) {
		return
	}
	s.Proposal = p.Value
	s.startBallot(env)
}

// HandleTimer implements node.Service: a proposal that has not been chosen
// in time starts over with a higher ballot.
func (s *State) HandleTimer(env node.Env, name string) {
	if name != TimerRetry || s.Learned != "" || s.Proposal == "" {
		return
	}
	s.startBallot(env)
}

// HandleMessage implements node.Service. Messages from nodes outside
// Members, and malformed ones (a ballot that is not its sender's, an empty
// value), are ignored.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if !s.opts.isMember(from) {
		return
	}
	switch m := msg.(type) {
	case Prepare:
		s.onPrepare(env, from, m)
	case Promise:
		s.onPromise(env, from, m)
	case Accept:
		s.onAccept(env, from, m)
	case Learn:
		s.onLearn(env, from, m)
	}
}

// startBallot is step 1: a fresh ballot above every round this node has
// used or seen, sent to every acceptor.
func (s *State) startBallot(env node.Env) {
	s.Round = max(s.Round, s.Promised.Round, s.Accepted.Round) + 1
	s.Ballot = Ballot{Round: s.Round, Node: env.Self()}
	s.Phase = PhasePreparing
	s.clearPromises()
	for _, to := range s.opts.Members {
		env.Send(to, Prepare{Ballot: s.Ballot})
	}
	timeout := s.opts.RetryTimeout
	env.SetTimer(TimerRetry, timeout+time.Duration(env.Rand().IntN(int(timeout))))
}

func (s *State) clearPromises() {
	s.Promises = nil
	s.Highest, s.HighestValue = Ballot{}, ""
	s.Last, s.LastValue = Ballot{}, ""
}

// onPrepare is step 2 at an acceptor: promise a ballot above every ballot
// promised before, reporting the last accepted proposal.
func (s *State) onPrepare(env node.Env, from node.ID, m Prepare) {
	if m.Ballot.Node != from || !m.Ballot.Valid() || !s.Promised.Less(m.Ballot) {
		return
	}
	s.Promised = m.Ballot
	env.Send(from, Promise{Ballot: m.Ballot, Accepted: s.Accepted, Value: s.AcceptedValue})
}

// onPromise is step 3 at the proposer: with a majority of promises, send
// Accept with the value of the highest accepted proposal reported, or the
// node's own proposal if none was.
func (s *State) onPromise(env node.Env, from node.ID, m Promise) {
	if s.Phase != PhasePreparing || m.Ballot != s.Ballot || slices.Contains(s.Promises, from) {
		return
	}
	if m.Accepted.IsZero() != (m.Value == "") {
		return // an accepted ballot without a value, or the reverse
	}
	s.Promises = insertID(s.Promises, from)
	if s.Highest.Less(m.Accepted) {
		s.Highest, s.HighestValue = m.Accepted, m.Value
	}
	if s.opts.BugLastPromise {
		s.Last, s.LastValue = m.Accepted, m.Value
	}
	if len(s.Promises) < s.opts.majority() {
		return
	}
	value := s.HighestValue
	if s.opts.BugLastPromise {
		value = s.LastValue // bug1: the last Promise, not the highest
	}
	if value == "" {
		value = s.Proposal
	}
	s.Phase = PhaseAccepting
	s.clearPromises()
	for _, to := range s.opts.Members {
		env.Send(to, Accept{Ballot: s.Ballot, Value: value})
	}
}

// onAccept is step 4 at an acceptor: accept unless it promised a higher
// ballot meanwhile, and tell every learner.
func (s *State) onAccept(env node.Env, from node.ID, m Accept) {
	if m.Ballot.Node != from || !m.Ballot.Valid() || m.Value == "" || m.Ballot.Less(s.Promised) {
		return
	}
	s.Promised = m.Ballot
	s.Accepted, s.AcceptedValue = m.Ballot, m.Value
	for _, to := range s.opts.Members {
		env.Send(to, Learn{Ballot: m.Ballot, Value: m.Value})
	}
}

// onLearn is step 5 at a learner: a value reported by a majority of
// acceptors at one ballot is chosen.
func (s *State) onLearn(env node.Env, from node.ID, m Learn) {
	if s.Learned != "" || !m.Ballot.Valid() || m.Value == "" {
		return
	}
	i, found := slices.BinarySearchFunc(s.Tallies, m.Ballot, func(t Tally, b Ballot) int { return t.Ballot.Compare(b) })
	if !found {
		s.Tallies = slices.Insert(s.Tallies, i, Tally{Ballot: m.Ballot, Value: m.Value})
	}
	t := &s.Tallies[i]
	if t.Value != m.Value || slices.Contains(t.From, from) {
		return // one ballot carries one value; a different one is malformed
	}
	t.From = insertID(t.From, from)
	if len(t.From) < s.opts.majority() {
		return
	}
	s.Learned = t.Value
	s.Tallies = nil
	s.Phase, s.Ballot = PhaseIdle, Ballot{}
	s.clearPromises()
	env.CancelTimer(TimerRetry)
}

// insertID inserts id into the ascending set ids (which must not hold it).
func insertID(ids []node.ID, id node.ID) []node.ID {
	i, _ := slices.BinarySearch(ids, id)
	return slices.Insert(ids, i, id)
}

// String renders the state for scripts and traces, e.g.
// `promised=2.n3 accepted=1.n1:"A" learned="A" round=1 proposal="A" idle`.
func (s *State) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "promised=%v accepted=%v", s.Promised, s.Accepted)
	if !s.Accepted.IsZero() {
		fmt.Fprintf(&b, ":%q", s.AcceptedValue)
	}
	learned := "-"
	if s.Learned != "" {
		learned = fmt.Sprintf("%q", s.Learned)
	}
	proposal := "-"
	if s.Proposal != "" {
		proposal = fmt.Sprintf("%q", s.Proposal)
	}
	fmt.Fprintf(&b, " learned=%s round=%d proposal=%s %v", learned, s.Round, proposal, s.Phase)
	if s.Phase != PhaseIdle {
		fmt.Fprintf(&b, " ballot=%v", s.Ballot)
	}
	if s.Phase == PhasePreparing {
		fmt.Fprintf(&b, " promises=%v", s.Promises)
	}
	for _, t := range s.Tallies {
		fmt.Fprintf(&b, " learns(%v %q)=%v", t.Ballot, t.Value, t.From)
	}
	return b.String()
}
