package consequence_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// The lasting faults' semantics, step by step, in datadriven scripts
// (testdata/lasting/*.txt): a script builds an actor model of pinger
// nodes and takes actions by name, printing the state after each. Its
// commands:
//
//	model nodes=N [crashes=N downtime=D] [partitions=N kinds=K length=D] [jumps=N jump=D] [datagrams]
//	actions            the enabled actions, in the model's order
//	do ACTION...       take the actions (their String), one per line; prints the state
//	view               the nodes of the state's node.View
//
// Rewrite the expected output with go test -run TestLastingScripts -rewrite.
func TestLastingScripts(t *testing.T) {
	datadriven.Walk(t, "testdata/lasting", func(t *testing.T, path string) {
		var m *consequence.ActorModel
		var g *consequence.GlobalState
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			switch d.Cmd {
			case "model":
				var err error
				if m, err = scriptModel(d); err != nil {
					return "error: " + err.Error()
				}
				g = m.Start()
				return g.String()
			case "actions":
				var out []string
				for _, a := range m.Actions(g, nil) {
					out = append(out, a.Act.String())
				}
				return strings.Join(out, "\n") + "\n"
			case "do":
				for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
					next, err := take(m, g, strings.TrimSpace(line))
					if err != nil {
						return "error: " + err.Error() + "\n"
					}
					g = next
				}
				return g.String()
			case "view":
				return fmt.Sprintln(g.Nodes())
			}
			d.Fatalf(t, "unknown command %q", d.Cmd)
			return ""
		})
	})
}

// take takes the enabled action of g named line.
func take(m *consequence.ActorModel, g *consequence.GlobalState, line string) (*consequence.GlobalState, error) {
	var names []string
	for _, a := range m.Actions(g, nil) {
		if a.Act.String() == line {
			next, ok := m.Next(g, a.Act)
			if !ok {
				return nil, fmt.Errorf("%s: listed but not enabled", line)
			}
			if next.Fingerprint() == g.Fingerprint() {
				return nil, fmt.Errorf("%s: the state did not change", line)
			}
			return next, nil
		}
		names = append(names, a.Act.String())
	}
	return nil, fmt.Errorf("%s is not enabled (enabled: %s)", line, strings.Join(names, "; "))
}

// scriptModel builds the model a script's model command describes.
func scriptModel(d *datadriven.TestData) (*consequence.ActorModel, error) {
	var f consequence.Faults
	n, datagrams := 3, false
	for _, arg := range d.CmdArgs {
		v := ""
		if len(arg.Vals) > 0 {
			v = arg.Vals[0]
		}
		var err error
		switch arg.Key {
		case "nodes":
			_, err = fmt.Sscan(v, &n)
		case "crashes":
			_, err = fmt.Sscan(v, &f.Crashes)
		case "downtime":
			f.Downtime, err = time.ParseDuration(v)
		case "partitions":
			_, err = fmt.Sscan(v, &f.Partitions)
		case "kinds":
			f.PartitionKinds, err = consequence.ParseCutKinds(v)
		case "length":
			f.PartitionLength, err = time.ParseDuration(v)
		case "jumps":
			_, err = fmt.Sscan(v, &f.ClockJumps)
		case "jump":
			f.ClockJump, err = time.ParseDuration(v)
		case "datagrams":
			datagrams = true
		default:
			err = fmt.Errorf("unknown argument %q", arg.Key)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", arg.Key, err)
		}
	}
	return consequence.NewActorModel(pingerSpec(datagrams), consequence.ActorOptions{N: n, Faults: f})
}

// pinger: every node pings every other one when its "tick" timer fires
// (every second), as a message or a datagram; it counts what it got and
// the transport errors it had, and notes its clock at its last tick.
type pinger struct {
	node.NopHandlers
	Datagrams bool
	Got       []node.ID
	Errors    []node.ID
	Tick      int64 // Env.Now at the last tick, in seconds since DefaultStart
}

type lastingPing struct {
	node.Named[lastingPing]
	From node.ID
}

func pingerSpec(datagrams bool) node.Spec {
	return node.Spec{Name: "pinger", New: func() node.Service { return &pinger{Datagrams: datagrams} }, Messages: []node.Message{lastingPing{}}}
}

func (p *pinger) Init(env node.Env) { env.SetTimer("tick", time.Second) }

func (p *pinger) HandleTimer(env node.Env, _ string) {
	p.Tick = int64(env.Now().Sub(consequence.DefaultStart) / time.Second)
	for id := node.ID(1); id <= 4; id++ {
		switch {
		case id == env.Self():
		case p.Datagrams:
			env.SendDatagram(id, lastingPing{From: env.Self()})
		default:
			env.Send(id, lastingPing{From: env.Self()})
		}
	}
	env.SetTimer("tick", time.Second)
}

func (p *pinger) HandleMessage(_ node.Env, from node.ID, _ node.Message) {
	p.Got = append(p.Got, from)
}

func (p *pinger) HandleTransportError(_ node.Env, peer node.ID) {
	p.Errors = append(p.Errors, peer)
}

func (p *pinger) Clone() node.Service {
	c := *p
	c.Got, c.Errors = slices.Clone(p.Got), slices.Clone(p.Errors)
	return &c
}

func (p *pinger) String() string {
	return fmt.Sprintf("got=%v errors=%v tick=%d", p.Got, p.Errors, p.Tick)
}

func (p lastingPing) String() string { return fmt.Sprintf("ping(%v)", p.From) }
