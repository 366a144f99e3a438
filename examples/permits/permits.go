package permits

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Share is how many permits each node owns when it first starts: the
// cluster's limit is Share times the number of nodes.
const Share = 1

// Timing. A node's first job starts IdleTime + (id-1)·Stagger after it
// starts; every job holds its permits for JobLength, and the next starts
// IdleTime after. A borrower refused by every peer asks again RetryAfter
// later, as it does after a transport error, and sends its unthanked
// Returns again RetryAfter after a transport error with their lender; the
// corrected lender asks a borrower about its loans RetryAfter after a
// transport error with it.
const (
	JobLength  = 2 * time.Second
	IdleTime   = time.Second
	Stagger    = 300 * time.Millisecond
	RetryAfter = time.Second
)

// Bounds of the bounded properties: a Borrow is answered within
// AnswerBound (NoBorrowerStuck), and while every node is up every permit
// is back at a node within SettleBound (PermitsSettled).
const (
	AnswerBound = 20 * time.Second
	SettleBound = 30 * time.Second
)

// Options are the service's corrections (Fixes).
type Options struct {
	// AskBorrower: a lender that loses the connection to a borrower asks it
	// which of its loans it holds before it takes any permit back (the
	// correction), instead of taking back every loan not yet returned (the
	// bug).
	AskBorrower bool
}

// Fixes are the service's corrections, for --fix.
var Fixes = node.Fixes[Options]{Service: "permits", List: []node.Fix[Options]{
	{Name: "ask-borrower", Field: func(o *Options) *bool { return &o.AskBorrower }},
}}

// Messages. A node short of permits sends Borrow to one peer at a time;
// the peer answers Lend (a permit, its loans numbered N = 1, 2, …) or
// NoPermit. A job's end sends every borrowed permit back (Return), which
// its lender acknowledges (Thanks). The corrected lender asks a borrower
// (Query), which answers with the loans of that lender it holds (Holding).
type (
	Borrow   struct{}
	Lend     struct{ N uint64 }
	NoPermit struct{}
	Return   struct{ N uint64 }
	Thanks   struct{ N uint64 }
	Query    struct{}
	Holding  struct{ N []uint64 }
)

// MessageType implements node.Message.
func (Borrow) MessageType() string { return "permits.Borrow" }

// MessageType implements node.Message.
func (Lend) MessageType() string { return "permits.Lend" }

// MessageType implements node.Message.
func (NoPermit) MessageType() string { return "permits.NoPermit" }

// MessageType implements node.Message.
func (Return) MessageType() string { return "permits.Return" }

// MessageType implements node.Message.
func (Thanks) MessageType() string { return "permits.Thanks" }

// MessageType implements node.Message.
func (Query) MessageType() string { return "permits.Query" }

// MessageType implements node.Message.
func (Holding) MessageType() string { return "permits.Holding" }

func (Borrow) String() string    { return "Borrow" }
func (NoPermit) String() string  { return "NoPermit" }
func (Query) String() string     { return "Query" }
func (m Lend) String() string    { return fmt.Sprintf("Lend(%d)", m.N) }
func (m Return) String() string  { return fmt.Sprintf("Return(%d)", m.N) }
func (m Thanks) String() string  { return fmt.Sprintf("Thanks(%d)", m.N) }
func (m Holding) String() string { return fmt.Sprintf("Holding%v", m.N) }

// Spec returns the limiter of a cluster of nodes 1..n (limit: Share·n
// permits) with the corrections in o (none: the planted bug).
func Spec(n int, o Options) node.Spec {
	limit := Share * n
	return node.Spec{
		Name:     "permits",
		New:      func() node.Service { return &State{n: n, fixed: o.AskBorrower} },
		Messages: []node.Message{Borrow{}, Lend{}, NoPermit{}, Return{}, Thanks{}, Query{}, Holding{}},
		Properties: []node.Property{
			node.Always("AtMostLimit", func(v node.View) error { return atMostLimit(v, limit) }),
			node.Within("NoBorrowerStuck", AnswerBound, nil, noBorrowerStuck),
			node.Within("PermitsSettled", SettleBound, func(v node.View) bool { return len(v.Nodes()) == n },
				func(v node.View) error { return permitsSettled(v, limit) }),
		},
	}
}

// Workload is the limiter's: no application call (every node runs its
// jobs on its own timer).
func Workload(node.ID, bool) []node.Message { return nil }

// Need is how many permits a job of node id holds: node 1 runs the big
// jobs (two permits), the others one each, so that node 1 borrows.
func Need(id node.ID) int {
	if id == 1 {
		return 2
	}
	return 1
}

// Loan is a permit a lender gave a borrower (To) and has not had back.
type Loan struct {
	To node.ID
	N  uint64
	// InDoubt is set (by the corrected lender) once the connection to To
	// broke: the Lend, or the Return, may have been lost on the way.
	InDoubt bool
}

// Mark names a loan at its borrower: the lender and the loan's number.
type Mark struct {
	From node.ID
	N    uint64
}

// State is a node's state. Owned, Started, NextLoan, Loans, Borrowed and
// Returning are kept on disk (Recover); a reset ends the job under way.
type State struct {
	node.NopHandlers

	// Owned is how many of its own permits the node has, in use or free;
	// Borrowed are the permits it has on loan.
	Owned    int
	Borrowed []Mark
	Started  bool
	// Want is what the job waiting to start needs (0: none waits);
	// Running is set while a job holds Need permits.
	Want    int
	Running bool
	// Asking is the peer a Borrow went to and has not answered (0: none);
	// Refused are the peers that said NoPermit since the node last asked
	// everyone.
	Asking  node.ID
	Refused []node.ID
	// Returning are the loans the node gave back and was not thanked for.
	Returning []Mark
	// NextLoan numbers the lender's loans; Loans are those not yet back.
	NextLoan uint64
	Loans    []Loan

	n     int
	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("owned=%d borrowed=%v want=%d running=%v asking=%v refused=%v returning=%v loans=%v",
		s.Owned, s.Borrowed, s.Want, s.Running, s.Asking, s.Refused, s.Returning, s.Loans)
}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	c.Borrowed, c.Refused, c.Returning, c.Loans = slices.Clone(s.Borrowed), slices.Clone(s.Refused), slices.Clone(s.Returning), slices.Clone(s.Loans)
	return &c
}

// Recover implements node.Durable: the permits, the loans both ways and
// the loan numbers survive a crash; the job that ran does not.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Owned, s.Started, s.NextLoan = p.Owned, p.Started, p.NextLoan
		s.Borrowed, s.Returning, s.Loans = slices.Clone(p.Borrowed), slices.Clone(p.Returning), slices.Clone(p.Loans)
	}
}

// Neighbors implements node.Neighborer: every other node (a borrower may
// ask any of them).
func (s *State) Neighbors(self node.ID) []node.ID {
	out := make([]node.ID, 0, s.n)
	for id := node.ID(1); id <= node.ID(s.n); id++ {
		if id != self {
			out = append(out, id)
		}
	}
	return out
}

// Init implements node.Service: a node's first start gives it its Share;
// every start schedules its next job. A restarted node gives back what it
// had borrowed (its job is gone) and sends its unthanked Returns again;
// the corrected lender asks again about its loans in doubt.
func (s *State) Init(env node.Env) {
	if !s.Started {
		s.Owned, s.Started = Share, true
	}
	env.SetTimer("job", IdleTime+time.Duration(env.Self()-1)*Stagger)
	s.giveBack(env)
	s.resend(env)
	if s.fixed && slices.ContainsFunc(s.Loans, func(l Loan) bool { return l.InDoubt }) {
		env.SetTimer("query", RetryAfter)
	}
}

// HandleTimer implements node.Service.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case "job":
		s.Want = Need(env.Self())
		s.start(env)
	case "done":
		s.Running = false
		s.giveBack(env)
		env.SetTimer("job", IdleTime)
	case "retry":
		if s.Asking == node.None {
			s.start(env)
		}
	case "resend":
		s.resend(env)
	case "query":
		s.query(env)
	}
}

// start runs the waiting job if the node has enough permits, and else
// borrows one.
func (s *State) start(env node.Env) {
	if s.Want == 0 || s.Running {
		return
	}
	if s.Owned+len(s.Borrowed) >= s.Want {
		s.Want, s.Running, s.Refused = 0, true, nil
		env.SetTimer("done", JobLength)
		return
	}
	if s.Asking == node.None {
		s.borrow(env)
	}
}

// borrow asks the next peer that has not refused since the node last
// asked everyone; when all have, it asks again RetryAfter later.
func (s *State) borrow(env node.Env) {
	self := env.Self()
	for i := 1; i < s.n; i++ {
		peer := node.ID((int(self)-1+i)%s.n + 1)
		if !slices.Contains(s.Refused, peer) {
			s.Asking = peer
			env.Send(peer, Borrow{})
			return
		}
	}
	s.Refused = nil
	env.SetTimer("retry", RetryAfter)
}

// giveBack returns every borrowed permit to its lender.
func (s *State) giveBack(env node.Env) {
	for _, m := range s.Borrowed {
		env.Send(m.From, Return{N: m.N})
	}
	s.Returning = append(s.Returning, s.Borrowed...)
	s.Borrowed = nil
}

// resend sends every unthanked Return again.
func (s *State) resend(env node.Env) {
	for _, m := range s.Returning {
		env.Send(m.From, Return{N: m.N})
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Borrow:
		s.lend(env, from)
	case Lend:
		s.Borrowed = append(s.Borrowed, Mark{From: from, N: m.N})
		if s.Asking == from {
			s.Asking = node.None
		}
		s.start(env)
	case NoPermit:
		if s.Asking == from {
			s.Asking = node.None
			s.Refused = append(s.Refused, from)
			s.start(env)
		}
	case Return:
		// A Return sent again after its loan came back counts once.
		if i := s.loan(from, m.N); i >= 0 {
			s.Loans = slices.Delete(s.Loans, i, i+1)
			s.Owned++
		}
		env.Send(from, Thanks(m))
	case Thanks:
		s.Returning = slices.DeleteFunc(s.Returning, func(r Mark) bool { return r == Mark{From: from, N: m.N} })
	case Query:
		var held []uint64
		for _, b := range s.Borrowed {
			if b.From == from {
				held = append(held, b.N)
			}
		}
		env.Send(from, Holding{N: held})
	case Holding:
		s.settle(from, m.N)
	}
}

// loan returns the index of loan n to borrower, or -1.
func (s *State) loan(borrower node.ID, n uint64) int {
	return slices.IndexFunc(s.Loans, func(l Loan) bool { return l.To == borrower && l.N == n })
}

// lend gives a peer one of the node's free permits, unless the node waits
// for permits itself.
func (s *State) lend(env node.Env, to node.ID) {
	inUse := 0
	if s.Running {
		inUse = max(Need(env.Self())-len(s.Borrowed), 0)
	}
	if s.Want > 0 || s.Owned-inUse <= 0 {
		env.Send(to, NoPermit{})
		return
	}
	s.Owned--
	s.NextLoan++
	s.Loans = append(s.Loans, Loan{To: to, N: s.NextLoan})
	env.Send(to, Lend{N: s.NextLoan})
}

// HandleTransportError implements node.Service: a borrower whose Borrow
// may be lost asks again RetryAfter later, and sends its unthanked Returns
// to that peer again. A lender takes back the permits it lent the peer —
// the planted bug: it takes the broken connection for the borrower's
// crash, while the borrower, whose process is up, still holds them. The
// corrected lender marks those loans in doubt and asks the borrower which
// it holds (query).
func (s *State) HandleTransportError(env node.Env, peer node.ID) {
	if s.Asking == peer {
		s.Asking = node.None
		env.SetTimer("retry", RetryAfter)
	}
	if slices.ContainsFunc(s.Returning, func(r Mark) bool { return r.From == peer }) {
		env.SetTimer("resend", RetryAfter)
	}
	if !s.fixed {
		before := len(s.Loans)
		s.Loans = slices.DeleteFunc(s.Loans, func(l Loan) bool { return l.To == peer })
		s.Owned += before - len(s.Loans)
		return
	}
	doubt := false
	for i := range s.Loans {
		if s.Loans[i].To == peer {
			s.Loans[i].InDoubt, doubt = true, true
		}
	}
	if doubt {
		env.SetTimer("query", RetryAfter)
	}
}

// query asks every borrower with a loan in doubt which loans it holds.
func (s *State) query(env node.Env) {
	var asked []node.ID
	for _, l := range s.Loans {
		if l.InDoubt && !slices.Contains(asked, l.To) {
			asked = append(asked, l.To)
			env.Send(l.To, Query{})
		}
	}
}

// settle takes a borrower's answer: a loan in doubt it does not hold is
// back with the lender — its Lend was lost with the connection, or the
// borrower gave it back and the Return was lost (the borrower sends it
// again, which then counts for nothing). A connection is FIFO and the
// Query went after the break, so nothing of the old connection is still
// on its way. A loan made since the break stays until it comes back.
func (s *State) settle(from node.ID, held []uint64) {
	s.Loans = slices.DeleteFunc(s.Loans, func(l Loan) bool {
		if l.To != from || !l.InDoubt || slices.Contains(held, l.N) {
			return false
		}
		s.Owned++
		return true
	})
	for i := range s.Loans {
		if s.Loans[i].To == from {
			s.Loans[i].InDoubt = false
		}
	}
}
