package consequence_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
)

// tally is the determinism check's service: on its timer a node tells
// each peer how many tells it has heard; a node counts what it hears by
// sender. Its faults make a handler's outcome depend on something besides
// its encoded state and the event.
type tally struct {
	node.NopHandlers
	Heard  map[node.ID]int
	Stamp  int64
	Rounds int

	fault string
}

type tell struct{ N int }

func (tell) MessageType() string { return "tally.Tell" }

func (s *tally) Init(env node.Env) {
	s.Heard = map[node.ID]int{}
	env.SetTimer("tell", time.Second)
}

func (s *tally) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	s.Heard[from] += msg.(tell).N
	if s.fault == "wallclock" {
		s.Stamp = time.Now().UnixNano() // the fault: env.Now() is the event's time
	}
}

func (s *tally) HandleTimer(env node.Env, _ string) {
	if s.Rounds < 2 {
		s.Rounds++
		env.SetTimer("tell", time.Second)
	}
	if s.fault == "maporder" {
		for id := range s.Heard { // the fault: Go's map order is random
			env.Send(id, tell{N: s.Rounds})
		}
	}
	for id := node.ID(1); id <= 3; id++ {
		if id != env.Self() {
			env.Send(id, tell{N: s.Rounds})
		}
	}
}

func (s *tally) Clone() node.Service {
	c := *s
	if s.fault == "sharedmap" {
		return &c // the fault: the copy writes into the original's map
	}
	c.Heard = make(map[node.ID]int, len(s.Heard))
	for k, v := range s.Heard {
		c.Heard[k] = v
	}
	return &c
}

func tallyModel(t *testing.T, fault string, every int) *consequence.ActorModel {
	t.Helper()
	spec := node.Spec{Name: "tally", New: func() node.Service { return &tally{fault: fault} }, Messages: []node.Message{tell{}}}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 3, Determinism: consequence.DeterminismCheck{Every: every}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func searchTally(m *consequence.ActorModel) (*consequence.Result[*consequence.GlobalState, consequence.ActorAction], error) {
	// One worker: a Clone that shares memory is a data race otherwise.
	return consequence.NewChecker[*consequence.GlobalState, consequence.ActorAction](m).
		WithOptions(consequence.Options{Workers: 1, MaxDepth: 7}).Run(context.Background())
}

func TestDeterminismCheckStopsAtANonDeterministicService(t *testing.T) {
	cases := []struct{ fault, want string }{
		{"wallclock", "the states reached differ: state.Stamp: "},
		{"maporder", "the messages it sent differ"},
		{"sharedmap", "changed the state it was copied from (state.Heard["},
	}
	for _, c := range cases {
		t.Run(c.fault, func(t *testing.T) {
			_, err := searchTally(tallyModel(t, c.fault, consequence.DefaultVerifyEvery))
			if !errors.Is(err, consequence.ErrNotDeterministic) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("fault %s: %v\nwant ErrNotDeterministic with %q", c.fault, err, c.want)
			}
		})
	}
}

// The check changes nothing a search of a deterministic service finds:
// checking every transition gives the states of checking none.
func TestDeterminismCheckLeavesADeterministicSearchAlone(t *testing.T) {
	off, err := searchTally(tallyModel(t, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	on, err := searchTally(tallyModel(t, "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if off.Unique != on.Unique || off.Generated != on.Generated || off.Unique < 100 {
		t.Fatalf("checked every transition: %d unique, %d generated; unchecked: %d, %d", on.Unique, on.Generated, off.Unique, off.Generated)
	}
	if _, err := tallyModel(t, "", 0).WithDeterminismCheck(-1); !errors.Is(err, consequence.ErrActorModel) {
		t.Fatalf("a negative rate: %v", err)
	}
}
