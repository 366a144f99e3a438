package emulation_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// lendSvc holds permits: each node starts with one, and at 5 s n1 lends
// its own to n2, which may hold one at most (OneEach). Each node records
// the peers whose connection it saw break.
type lendSvc struct {
	Permits int
	Broken  []node.ID
}

type lendMsg struct{}

func (lendMsg) MessageType() string { return "lend.Lend" }

func (s *lendSvc) Init(env node.Env) {
	s.Permits = 1
	if env.Self() == 1 {
		env.SetTimer("lend", 5*time.Second)
	}
}
func (s *lendSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) { s.Permits++ }
func (s *lendSvc) HandleTimer(env node.Env, name string)                      { s.Permits--; env.Send(2, lendMsg{}) }
func (s *lendSvc) HandleApp(env node.Env, call node.Message)                  {}
func (s *lendSvc) HandleTransportError(env node.Env, peer node.ID)            { s.Broken = append(s.Broken, peer) }
func (s *lendSvc) Neighbors(self node.ID) []node.ID                           { return []node.ID{3 - self} }

func lendSpec(lossy bool) node.Spec {
	spec := node.Spec{
		Name:     "lend",
		New:      func() node.Service { return &lendSvc{} },
		Messages: []node.Message{lendMsg{}},
		Properties: []node.Property{node.Always("OneEach", func(v node.View) error {
			for _, id := range v.Nodes() {
				if s, ok := v.Service(id).(*lendSvc); ok && s.Permits > 1 {
					return fmt.Errorf("%v holds %d permits", id, s.Permits)
				}
			}
			return nil
		})},
	}
	if lossy {
		spec.Delivery.All = node.Delivery{Lost: true}
	}
	return spec
}

// A veto of a message on a connection is a broken connection both ends'
// services see: n2's immediate check vetoes the Lend (n2 would hold two
// permits), the connection breaks, and both
// n1's and n2's transport-error handlers run, so each side's own recovery
// starts. A message the service declares lossy is dropped alone: losing
// it is a fault the protocol handles, and neither service is told.
func TestVetoBreaksTheConnectionForBothServices(t *testing.T) {
	for _, lossy := range []bool{false, true} {
		cfg := emulation.Config{Spec: lendSpec(lossy), Nodes: 2, Seed: 1, Duration: 10 * time.Second, StartSpread: time.Millisecond,
			Snapshots: &emulation.SnapshotConfig{Manager: snapshot.Config{GatherConfig: snapshot.GatherConfig{GatherInterval: time.Second}}},
			Steering:  &emulation.SteeringConfig{Controller: steering.Config{Mode: steering.Off}, Immediate: true}}
		e, err := emulation.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if r.Steering == nil || r.Steering.Vetoes != 1 {
			t.Fatalf("lossy %v: steering %+v, want one veto", lossy, r.Steering)
		}
		for _, p := range r.Safety {
			if p.ViolatedStates != 0 {
				t.Fatalf("lossy %v: %s violated in %d states", lossy, p.Name, p.ViolatedStates)
			}
		}
		n1, n2 := e.Core(1).Service().(*lendSvc), e.Core(2).Service().(*lendSvc)
		want1, want2 := []node.ID{2}, []node.ID{1}
		if lossy {
			want1, want2 = nil, nil
		}
		if fmt.Sprint(n1.Broken) != fmt.Sprint(want1) || fmt.Sprint(n2.Broken) != fmt.Sprint(want2) || n2.Permits != 1 {
			t.Fatalf("lossy %v: n1 saw breaks %v, n2 %v (permits %d); want %v and %v, n2 with its one permit",
				lossy, n1.Broken, n2.Broken, n2.Permits, want1, want2)
		}
	}
}
