// Package register is a replicated register whose stale read only the
// client history shows. Node 1 is the primary, node 2 its backup, nodes
// 3.. are clients. A client takes its application's calls (Write, Read)
// one at a time: it marks the operation's start (node.Invoke) when it
// sends the request and its end (node.Respond) when the reply arrives. The
// primary applies a write and acknowledges it at once, and ships its value
// to the backup every FlushEvery. The planted bug: clients read from the
// backup, so a read that starts after a write was acknowledged can return
// the value before it. The correction: clients read from the primary.
//
// No state shows the bug — the backup's value is always one the primary
// held, and no node records what a client saw — so no safety property
// over states can state it; the history property Linearizable
// (package node/linearizable, through Porcupine) does.
package register

import (
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/linearizable"
)

// The roles.
const (
	Primary node.ID = 1
	Backup  node.ID = 2
)

// FlushEvery is how often the primary ships its value to the backup;
// RetryAfter how long a client waits to send a request again after a
// transport error.
const (
	FlushEvery = 200 * time.Millisecond
	RetryAfter = 500 * time.Millisecond
)

// Write and Read are the application's calls, and the operations of the
// history; Value is a read's result.
type (
	Write struct{ V int }
	Read  struct{}
	Value struct{ V int }
)

// WriteReq, ReadReq, Ack and Reply travel between a client and a replica
// (N numbers the client's operations, so that the answer to a request
// sent twice completes nothing else); Replicate from the primary to the
// backup (Seq orders the primary's writes).
type (
	WriteReq  struct{ N, V int }
	ReadReq   struct{ N int }
	Ack       struct{ N int }
	Reply     struct{ N, V int }
	Replicate struct{ V, Seq int }
)

// MessageType implements node.Message.
func (Write) MessageType() string { return "zoo-register.Write" }

// MessageType implements node.Message.
func (Read) MessageType() string { return "zoo-register.Read" }

// MessageType implements node.Message.
func (Value) MessageType() string { return "zoo-register.Value" }

// MessageType implements node.Message.
func (WriteReq) MessageType() string { return "zoo-register.WriteReq" }

// MessageType implements node.Message.
func (ReadReq) MessageType() string { return "zoo-register.ReadReq" }

// MessageType implements node.Message.
func (Ack) MessageType() string { return "zoo-register.Ack" }

// MessageType implements node.Message.
func (Reply) MessageType() string { return "zoo-register.Reply" }

// MessageType implements node.Message.
func (Replicate) MessageType() string { return "zoo-register.Replicate" }

// Spec returns the register: with the planted bug (fixed false: reads go
// to the backup) or corrected (to the primary).
func Spec(fixed bool) node.Spec {
	return node.Spec{
		Name: "zoo-register",
		New:  func() node.Service { return &State{fixed: fixed} },
		Messages: []node.Message{Write{}, Read{}, Value{}, WriteReq{}, ReadReq{}, Ack{}, Reply{},
			Replicate{}},
		Properties: []node.Property{
			node.Always("BackupBehind", backupBehind),
			linearizable.Property("Linearizable", Model()),
		},
	}
}

// Model is the register's sequential specification: a read returns the
// latest write (0 before any). At a snapshot, the register holds the
// primary's value or the backup's (a write the primary applied may not
// have been acknowledged yet).
func Model() linearizable.Model {
	return linearizable.Register(linearizable.RegisterOps[int]{
		Write: func(op node.Message) (int, bool) {
			w, ok := op.(Write)
			return w.V, ok
		},
		Read: func(op, result node.Message) (int, bool) {
			if _, ok := op.(Read); !ok {
				return 0, false
			}
			v, _ := result.(Value)
			return v.V, true
		},
		InitFrom: func(v node.View) []int {
			var out []int
			for _, id := range []node.ID{Primary, Backup} {
				if s, ok := v.Service(id).(*State); ok {
					out = append(out, s.V)
				}
			}
			if len(out) < 2 {
				return nil // the view holds not both replicas
			}
			return out
		},
	})
}

// Workload gives each client ops alternating writes of 1, 2, … and reads;
// the replicas get none.
func Workload(ops int) func(node.ID, bool) []node.Message {
	return func(id node.ID, restart bool) []node.Message {
		if id <= Backup || restart {
			return nil
		}
		var out []node.Message
		for i := range ops {
			if i%2 == 0 {
				out = append(out, Write{V: int(id)*1000 + i/2 + 1})
			} else {
				out = append(out, Read{})
			}
		}
		return out
	}
}

// State is a node's state: a replica's value and sequence number, a
// client's queue of calls (the first is under way).
type State struct {
	V, Seq int
	// Flushed is the primary's Seq last shipped to the backup.
	Flushed int
	// Queue are a client's calls, the first under way as its operation
	// number Issued.
	Queue  []Op
	Issued int

	fixed bool
}

// Op is a queued call: a read, or a write of V.
type Op struct {
	Read bool
	V    int
}

// call is the operation as the application called it.
func (o Op) call() node.Message {
	if o.Read {
		return Read{}
	}
	return Write{V: o.V}
}

// String is the state on one line.
func (s *State) String() string {
	return fmt.Sprintf("v=%d seq=%d flushed=%d queue=%v issued=%d", s.V, s.Seq, s.Flushed, s.Queue, s.Issued)
}

// Recover implements node.Durable: a replica's value survives a restart
// (a client's queue does not: its operation under way stays open).
func (s *State) Recover(previous node.Service) {
	if p, ok := previous.(*State); ok {
		s.V, s.Seq = p.V, p.Seq
	}
}

// Init implements node.Service.
func (s *State) Init(env node.Env) {
	if env.Self() > Backup {
		s.V, s.Seq = 0, 0
	}
	if env.Self() == Primary {
		env.SetTimer("flush", FlushEvery)
	}
}

// HandleTimer implements node.Service: the primary ships a new value; a
// client sends its request again.
func (s *State) HandleTimer(env node.Env, name string) {
	if name == "retry" {
		if len(s.Queue) > 0 {
			s.send(env)
		}
		return
	}
	if s.Flushed < s.Seq {
		env.Send(Backup, Replicate{V: s.V, Seq: s.Seq})
		s.Flushed = s.Seq
	}
	env.SetTimer("flush", FlushEvery)
}

// HandleApp implements node.Service: a client queues the call and starts
// it if it is the only one.
func (s *State) HandleApp(env node.Env, call node.Message) {
	var op Op
	switch c := call.(type) {
	case Write:
		op.V = c.V
	case Read:
		op.Read = true
	default:
		return
	}
	s.Queue = append(slices.Clone(s.Queue), op)
	if len(s.Queue) == 1 {
		s.start(env)
	}
}

// start issues the client's first queued call.
func (s *State) start(env node.Env) {
	if len(s.Queue) == 0 {
		return
	}
	s.Issued++
	node.Invoke(env, s.Queue[0].call())
	s.send(env)
}

// send sends the request of the client's call under way.
func (s *State) send(env node.Env) {
	op := s.Queue[0]
	if !op.Read {
		env.Send(Primary, WriteReq{N: s.Issued, V: op.V})
		return
	}
	to := Backup // the planted bug: the nearest replica
	if s.fixed {
		to = Primary
	}
	env.Send(to, ReadReq{N: s.Issued})
}

// HandleMessage implements node.Service.
func (s *State) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case WriteReq:
		s.Seq++
		s.V = m.V
		env.Send(from, Ack{N: m.N})
	case ReadReq:
		env.Send(from, Reply{N: m.N, V: s.V})
	case Replicate:
		if m.Seq > s.Seq {
			s.V, s.Seq = m.V, m.Seq
		}
	case Ack:
		s.finish(env, m.N, nil)
	case Reply:
		s.finish(env, m.N, Value{V: m.V})
	}
}

// finish completes the client's operation under way with result and
// starts the next.
func (s *State) finish(env node.Env, n int, result node.Message) {
	if len(s.Queue) == 0 || n != s.Issued {
		return // an answer to a request sent twice
	}
	node.Respond(env, s.Queue[0].call(), result)
	s.Queue = slices.Clone(s.Queue[1:])
	s.start(env)
}

// Outstanding implements node.Client: the operation under way.
func (s *State) Outstanding(node.ID) []node.Message {
	if len(s.Queue) == 0 {
		return nil
	}
	return []node.Message{s.Queue[0].call()}
}

// HandleTransportError implements node.Service: a client whose request
// may be lost sends it again a little later (a replica that had not
// started yet, or restarted).
func (s *State) HandleTransportError(env node.Env, _ node.ID) {
	if len(s.Queue) > 0 {
		env.SetTimer("retry", RetryAfter)
	}
}

// Clone implements node.Cloner.
func (s *State) Clone() node.Service {
	c := *s
	c.Queue = slices.Clone(s.Queue)
	return &c
}

// backupBehind: the backup never holds a write the primary has not.
func backupBehind(v node.View) error {
	p, ok1 := v.Service(Primary).(*State)
	b, ok2 := v.Service(Backup).(*State)
	if ok1 && ok2 && b.Seq > p.Seq {
		return fmt.Errorf("the backup has write %d, the primary %d", b.Seq, p.Seq)
	}
	return nil
}
