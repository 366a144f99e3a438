package commit

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Coordinator is the node that runs the transactions; every other node is
// a participant.
const Coordinator node.ID = 1

// Timing. The coordinator begins its first transaction Pause after it
// starts and each next one Pause after the last participant acknowledged
// the decision of the one before. A participant takes PrepareTime plus up
// to PrepareJitter (drawn from its random source) to prepare before it
// votes. After a transport error the coordinator sends the decision again
// RetryAfter later, and the corrected participant asks for it RetryAfter
// later.
const (
	Pause         = time.Second
	PrepareTime   = 100 * time.Millisecond
	PrepareJitter = 400 * time.Millisecond
	RetryAfter    = time.Second
)

// DoubtBound is NoTxnInDoubt's bound: a participant that voted yes learns
// the outcome within it.
const DoubtBound = 30 * time.Second

// RefuseEvery makes a participant vote no on every transaction whose
// number it divides (a conflict the resource manager cannot take).
const RefuseEvery = 5

// LogLength is how many decisions each node keeps (the newest).
const LogLength = 4

// Options are the service's corrections (Fixes).
type Options struct {
	// AskCoordinator: a participant that voted yes and loses its
	// connection to the coordinator stays prepared and asks the coordinator
	// for the outcome (the correction), instead of aborting on its own (the
	// bug).
	AskCoordinator bool
}

// Fixes are the service's corrections, for --fix.
var Fixes = node.Fixes[Options]{Service: "commit", List: []node.Fix[Options]{
	{Name: "ask-coordinator", Field: func(o *Options) *bool { return &o.AskCoordinator }},
}}

// Messages: the coordinator's Prepare and Decision of transaction Txn, the
// participants' Vote and Ack, and the corrected participant's Status
// (what was decided?).
type (
	Prepare struct{ Txn uint64 }
	Vote    struct {
		Txn uint64
		Yes bool
	}
	Decision struct {
		Txn    uint64
		Commit bool
	}
	Ack    struct{ Txn uint64 }
	Status struct{ Txn uint64 }
)

// MessageType implements node.Message.
func (Prepare) MessageType() string { return "commit.Prepare" }

// MessageType implements node.Message.
func (Vote) MessageType() string { return "commit.Vote" }

// MessageType implements node.Message.
func (Decision) MessageType() string { return "commit.Decision" }

// MessageType implements node.Message.
func (Ack) MessageType() string { return "commit.Ack" }

// MessageType implements node.Message.
func (Status) MessageType() string { return "commit.Status" }

func (m Prepare) String() string  { return fmt.Sprintf("Prepare(%d)", m.Txn) }
func (m Vote) String() string     { return fmt.Sprintf("Vote(%d %v)", m.Txn, yesNo(m.Yes)) }
func (m Decision) String() string { return fmt.Sprintf("Decision(%d %s)", m.Txn, verdict(m.Commit)) }
func (m Ack) String() string      { return fmt.Sprintf("Ack(%d)", m.Txn) }
func (m Status) String() string   { return fmt.Sprintf("Status(%d)", m.Txn) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// Spec returns the commit protocol of a coordinator (node 1) and
// participants 2..n with the corrections in o (none: the planted bug).
func Spec(n int, o Options) node.Spec {
	return node.Spec{
		Name:     "commit",
		New:      func() node.Service { return &State{n: n, fixed: o.AskCoordinator} },
		Messages: []node.Message{Prepare{}, Vote{}, Decision{}, Ack{}, Status{}},
		Properties: []node.Property{
			node.Always("AgreementAtomic", agreementAtomic),
			node.Within("NoTxnInDoubt", DoubtBound, nil, noTxnInDoubt),
		},
	}
}

// Workload is the commit's: no application call (the coordinator begins
// transactions on its own).
func Workload(node.ID, bool) []node.Message { return nil }

// Phase is where the coordinator is in its current transaction.
type Phase uint8

// The phases.
const (
	Idle Phase = iota
	Voting
	Deciding
)

func (p Phase) String() string {
	switch p {
	case Idle:
		return "idle"
	case Voting:
		return "voting"
	case Deciding:
		return "deciding"
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// Outcome is a transaction's decision as a node recorded it.
type Outcome struct {
	Txn    uint64
	Commit bool
}

func (o Outcome) String() string { return fmt.Sprintf("%d:%s", o.Txn, verdict(o.Commit)) }

// verdict names a decision.
func verdict(commit bool) string {
	if commit {
		return "commit"
	}
	return "abort"
}

// State is a node's state: the coordinator's transaction, or a
// participant's vote. Everything but Votes and Acks is kept on disk
// (Recover): a restarted participant goes on preparing.
type State struct {
	node.NopHandlers

	// Coordinator: Txn is the current transaction, Phase where it is,
	// Votes the participants that voted yes and Acks those that
	// acknowledged its decision.
	Txn   uint64
	Phase Phase
	Votes []node.ID
	Acks  []node.ID
	// Preparing is the transaction a participant prepares and has not
	// voted on yet, Prepared the one it voted yes on and knows no outcome
	// of (0: none).
	Preparing uint64
	Prepared  uint64
	// Log holds the newest decisions the node knows (at most LogLength).
	Log []Outcome

	n     int
	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("txn=%d phase=%v votes=%v acks=%v preparing=%d prepared=%d log=%v", s.Txn, s.Phase, s.Votes, s.Acks, s.Preparing, s.Prepared, s.Log)
}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	c.Votes, c.Acks, c.Log = slices.Clone(s.Votes), slices.Clone(s.Acks), slices.Clone(s.Log)
	return &c
}

// Recover implements node.Durable: the transaction, the phase, the
// prepared vote and the decisions survive a crash; the votes and
// acknowledgements collected do not.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Txn, s.Phase, s.Preparing, s.Prepared, s.Log = p.Txn, p.Phase, p.Preparing, p.Prepared, slices.Clone(p.Log)
	}
}

// Neighbors implements node.Neighborer: the coordinator's are the
// participants, a participant's the coordinator.
func (s *State) Neighbors(self node.ID) []node.ID {
	if self != Coordinator {
		return []node.ID{Coordinator}
	}
	return s.participants()
}

// participants returns nodes 2..n.
func (s *State) participants() []node.ID {
	out := make([]node.ID, 0, s.n)
	for id := Coordinator + 1; id <= node.ID(s.n); id++ {
		out = append(out, id)
	}
	return out
}

// Init implements node.Service. The coordinator begins its first
// transaction Pause later; a restarted one aborts the transaction it was
// voting on (no participant can have committed it) and sends the decision
// it had made again. A restarted participant prepares again what it was
// preparing; the corrected one that recovers a yes vote asks for the
// outcome.
func (s *State) Init(env node.Env) {
	if env.Self() != Coordinator {
		if s.Preparing != 0 {
			s.prepareLater(env)
		}
		if s.fixed && s.Prepared != 0 {
			env.SetTimer("status", RetryAfter)
		}
		return
	}
	switch s.Phase {
	case Idle:
		env.SetTimer("next", Pause)
	case Voting:
		s.decide(env, false)
	case Deciding:
		s.sendDecision(env)
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case "next":
		s.begin(env)
	case "resend":
		if s.Phase == Deciding {
			s.sendDecision(env)
		}
	case "vote":
		s.castVote(env)
	case "status":
		if s.Prepared != 0 {
			env.Send(Coordinator, Status{Txn: s.Prepared})
		}
	}
}

// begin starts the next transaction: every participant is asked to
// prepare.
func (s *State) begin(env node.Env) {
	s.Txn++
	s.Phase, s.Votes, s.Acks = Voting, nil, nil
	for _, p := range s.participants() {
		env.Send(p, Prepare{Txn: s.Txn})
	}
}

// decide records the coordinator's decision and sends it to everyone.
func (s *State) decide(env node.Env, commit bool) {
	s.Phase, s.Acks = Deciding, nil
	s.record(Outcome{Txn: s.Txn, Commit: commit})
	s.sendDecision(env)
}

// sendDecision sends the current decision to the participants that have
// not acknowledged it.
func (s *State) sendDecision(env node.Env) {
	o, _ := s.outcome(s.Txn)
	for _, p := range s.participants() {
		if !slices.Contains(s.Acks, p) {
			env.Send(p, Decision{Txn: s.Txn, Commit: o.Commit})
		}
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Prepare:
		s.prepare(env, m.Txn)
	case Decision:
		if _, known := s.outcome(m.Txn); !known {
			s.record(Outcome(m))
		}
		if s.Prepared == m.Txn {
			s.Prepared = 0
			env.CancelTimer("status")
		}
		env.Send(from, Ack{Txn: m.Txn})
	case Vote:
		s.vote(env, from, m)
	case Ack:
		if s.Phase == Deciding && m.Txn == s.Txn && !slices.Contains(s.Acks, from) {
			s.Acks = append(s.Acks, from)
			if len(s.Acks) == s.n-1 {
				s.Phase = Idle
				env.SetTimer("next", Pause)
			}
		}
	case Status:
		// Undecided: the coordinator sends the decision once it has one.
		if o, known := s.outcome(m.Txn); known {
			env.Send(from, Decision{Txn: m.Txn, Commit: o.Commit})
		}
	}
}

// prepare takes a Prepare: a participant answers again what it already
// decided, and else prepares the transaction, which takes a while.
func (s *State) prepare(env node.Env, txn uint64) {
	switch o, known := s.outcome(txn); {
	case known:
		env.Send(Coordinator, Vote{Txn: txn, Yes: o.Commit})
	case txn == s.Prepared:
		env.Send(Coordinator, Vote{Txn: txn, Yes: true})
	case txn != s.Preparing:
		s.Preparing = txn
		s.prepareLater(env)
	}
}

// prepareLater arms the timer of the vote on the transaction prepared.
func (s *State) prepareLater(env node.Env) {
	env.SetTimer("vote", PrepareTime+time.Duration(env.Rand().IntN(int(PrepareJitter/time.Millisecond)))*time.Millisecond)
}

// castVote votes on the transaction prepared: no on every RefuseEvery-th
// transaction (and the participant aborts it at once) or one it already
// knows aborted, yes otherwise, after which the participant is prepared.
func (s *State) castVote(env node.Env) {
	txn := s.Preparing
	if txn == 0 {
		return
	}
	s.Preparing = 0
	if o, known := s.outcome(txn); known {
		env.Send(Coordinator, Vote{Txn: txn, Yes: o.Commit})
		return
	}
	if txn%RefuseEvery == 0 {
		s.record(Outcome{Txn: txn})
		env.Send(Coordinator, Vote{Txn: txn})
		return
	}
	s.Prepared = txn
	env.Send(Coordinator, Vote{Txn: txn, Yes: true})
}

// vote counts a participant's vote: a no aborts, yes from everyone
// commits.
func (s *State) vote(env node.Env, from node.ID, m Vote) {
	if s.Phase != Voting || m.Txn != s.Txn {
		return
	}
	if !m.Yes {
		s.decide(env, false)
		return
	}
	if !slices.Contains(s.Votes, from) {
		s.Votes = append(s.Votes, from)
	}
	if len(s.Votes) == s.n-1 {
		s.decide(env, true)
	}
}

// HandleTransportError implements node.Service. The coordinator aborts a
// transaction whose vote it may never get and sends a decision again
// RetryAfter later to a participant that may not have it. A prepared
// participant aborts on its own — the planted bug: the coordinator may
// have decided to commit, and the others commit. The corrected
// participant stays prepared and asks the coordinator for the outcome.
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if env.Self() == Coordinator {
		switch {
		case s.Phase == Voting && !slices.Contains(s.Votes, peer):
			s.decide(env, false)
		case s.Phase == Deciding && !slices.Contains(s.Acks, peer):
			env.SetTimer("resend", RetryAfter)
		}
		return
	}
	if peer != Coordinator || s.Prepared == 0 {
		return
	}
	if !s.fixed {
		s.record(Outcome{Txn: s.Prepared})
		s.Prepared = 0
		return
	}
	env.SetTimer("status", RetryAfter)
}

// outcome returns the recorded decision of txn, if the log holds one.
func (s *State) outcome(txn uint64) (Outcome, bool) {
	for _, o := range s.Log {
		if o.Txn == txn {
			return o, true
		}
	}
	return Outcome{}, false
}

// record appends a decision to the log, keeping the newest LogLength.
func (s *State) record(o Outcome) {
	s.Log = append(s.Log, o)
	if len(s.Log) > LogLength {
		s.Log = slices.Delete(s.Log, 0, len(s.Log)-LogLength)
	}
}
