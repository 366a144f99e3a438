package live_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// statesView is a node.View over service states decoded from Status.
type statesView map[node.ID]nodeStatus

type nodeStatus struct {
	state  *randtree.State
	timers map[string]time.Time
}

func (v statesView) Nodes() []node.ID {
	var ids []node.ID
	for id := range v {
		ids = append(ids, id)
	}
	for i := 1; i < len(ids); i++ {
		for j := i; j > 0 && ids[j] < ids[j-1]; j-- {
			ids[j], ids[j-1] = ids[j-1], ids[j]
		}
	}
	return ids
}
func (v statesView) Service(id node.ID) node.Service {
	if s, ok := v[id]; ok {
		return s.state
	}
	return nil
}

func (v statesView) TimerScheduled(id node.ID, name string) bool {
	_, ok := v[id].timers[name]
	return ok
}

// TestRuntimeFormsRandTree runs three live RandTree nodes on loopback
// (free ports, memberlist for discovery): they form one tree, every safety
// property holds on the final states, and stopping them leaves no
// goroutine behind.
func TestRuntimeFormsRandTree(t *testing.T) {
	defer livetest.VerifyNone(t)
	spec := randtree.NewSpec(randtree.AllFixes())
	var nodes []*live.Runtime
	defer func() {
		for _, r := range nodes {
			r.Stop(context.Background())
		}
	}()
	for id := node.ID(1); id <= 3; id++ {
		cfg := live.DefaultRuntimeConfig()
		cfg.ID = id
		cfg.Label = "randtree-test"
		cfg.Logger = zaptest.NewLogger(t).Named(id.String())
		if id > 1 {
			cfg.Join = []string{nodes[0].Addr()}
		}
		r, err := live.NewRuntime(cfg, spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, r)
		targets := r.Bootstrap()
		if id == 1 {
			targets = []node.ID{1}
		}
		if err := r.Submit(randtree.JoinOverlay{Targets: targets}); err != nil {
			t.Fatal(err)
		}
	}
	view := statesView{}
	deadline := time.Now().Add(20 * time.Second)
	for {
		for _, r := range nodes {
			st := r.Status()
			s := new(randtree.State)
			if err := json.Unmarshal(st.State, s); err != nil {
				t.Fatalf("%v: state %s: %v", r.ID(), st.State, err)
			}
			view[r.ID()] = nodeStatus{s, st.Timers}
		}
		sum := randtree.Summarize(view)
		if sum.Roots == 1 && sum.TreeSize == 3 {
			t.Logf("tree: %v", sum)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tree of 3 after 20s: %v", sum)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range spec.PropertiesOf(node.Safety) {
		if err := p.Check(view); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
	}
	st := nodes[0].Status()
	if len(st.Peers) != 2 || st.Counters.MessagesIn == 0 || st.Summary == "" || len(st.Neighbors) == 0 {
		t.Errorf("status of n1: %+v", st)
	}
	for _, r := range nodes {
		if err := r.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
