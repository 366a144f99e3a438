package nodetest_test

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// pinger is the harness's test service: the application asks a node to
// ping a peer, the peer answers Pong, and an unanswered ping is resent when
// the retry timer fires. It is small but exercises every input a service
// has, and retries make duplicate answers — a property violation — easy to
// script.
type pinger struct {
	Seq      int     // sequence number of the latest ping
	Waiting  node.ID // peer whose Pong is awaited, None if none
	Sent     int     // pings sent, retries included
	Answered int     // pongs that answered the awaited ping
	Stale    int     // pongs that answered nothing awaited
	Broken   []node.ID
	Ticks    int

	retry time.Duration
}

// Ping asks for a Pong with the same sequence number.
type Ping struct{ Seq int }

// Pong answers a Ping.
type Pong struct{ Seq int }

// PingCall is the application call "ping To".
type PingCall struct{ To node.ID }

func (Ping) MessageType() string     { return "ping" }
func (Pong) MessageType() string     { return "pong" }
func (PingCall) MessageType() string { return "ping-call" }
func (m Ping) String() string        { return fmt.Sprintf("Ping(%d)", m.Seq) }
func (m Pong) String() string        { return fmt.Sprintf("Pong(%d)", m.Seq) }
func (m PingCall) String() string    { return fmt.Sprintf("PingCall(%v)", m.To) }

const (
	retryTimer = "retry"
	tickTimer  = "tick"
	tickPeriod = 10 * time.Second
)

func (p *pinger) Init(env node.Env) { env.SetTimer(tickTimer, tickPeriod) }

func (p *pinger) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch m := msg.(type) {
	case Ping:
		env.Send(from, Pong(m))
	case Pong:
		if from != p.Waiting || m.Seq != p.Seq {
			p.Stale++
			return
		}
		p.Answered++
		p.Waiting = node.None
		env.CancelTimer(retryTimer)
	}
}

func (p *pinger) HandleTimer(env node.Env, name string) {
	switch name {
	case tickTimer:
		p.Ticks++
		env.SetTimer(tickTimer, tickPeriod)
	case retryTimer:
		if p.Waiting != node.None {
			p.Sent++
			env.Send(p.Waiting, Ping{Seq: p.Seq})
			env.SetTimer(retryTimer, 2*p.retry)
		}
	}
}

func (p *pinger) HandleApp(env node.Env, call node.Message) {
	c, ok := call.(PingCall)
	if !ok {
		return
	}
	p.Seq++
	p.Sent++
	p.Waiting = c.To
	env.Send(c.To, Ping{Seq: p.Seq})
	env.SetTimer(retryTimer, p.retry)
}

func (p *pinger) HandleTransportError(env node.Env, peer node.ID) {
	p.Broken = append(p.Broken, peer)
	if peer == p.Waiting {
		p.Waiting = node.None
		env.CancelTimer(retryTimer)
	}
}

// pingerProperties: one safety property that holds by construction, one
// that retries can violate, and one liveness property.
func pingerProperties() []node.Property {
	each := func(bad func(*pinger) string) func(node.View) error {
		return func(v node.View) error {
			var errs []string
			for _, id := range v.Nodes() {
				if p, ok := v.Service(id).(*pinger); ok {
					if msg := bad(p); msg != "" {
						errs = append(errs, fmt.Sprintf("%v: %s", id, msg))
					}
				}
			}
			if len(errs) > 0 {
				return errors.New(strings.Join(errs, "; "))
			}
			return nil
		}
	}
	return []node.Property{
		node.Always("AnsweredAtMostSent", each(func(p *pinger) string {
			if p.Answered > p.Sent {
				return fmt.Sprintf("answered %d > sent %d", p.Answered, p.Sent)
			}
			return ""
		})),
		node.Always("NoStalePong", each(func(p *pinger) string {
			if p.Stale > 0 {
				return fmt.Sprintf("%d stale pongs", p.Stale)
			}
			return ""
		})),
		node.Eventually("AllAnswered", each(func(p *pinger) string {
			if p.Waiting != node.None {
				return fmt.Sprintf("waiting for %v", p.Waiting)
			}
			return ""
		})),
	}
}

// pingerConfig returns a fresh harness configuration for the pinger, with
// every hook set: options (retry=DURATION), app (ping TO), a state
// description, and the command "fire-stale ID TIMER", which fires a timer
// as a shell that lost a race with its rescheduling would, so the core
// ignores it.
func pingerConfig() nodetest.Config {
	retry := time.Second
	return nodetest.Config{
		Seed: 1,
		Spec: func() node.Spec {
			return node.Spec{
				Name:       "pinger",
				New:        func() node.Service { return &pinger{retry: retry} },
				Messages:   []node.Message{Ping{}, Pong{}, PingCall{}},
				Properties: pingerProperties(),
			}
		},
		Options: func(args []string) (string, error) {
			for _, a := range args {
				val, ok := strings.CutPrefix(a, "retry=")
				if !ok {
					return "", fmt.Errorf("pinger: unknown option %q", a)
				}
				d, err := time.ParseDuration(val)
				if err != nil || d <= 0 {
					return "", fmt.Errorf("pinger: bad retry %q", val)
				}
				retry = d
			}
			return fmt.Sprintf("retry=%v", retry), nil
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			if len(args) != 2 || args[0] != "ping" {
				return nil, errors.New("pinger: usage: app ID ping TO")
			}
			to, err := node.ParseID(args[1])
			if err != nil {
				return nil, err
			}
			return PingCall{To: to}, nil
		},
		Describe: func(svc node.Service) string {
			p := svc.(*pinger)
			return fmt.Sprintf("seq=%d waiting=%v sent=%d answered=%d stale=%d broken=%v ticks=%d",
				p.Seq, p.Waiting, p.Sent, p.Answered, p.Stale, p.Broken, p.Ticks)
		},
		Commands: map[string]nodetest.Command{
			"fire-stale": func(h *nodetest.Harness, args []string, out io.Writer) error {
				if len(args) != 2 {
					return errors.New("usage: fire-stale ID TIMER")
				}
				id, err := node.ParseID(args[0])
				if err != nil {
					return err
				}
				return h.Step(id, node.Event{Kind: node.EventTimer, Timer: args[1], Deadline: h.Now().Add(time.Hour)}, out)
			},
		},
		DeliverAllLimit: 6,
	}
}
