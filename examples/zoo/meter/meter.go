package meter

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Server is the metering server; every other node is a metered client.
const Server node.ID = 1

// A client reports one unit of usage every ReportEvery, one report at a
// time, and sends a report again when no Ack came within ResendAfter.
const (
	ReportEvery = 500 * time.Millisecond
	ResendAfter = 300 * time.Millisecond
)

// Report is a unit of usage, number Seq of its client, sent as a datagram.
type Report struct{ Seq uint64 }

// Ack acknowledges report Seq, as a datagram.
type Ack struct{ Seq uint64 }

// MessageType implements node.Message.
func (Report) MessageType() string { return "zoo-meter.Report" }

// MessageType implements node.Message.
func (Ack) MessageType() string { return "zoo-meter.Ack" }

// Spec returns the meter: with the planted bug (fixed false: the server
// bills every report it receives) or corrected (it bills each report
// number of a client once, and acknowledges duplicates again).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name:     "zoo-meter",
		New:      func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Report{}, Ack{}},
		Properties: []node.Property{
			node.Always("NoDoubleBilling", noDoubleBilling),
			node.Eventually("ReportsAcknowledged", reportsAcknowledged),
		},
	}
}

// Workload gives no application calls: clients report on their timers.
func Workload(id node.ID, restart bool) []node.Message { return nil }

// Account is what the server has billed a client.
type Account struct {
	Client node.ID
	// Billed is the units billed; Last the highest report number billed
	// (the correction's duplicate check).
	Billed, Last uint64
}

// State is a node's state: the server's accounts, a client's reports.
// Both are on disk (Recover): billing survives crashes.
type State struct {
	// HandleApp does nothing (no calls); HandleTransportError neither:
	// datagrams break no connection.
	node.NopHandlers

	// Accounts are the server's, by client.
	Accounts []Account
	// Seq is the number of the client's latest report, Waiting whether it
	// is still unacknowledged.
	Seq     uint64
	Waiting bool

	fixed bool
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("accounts=%v seq=%d waiting=%v", s.Accounts, s.Seq, s.Waiting)
}

// Recover implements node.Durable: everything is on disk.
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.Accounts = append([]Account(nil), p.Accounts...)
		s.Seq, s.Waiting = p.Seq, p.Waiting
	}
}

// Init implements node.Service: a client starts reporting, and sends an
// unacknowledged report again.
func (s *State) Init(env node.Env) {
	if env.Self() == Server {
		return
	}
	env.SetTimer("report", ReportEvery)
	if s.Waiting {
		s.send(env)
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Report: // at the server
		a := s.account(from)
		// The bug: a report is billed whenever it arrives. A client sends
		// it again when the Ack is lost (or late), and both copies arrive.
		if !s.fixed || m.Seq > a.Last {
			a.Billed++
			a.Last = max(a.Last, m.Seq)
		}
		env.SendDatagram(from, Ack(m))
	case Ack: // at a client
		if m.Seq == s.Seq && s.Waiting {
			s.Waiting = false
			env.CancelTimer("resend")
		}
	}
}

// HandleTimer implements node.Service: a client reports its next unit, or
// sends the current report again.
func (s *State) HandleTimer(env node.Env, name string) {
	switch name {
	case "report":
		if !s.Waiting {
			s.Seq++
			s.Waiting = true
			s.send(env)
		}
		env.SetTimer("report", ReportEvery)
	case "resend":
		if s.Waiting {
			s.send(env)
		}
	}
}

// send sends the current report and arms its resend.
func (s *State) send(env node.Env) {
	env.SendDatagram(Server, Report{Seq: s.Seq})
	env.SetTimer("resend", ResendAfter)
}

// account returns the server's account of client c, opened if new.
func (s *State) account(c node.ID) *Account {
	for i := range s.Accounts {
		if s.Accounts[i].Client == c {
			return &s.Accounts[i]
		}
	}
	s.Accounts = append(s.Accounts, Account{Client: c})
	return &s.Accounts[len(s.Accounts)-1]
}

// noDoubleBilling: the server never bills a client more units than the
// client reported.
func noDoubleBilling(v node.View) error {
	srv, ok := v.Service(Server).(*State)
	if !ok {
		return nil
	}
	for _, a := range srv.Accounts {
		if c, ok := v.Service(a.Client).(*State); ok && a.Billed > c.Seq {
			return fmt.Errorf("%v is billed %d units for %d reports", a.Client, a.Billed, c.Seq)
		}
	}
	return nil
}

// reportsAcknowledged: eventually no client waits for an Ack.
func reportsAcknowledged(v node.View) error {
	for _, id := range v.Nodes() {
		if c, ok := v.Service(id).(*State); ok && id != Server && c.Waiting {
			return fmt.Errorf("%v waits for the Ack of report %d", id, c.Seq)
		}
	}
	return nil
}

// Clone implements node.Cloner: the explorer copies a state on every
// transition.
func (s *State) Clone() node.Service {
	c := *s
	c.Accounts = slices.Clone(s.Accounts)
	return &c
}
