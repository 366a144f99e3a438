package paxos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/nodetest"
)

// harnessConfig returns the nodetest hooks for Paxos, with options of its
// own so that one script's options never reach the next. Scripts inject
// bugs by name (options bug1, bug2, all), run the Propose call as
// "app ID propose VALUE", and predict with "explore" (see explore).
func harnessConfig() nodetest.Config {
	var opts Options
	return nodetest.Config{
		Spec: func() node.Spec { return NewSpec(opts) },
		Options: func(args []string) (string, error) {
			for _, a := range args {
				if err := opts.EnableBug(a); err != nil {
					return "", err
				}
			}
			return opts.String(), nil
		},
		App: func(_ node.ID, args []string) (node.Message, error) {
			if len(args) != 2 || args[0] != "propose" {
				return nil, errors.New("paxos: usage: app ID propose VALUE")
			}
			return Propose{Value: strings.Trim(args[1], `"`)}, nil
		},
		Commands: map[string]nodetest.Command{
			"explore": func(h *nodetest.Harness, args []string, out io.Writer) error {
				return explore(NewSpec(opts), h, args, out)
			},
		},
	}
}

// explore is the script command
//
//	explore [bfs|consequence] [depth=N] [states=N] [resets=N]
//
// CrystalBall's prediction from the scenario's current state: it
// checkpoints every node, as a gathered snapshot would, builds the actor
// model of those checkpoints and the messages in flight (with up to N
// resets injected), and searches it for a violation of OneValueChosen
// (default: consequence prediction, depth 12, 200,000 states). It prints
// the violation's depth and path (after checking that the path replays to
// it), or that there is none within the bounds; the scenario itself does
// not move. The search runs on one worker: its result is the same on any
// number, and two cost about a tenth more CPU under the race detector.
func explore(spec node.Spec, h *nodetest.Harness, args []string, out io.Writer) error {
	strategy := consequence.Consequence
	depth, states := 12, 200_000
	var faults consequence.Faults
	for _, a := range args {
		key, val, _ := strings.Cut(a, "=")
		var err error
		switch key {
		case "bfs", "consequence":
			strategy, err = consequence.ParseStrategy(key)
		case "depth":
			depth, err = strconv.Atoi(val)
		case "states":
			states, err = strconv.Atoi(val)
		case "resets":
			faults.Resets, err = strconv.Atoi(val)
		default:
			err = errors.New("usage: explore [bfs|consequence] [depth=N] [states=N] [resets=N]")
		}
		if err != nil {
			return fmt.Errorf("paxos: explore %s: %w", a, err)
		}
	}
	var cps []consequence.Checkpoint
	for _, id := range h.Nodes() {
		c, err := h.Core(id)
		if err != nil {
			return err
		}
		b, err := c.Checkpoint()
		if err != nil {
			return err
		}
		cps = append(cps, consequence.Checkpoint{ID: id, Bytes: b, At: c.Now()})
	}
	m, err := consequence.NewActorModelFromCheckpoints(spec, cps, h.Pending(), consequence.ActorOptions{Faults: faults})
	if err != nil {
		return err
	}
	var props []consequence.Property[*consequence.GlobalState]
	for _, p := range m.Properties() {
		if p.Name == consequence.CrashProperty || p.Name == OneValueChosen {
			props = append(props, p)
		}
	}
	res, err := consequence.NewChecker(m).
		Properties(props...).
		Strategy(strategy).
		MaxDepth(depth).
		MaxStates(states).
		StopOnViolation(true).
		Workers(1).
		Run(context.Background())
	if err != nil {
		return err
	}
	// State counts are left out: they measure the explorer, which has its
	// own benchmarks (and BenchmarkPredictFigure13), not the scenario.
	if len(res.Violations) == 0 {
		fmt.Fprintf(out, "%v: no violation up to depth %d (%v)\n", strategy, res.Depth, res.Stop)
		return nil
	}
	v := res.Violations[0]
	end, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, v.Start, v.Path)
	if err != nil {
		return err
	}
	if end.Fingerprint() != v.Fingerprint {
		return fmt.Errorf("paxos: explore: the violation's path replays to another state")
	}
	fmt.Fprintf(out, "%v: %s violated at depth %d\n", strategy, v.Property, v.Depth)
	for _, a := range v.Path {
		fmt.Fprintf(out, "  %v\n", a.Act)
	}
	fmt.Fprintf(out, "  => %v\n", v.Err)
	return nil
}
