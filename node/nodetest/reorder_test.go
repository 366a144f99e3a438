package nodetest_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// mixer sends, on the application call "send TO KIND N", a datagram
// (KIND d), a message (KIND m) or a message with TrySend (KIND t)
// carrying N: the smallest service whose channels mix them, for the
// reordering and refusal commands. Refused records what was refused.
type mixer struct{ Got, Refused []int }

type mixDatagram struct{ N int }
type mixMessage struct{ N int }
type mixCall struct {
	To       node.ID
	Datagram bool
	Try      bool
	N        int
}

func (mixDatagram) MessageType() string { return "mix-datagram" }
func (mixMessage) MessageType() string  { return "mix-message" }
func (mixCall) MessageType() string     { return "mix-call" }
func (m mixDatagram) String() string    { return fmt.Sprintf("D%d", m.N) }
func (m mixMessage) String() string     { return fmt.Sprintf("M%d", m.N) }

func (*mixer) Init(node.Env)                          {}
func (*mixer) HandleTimer(node.Env, string)           {}
func (*mixer) HandleTransportError(node.Env, node.ID) {}
func (s *mixer) HandleMessage(_ node.Env, _ node.ID, msg node.Message) {
	switch m := msg.(type) {
	case mixDatagram:
		s.Got = append(s.Got, m.N)
	case mixMessage:
		s.Got = append(s.Got, m.N)
	}
}
func (s *mixer) HandleApp(env node.Env, call node.Message) {
	c := call.(mixCall)
	switch {
	case c.Datagram:
		env.SendDatagram(c.To, mixDatagram{N: c.N})
	case c.Try:
		env.TrySend(c.To, mixMessage{N: c.N})
		env.TrySend(c.To, mixMessage{N: c.N + 1})
	default:
		env.Send(c.To, mixMessage{N: c.N})
	}
}

// HandleSendRefused arms a timer, as a service that retries would.
func (s *mixer) HandleSendRefused(env node.Env, to node.ID, msg node.Message) {
	s.Refused = append(s.Refused, msg.(mixMessage).N)
	env.SetTimer("retry", time.Second)
}

func mixerConfig() nodetest.Config {
	return nodetest.Config{
		Spec: func() node.Spec {
			return node.Spec{
				Name:     "mixer",
				New:      func() node.Service { return &mixer{} },
				Messages: []node.Message{mixDatagram{}, mixMessage{}, mixCall{}},
			}
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			var c mixCall
			var kind string
			if _, err := fmt.Sscanf(strings.Join(args, " "), "%v %s %d", new(string), &kind, &c.N); err != nil {
				return nil, err
			}
			to, err := node.ParseID(args[0])
			if err != nil {
				return nil, err
			}
			c.To, c.Datagram, c.Try = to, kind == "d", kind == "t"
			return c, nil
		},
	}
}

// TestDeliverPosition: "deliver TO FROM N" takes the N-th message of a
// channel — a datagram overtaking anything, a message overtaking only
// datagrams — and "drop TO FROM N" loses it; pending marks datagrams.
func TestDeliverPosition(t *testing.T) {
	h, err := nodetest.New(mixerConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"start n1 n2", "app n1 n2 m 1", "app n1 n2 d 2", "app n1 n2 m 3", "app n1 n2 d 4", "app n1 n2 d 5"} {
		if _, err := h.Exec(line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	steps := []struct{ line, out, err string }{
		{line: "pending", out: "n1 -> n2 M1\nn1 ~> n2 D2\nn1 -> n2 M3\nn1 ~> n2 D4\nn1 ~> n2 D5\n"},
		{line: "deliver n2 n1 4", out: "n2 <- n1 D4\n"},
		{line: "deliver n2 n1 3", err: "nodetest: deliver: message 3 from n1 to n2 (M3) would overtake the message M1"},
		{line: "drop n2 n1 4", out: "dropped n1 -> n2 D5\n"},
		{line: "deliver n2 n1 0", err: `nodetest: deliver: bad position "0": want N >= 1 (usage: deliver TO FROM [N])`},
		{line: "deliver n2 n1 4", err: "nodetest: deliver: 3 messages pending from n1 to n2; no number 4"},
		{line: "deliver n2 n1 2", out: "n2 <- n1 D2\n"},
		{line: "deliver n2 n1", out: "n2 <- n1 M1\n"},
		{line: "deliver n2 n1 1", out: "n2 <- n1 M3\n"},
		{line: "pending", out: "ok\n"},
	}
	for _, st := range steps {
		out, err := h.Exec(st.line)
		if st.err != "" {
			if err == nil || err.Error() != st.err {
				t.Errorf("%s: error %v, want %s", st.line, err, st.err)
			}
			continue
		}
		if err != nil || out != st.out {
			t.Errorf("%s: %q, %v; want %q", st.line, out, err, st.out)
		}
	}
	if got := h.Service(2).(*mixer).Got; fmt.Sprint(got) != "[4 2 1 3]" {
		t.Errorf("n2 got %v, want [4 2 1 3]", got)
	}
}

// TestRefuse: "refuse TO FROM N" takes a message sent with TrySend out of
// its channel, past anything ahead of it, and steps the sender with
// EventSendRefused; pending marks such messages with "?>" and Pending
// keeps Envelope.Refusable. A plain message, or one sent before the
// sender's latest event, cannot be refused.
func TestRefuse(t *testing.T) {
	h, err := nodetest.New(mixerConfig())
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct{ line, out, err string }{
		{line: "start n1 n2", out: "ok\n"},
		{line: "app n1 n2 m 1", out: "n1 -> n2 M1\n"},
		{line: "app n1 n2 t 2", out: "n1 ?> n2 M2\nn1 ?> n2 M3\n"},
		{line: "pending", out: "n1 -> n2 M1\nn1 ?> n2 M2\nn1 ?> n2 M3\n"},
		{line: "refuse n2 n1 1", err: "nodetest: refuse: message 1 from n1 to n2 (M1) was not sent with TrySend"},
		{line: "refuse n2 n1 4", err: "nodetest: refuse: 3 messages pending from n1 to n2; no number 4"},
		{line: "refuse n1 n2", err: "nodetest: refuse: nothing pending from n2 to n1"},
		{line: "refuse n2 n1 3", out: "refused n1 ?> n2 M3\nn1: set timer retry +1s\n"},
		// A refusal is no event of its own: M2, of the same call, may
		// still be refused.
		{line: "refuse n2 n1 2", out: "refused n1 ?> n2 M2\nn1: set timer retry +1s\n"},
		{line: "app n1 n2 t 4", out: "n1 ?> n2 M4\nn1 ?> n2 M5\n"},
		{line: "app n1 n2 m 6", out: "n1 -> n2 M6\n"},
		{line: "refuse n2 n1 2", err: "nodetest: refuse: message 2 from n1 to n2 (M4) was sent before n1's latest event: too late to refuse"},
		{line: "deliver-all", out: "n2 <- n1 M1\nn2 <- n1 M4\nn2 <- n1 M5\nn2 <- n1 M6\n"},
	}
	for _, st := range steps {
		if st.line == "deliver-all" {
			if p := h.Pending(); len(p) != 4 || !p[1].Refusable || p[0].Refusable || p[3].Refusable {
				t.Errorf("Pending() = %v, want Refusable on M4 and M5 only", p)
			}
		}
		out, err := h.Exec(st.line)
		if st.err != "" {
			if err == nil || err.Error() != st.err {
				t.Errorf("%s: error %v, want %s", st.line, err, st.err)
			}
			continue
		}
		if err != nil || out != st.out {
			t.Errorf("%s: %q, %v; want %q", st.line, out, err, st.out)
		}
	}
	m := h.Service(1).(*mixer)
	if fmt.Sprint(m.Refused) != "[3 2]" {
		t.Errorf("n1 refused %v, want [3 2]", m.Refused)
	}
	if got := h.Service(2).(*mixer).Got; fmt.Sprint(got) != "[1 4 5 6]" {
		t.Errorf("n2 got %v, want [1 4 5 6]", got)
	}
}
