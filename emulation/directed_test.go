package emulation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/examples/zoo"
)

// found searches case c's planted bug as the zoo's offline check does
// and returns the first violation's actions.
func foundPath(t *testing.T, c zoo.Case) (string, []consequence.ActorAction) {
	t.Helper()
	m, err := consequence.NewActorModel(c.Spec(false), consequence.ActorOptions{N: c.Check.Nodes, Workload: c.Workload, Faults: c.Check.Faults})
	if err != nil {
		t.Fatal(err)
	}
	res, err := consequence.NewChecker(m).Properties(m.Properties()...).
		Strategy(consequence.BFS).MaxDepth(c.Check.MaxDepth).MaxStates(2_000_000).StopOnViolation(true).Run(context.Background())
	if err != nil || len(res.Violations) == 0 {
		t.Fatalf("%s: no violation found (%v)", c.Name, err)
	}
	v := res.Violations[0]
	path := make([]consequence.ActorAction, len(v.Path))
	for i, a := range v.Path {
		path[i] = a.Act
	}
	return v.Property, path
}

// replayed runs path on a fresh emulator of case c (fixed: its twin) with
// its nodes started together, as the explorer's start state has them.
func replayed(t *testing.T, c zoo.Case, fixed bool, path []consequence.ActorAction) (*emulation.Emulator, int, error) {
	t.Helper()
	e, err := emulation.New(emulation.Config{Spec: c.Spec(fixed), Nodes: c.Check.Nodes, Seed: 1, Workload: c.Workload, StartSpread: time.Nanosecond})
	if err != nil {
		t.Fatal(err)
	}
	n, err := e.ReplayPath(path, c.Check.Faults)
	return e, n, err
}

// TestReplayPathConfirmsZooBugs: every planted bug of the zoo that
// breadth-first search finds is a real one: the emulator, forced along
// the found path, takes every step and violates the same property.
func TestReplayPathConfirmsZooBugs(t *testing.T) {
	for _, c := range zoo.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			prop, path := foundPath(t, c)
			e, n, err := replayed(t, c, false, path)
			if err != nil || n != len(path) {
				t.Fatalf("replayed %d of %d steps: %v", n, len(path), err)
			}
			if violatedStates(t, e.Result(), prop) == 0 {
				t.Fatalf("the replayed path did not violate %s", prop)
			}
		})
	}
}

// TestReplayPathDiverges: a step the emulated system cannot take ends the
// replay with ErrDiverged at that step and leaves the system as it was.
func TestReplayPathDiverges(t *testing.T) {
	c := zoo.Cases()[0]
	_, path := foundPath(t, c)
	bogus := consequence.ActorAction{Kind: consequence.ActTimer, Node: path[0].Node, Timer: "no-such-timer"}
	e, n, err := replayed(t, c, false, []consequence.ActorAction{path[0], bogus, path[1]})
	if !errors.Is(err, emulation.ErrDiverged) || n != 1 {
		t.Fatalf("replay with an unset timer: %d steps, %v; want 1 step and ErrDiverged", n, err)
	}
	// The rest of the path still replays from where it stopped.
	if n, err := e.ReplayPath(path[1:], c.Check.Faults); err != nil || n != len(path)-1 {
		t.Fatalf("resumed replay: %d of %d steps, %v", n, len(path)-1, err)
	}
	// A message other than the one in flight on the connection.
	other := path[0]
	other.Msg = path[1].Msg
	if _, _, err := replayed(t, c, false, []consequence.ActorAction{other}); !errors.Is(err, emulation.ErrDiverged) {
		t.Fatalf("delivering %v: %v, want ErrDiverged", other, err)
	}
}
