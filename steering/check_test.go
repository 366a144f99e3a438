package steering_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// rotSvc is a three-node service with two ways to break its property
// NoneBad: n1 goes bad on its own timer, and n2 goes bad when it handles
// the Poison n3 sends on its timer. n2 can stop the second (drop the
// Poison) but nothing it does affects the first.
type rotSvc struct {
	Bad bool
}

type poison struct{}

func (poison) MessageType() string { return "rot.Poison" }

func (s *rotSvc) Init(env node.Env) {
	switch env.Self() {
	case 1:
		env.SetTimer("rot", time.Second)
	case 3:
		env.SetTimer("send", time.Second)
	}
}
func (s *rotSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if _, ok := msg.(poison); ok {
		s.Bad = true
	}
}
func (s *rotSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *rotSvc) HandleTransportError(env node.Env, peer node.ID) {}
func (s *rotSvc) HandleTimer(env node.Env, name string) {
	switch name {
	case "rot":
		s.Bad = true
	case "send":
		env.Send(2, poison{})
	}
}

var rotSpec = node.Spec{
	Name:     "rot",
	New:      func() node.Service { return &rotSvc{} },
	Messages: []node.Message{poison{}},
	Properties: []node.Property{node.Always("NoneBad", func(v node.View) error {
		for _, id := range v.Nodes() {
			if s, _ := v.Service(id).(*rotSvc); s != nil && s.Bad {
				return fmt.Errorf("%v is bad", id)
			}
		}
		return nil
	})},
}

// rotSnapshot is the initial state of the given rot nodes, gathered by n2
// at time at (the others of 1..3 dead).
func rotSnapshot(t *testing.T, at time.Time, ids ...node.ID) *snapshot.Snapshot {
	t.Helper()
	m, err := consequence.NewActorModel(rotSpec, consequence.ActorOptions{Nodes: []node.ID{1, 2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	s := &snapshot.Snapshot{Gatherer: 2, CN: uint64(at.Unix()), At: at}
	for _, id := range []node.ID{1, 2, 3} {
		if !slices.Contains(ids, id) {
			s.Dead = append(s.Dead, id)
			continue
		}
		st, _, _ := m.Start().NodeState(id)
		b, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatal(err)
		}
		s.Nodes = append(s.Nodes, snapshot.NodeCheckpoint{Node: id, CN: s.CN, State: b})
	}
	return s
}

var poisonFilter = steering.Filter{Kind: steering.FilterMessage, Node: 2, From: 3, Type: "rot.Poison", Break: true}

// A violation n2 can do nothing about (n1's own timer) does not make n2's
// filter for the one it can stop unhelpful: that path never meets the
// filter, so it leads to the same violation with or without it.
func TestFilterCheckIgnoresViolationsThisNodeCannotStop(t *testing.T) {
	c, err := steering.New(steering.Config{Mode: steering.Steer, Spec: rotSpec}, 2)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Round(context.Background(), rotSnapshot(t, time.Unix(100, 0), 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	var own, other bool
	for _, p := range rep.Predictions {
		switch {
		case p.Filter == nil:
			other = true
		case *p.Filter == poisonFilter:
			own = true
		}
	}
	if !own || !other {
		t.Fatalf("predictions %+v: want n1's own violation (no filter) and the Poison's (filter %v)", rep.Predictions, poisonFilter)
	}
	if !slices.Equal(rep.Installed, []steering.Filter{poisonFilter}) || rep.Unhelpful != 0 {
		t.Fatalf("installed %v, unhelpful %d; want [%v], 0", rep.Installed, rep.Unhelpful, poisonFilter)
	}
	if got := c.Intercept(node.Event{Kind: node.EventMessage, From: 3, Msg: poison{}}); got != (layer.Verdict{Break: true}) {
		t.Fatalf("the Poison from n3: %v, want drop+break (a reliable message's filter breaks its connection)", got)
	}
}

// With LastKnownFor, a member a gather could not reach enters the round at
// its last checkpoint of an earlier snapshot, while that is recent enough;
// without it (the paper's behaviour) it is left out.
func TestLastKnownMembers(t *testing.T) {
	ctx := context.Background()
	t0 := time.Unix(100, 0)
	for _, keep := range []time.Duration{0, 30 * time.Second} {
		t.Run(fmt.Sprintf("LastKnownFor=%v", keep), func(t *testing.T) {
			c, err := steering.New(steering.Config{Mode: steering.Steer, Spec: rotSpec, RoundModel: steering.RoundModel{LastKnownFor: keep}}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Round(ctx, rotSnapshot(t, t0, 1, 2, 3)); err != nil {
				t.Fatal(err)
			}
			// n3 is cut off 10 s later: only n2 is gathered.
			rep, err := c.Round(ctx, rotSnapshot(t, t0.Add(10*time.Second), 2))
			if err != nil {
				t.Fatal(err)
			}
			if keep == 0 {
				if len(rep.LastKnown) != 0 || len(rep.Installed) != 0 || !slices.Equal(rep.Members, []node.ID{2}) {
					t.Fatalf("without LastKnownFor: last known %v, members %v, installed %v", rep.LastKnown, rep.Members, rep.Installed)
				}
				return
			}
			if !slices.Equal(rep.LastKnown, []node.ID{1, 3}) || !slices.Equal(rep.Members, []node.ID{1, 2, 3}) {
				t.Fatalf("last known %v, members %v; want [n1 n3], [n1 n2 n3]", rep.LastKnown, rep.Members)
			}
			if !slices.Contains(rep.Installed, poisonFilter) {
				t.Fatalf("installed %v, want %v among them", rep.Installed, poisonFilter)
			}
			if v := c.View(); v == nil || !slices.Equal(v.Nodes(), []node.ID{1, 2, 3}) {
				t.Fatalf("the immediate check's view lacks the last known members: %v", v)
			}
			// 40 s after n3's last checkpoint, it is too old to use.
			rep, err = c.Round(ctx, rotSnapshot(t, t0.Add(40*time.Second), 2))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.LastKnown) != 0 || len(rep.Installed) != 0 {
				t.Fatalf("stale members used: last known %v, installed %v", rep.LastKnown, rep.Installed)
			}
		})
	}
	if _, err := steering.New(steering.Config{Spec: rotSpec, RoundModel: steering.RoundModel{LastKnownFor: -time.Second}}, 2); !errors.Is(err, steering.ErrInvalidConfig) {
		t.Fatalf("negative LastKnownFor: %v", err)
	}
}
