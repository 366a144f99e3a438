package resend

import (
	"fmt"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// The two roles: Sender sends the items, Receiver applies them. Other
// nodes do nothing.
const (
	Sender   node.ID = 1
	Receiver node.ID = 2
)

// ResendAfter is how long the sender waits for an Ack before it sends the
// current item again.
const ResendAfter = 50 * time.Millisecond

// Reordered is the declared reordering bound: a message may be overtaken
// by one later message.
const Reordered = 1

// Data carries item Seq from the sender to the receiver.
type Data struct{ Seq uint64 }

// Ack acknowledges item Seq.
type Ack struct{ Seq uint64 }

// MessageType implements node.Message.
func (Data) MessageType() string { return "resend.Data" }

// MessageType implements node.Message.
func (Ack) MessageType() string { return "resend.Ack" }

// Options configure the service.
type Options struct {
	// Fixed corrects the receiver's duplicate check.
	Fixed bool
	// Items is how many items the sender sends (positive).
	Items int
	// Retries bounds the resends of one item; negative: unbounded.
	Retries int
}

// Spec returns the service with o, its messages declared unreliable.
func Spec(o Options) node.Spec {
	return node.Spec{
		Name:       "resend",
		New:        func() node.Service { return &State{opts: o} },
		Messages:   []node.Message{Data{}, Ack{}},
		Properties: []node.Property{node.Always("AppliedOnce", appliedOnce)},
		Delivery:   node.DeliverySpec{All: node.Unreliable(Reordered)},
	}
}

// State is a node's state: the sender uses Seq and Retries, the receiver
// Last and Applied.
type State struct {
	node.NopHandlers
	// Seq is the item the sender is sending (0: done, or not the sender);
	// Resent counts its resends.
	Seq, Resent uint64
	// Last is the last item the receiver applied, Max the highest, and
	// Twice the first item it applied a second time (0: none). Items
	// reach the receiver in order the first time (the sender moves on
	// only after an Ack), so every item up to Max was applied once.
	Last, Max, Twice uint64

	opts Options
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("seq=%d resent=%d last=%d max=%d twice=%d", s.Seq, s.Resent, s.Last, s.Max, s.Twice)
}

// Init implements node.Service: the sender sends item 1.
func (s *State) Init(env node.Env) {
	if env.Self() == Sender && s.opts.Items > 0 {
		s.Seq = 1
		s.send(env)
	}
}

// send sends the current item and arms the resend timer.
func (s *State) send(env node.Env) {
	env.Send(Receiver, Data{Seq: s.Seq})
	if s.opts.Retries < 0 || s.Resent < uint64(s.opts.Retries) {
		env.SetTimer("resend", ResendAfter)
	}
}

// HandleTimer implements node.Service: the current item again.
func (s *State) HandleTimer(env node.Env, name string) {
	if name == "resend" && s.Seq != 0 {
		s.Resent++
		s.send(env)
	}
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Data:
		copyOf := m.Seq == s.Last // the bug: only the last item is recognised
		if s.opts.Fixed {
			copyOf = m.Seq <= s.Last
		}
		if !copyOf {
			if m.Seq <= s.Max && s.Twice == 0 {
				s.Twice = m.Seq
			}
			s.Last, s.Max = m.Seq, max(s.Max, m.Seq)
		}
		env.Send(from, Ack(m))
	case Ack:
		if m.Seq != s.Seq {
			return // a late Ack of an earlier item
		}
		env.CancelTimer("resend")
		s.Resent = 0
		s.Seq++
		if s.Seq > uint64(s.opts.Items) {
			s.Seq = 0
			return
		}
		s.send(env)
	}
}

// appliedOnce: the receiver applied no item twice.
func appliedOnce(v node.View) error {
	r, ok := v.Service(Receiver).(*State)
	if !ok {
		return nil
	}
	if r.Twice != 0 {
		return fmt.Errorf("%v applied item %d twice", Receiver, r.Twice)
	}
	return nil
}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	return &c
}
