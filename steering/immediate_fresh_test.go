package steering

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"go.uber.org/goleak"
)

// permit is a one-permit limiter of two nodes: n1 starts with the permit
// and lends it to n2 (Lend), giving it away before the message leaves.
// AtMostLimit counts the permits of every node the view holds.
type permit struct{ Permits int }

type permitLend struct{}

func (permitLend) MessageType() string { return "permit.Lend" }

func (s *permit) Init(env node.Env) {
	if env.Self() == 1 {
		s.Permits = 1
	}
}

func (s *permit) HandleMessage(_ node.Env, _ node.ID, msg node.Message) {
	if _, ok := msg.(permitLend); ok {
		s.Permits++
	}
}

func (s *permit) HandleTimer(node.Env, string)           {}
func (s *permit) HandleApp(node.Env, node.Message)       {}
func (s *permit) HandleTransportError(node.Env, node.ID) {}

func permitSpec() node.Spec {
	return node.Spec{
		Name:     "permit",
		New:      func() node.Service { return &permit{} },
		Messages: []node.Message{permitLend{}},
		Properties: []node.Property{node.Always("AtMostLimit", func(v node.View) error {
			total := 0
			for _, id := range v.Nodes() {
				if s, ok := v.Service(id).(*permit); ok {
					total += s.Permits
				}
			}
			if total > 1 {
				return fmt.Errorf("%d permits out, limit 1", total)
			}
			return nil
		})},
	}
}

// The borrower's view holds the lender's checkpoint (number 3) taken
// while the lender still held the permit. The Lend the lender sent after
// it gave the permit away is stamped 3 or later: it is news that the
// checkpoint is outdated, so the immediate check judges the Lend without
// the lender, and the borrower takes the permit. The same Lend stamped
// before the checkpoint (2) leaves the checkpoint the newest word of the
// lender, and the check vetoes it as exceeding the limit. This is the
// layer both shells host, so the rule is the same in each.
func TestImmediateCheckLeavesOutANeighbourHeardFromSinceItsCheckpoint(t *testing.T) {
	defer goleak.VerifyNone(t)
	spec := permitSpec()
	for _, c := range []struct {
		stamp  uint64
		vetoed bool
	}{{3, false}, {4, false}, {2, true}} {
		core, err := node.NewCore(node.CoreConfig{ID: 2, Factory: spec.New})
		if err != nil {
			t.Fatal(err)
		}
		at := time.Unix(100, 0)
		if _, err := core.Step(node.Event{Kind: node.EventInit, At: at}); err != nil {
			t.Fatal(err)
		}
		l, _ := newTestLive(t, LayerConfig{Controller: Config{Mode: Off, Spec: spec}, Immediate: true}, core)
		l.Gathered(StartSnapshot(t, spec, []node.ID{1, 2}, 2))
		ev := node.Event{Kind: node.EventMessage, At: at.Add(time.Second), From: 1, Msg: permitLend{}}
		in := &node.Envelope{From: 1, To: 2, CN: c.stamp, Msg: permitLend{}}
		v, _, err := l.Gate(ev.At, ev, in, false)
		if err != nil {
			t.Fatal(err)
		}
		if v.Handle == c.vetoed {
			t.Fatalf("Lend stamped %d: verdict %v, want vetoed %v", c.stamp, v, c.vetoed)
		}
		if st := l.Status(); st.Vetoes != map[bool]uint64{false: 0, true: 1}[c.vetoed] {
			t.Fatalf("Lend stamped %d: %d vetoes", c.stamp, st.Vetoes)
		}
		l.Stop()
	}
}
