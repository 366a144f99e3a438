package livenode_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/livenode"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// deadline bounds every wait of these tests.
const deadline = 30 * time.Second

// TestNewRefusesInvalidConfig: every part of Config is validated, and the
// error says which part, wrapping ErrInvalidConfig.
func TestNewRefusesInvalidConfig(t *testing.T) {
	snaps := &snapshot.Config{}
	for name, c := range map[string]struct {
		cfg  livenode.Config
		want string
	}{
		"runtime":            {livenode.Config{Runtime: live.RuntimeConfig{ID: 1, Listen: "nonsense"}}, "RuntimeConfig.Listen"},
		"no ID":              {livenode.Config{}, "RuntimeConfig.ID"},
		"snapshots":          {livenode.Config{Runtime: live.RuntimeConfig{ID: 1}, Snapshots: &snapshot.Config{Interval: -time.Second}}, "Snapshots: "},
		"steering, no snaps": {livenode.Config{Runtime: live.RuntimeConfig{ID: 1}, Steering: &steering.LayerConfig{}}, "Steering needs Snapshots"},
		"steering":           {livenode.Config{Runtime: live.RuntimeConfig{ID: 1}, Snapshots: snaps, Steering: &steering.LayerConfig{ImmediateMemory: -1}}, "Steering: "},
		"caller's nil layer": {livenode.Config{Runtime: live.RuntimeConfig{ID: 1, Layers: []layer.Layer{nil}}, Snapshots: snaps}, "RuntimeConfig.Layers[1] is nil"},
	} {
		_, err := livenode.New(budgetSpec(), c.cfg)
		if !errors.Is(err, livenode.ErrInvalidConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalidConfig saying %q", name, err, c.want)
		}
	}
}

// TestNewFillsWhatALiveNodeFills: a snapshot manager without a Registry
// takes the service's, and a steering layer without Spec and Runner (both
// required by steering.NewLayer in mode Steer) takes the node's spec and a
// live round runner; the node runs.
func TestNewFillsWhatALiveNodeFills(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) }) // after the nodes' own cleanups
	n, err := livenode.New(budgetSpec(), livenode.Config{
		Runtime:   live.RuntimeConfig{ID: 1},
		Snapshots: &snapshot.Config{},
		Steering:  &steering.LayerConfig{Controller: steering.Config{Mode: steering.Steer}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n.Snapshots() == nil || n.Steering() == nil || n.Runtime() == nil {
		t.Fatalf("parts: snapshots %v, steering %v, runtime %v", n.Snapshots(), n.Steering(), n.Runtime())
	}
	if got := n.Steering().Status().Mode; got != "steer" {
		t.Errorf("steering mode %q", got)
	}
	start(t, n)
	if err := n.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n.Runtime().Status().Running {
		t.Error("running after Stop")
	}
}

// TestPlainNode: DefaultConfig, without Snapshots and Steering, is a plain
// runtime, and Calls still run.
func TestPlainNode(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) }) // after the nodes' own cleanups
	cfg := livenode.DefaultConfig()
	cfg.Runtime.ID = 1
	cfg.Calls = func(node.ID, []node.ID) []node.Message { return []node.Message{Spend{4}, Spend{4}, Spend{4}} }
	n, err := livenode.New(budgetSpec(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n.Snapshots() != nil || n.Steering() != nil {
		t.Fatal("layers without asking for them")
	}
	start(t, n)
	// Nothing steers: the third call breaks the budget.
	waitFor(t, "spent=12", func() bool { return n.Runtime().Status().Summary == "spent=12" })
}

// TestCallsSeeTheBootstrap: Calls runs once the node started, with the
// node's ID and the IDs behind Runtime.Join.
func TestCallsSeeTheBootstrap(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) }) // after the nodes' own cleanups
	type seen struct {
		self      node.ID
		bootstrap []node.ID
	}
	var mu sync.Mutex
	var got []seen
	calls := func(self node.ID, bootstrap []node.ID) []node.Message {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{self, slices.Clone(bootstrap)})
		return []node.Message{Spend{int(self)}}
	}
	n1 := newNode(t, livenode.Config{Runtime: live.RuntimeConfig{ID: 1}, Calls: calls})
	start(t, n1)
	n2 := newNode(t, livenode.Config{Runtime: live.RuntimeConfig{ID: 2, Join: []string{n1.Runtime().Addr()}}, Calls: calls})
	start(t, n2)
	mu.Lock()
	if len(got) != 2 || got[0].self != 1 || len(got[0].bootstrap) != 0 || got[1].self != 2 || !slices.Equal(got[1].bootstrap, []node.ID{1}) {
		t.Errorf("Calls saw %+v, want node 1 with no bootstrap, then node 2 with [n1]", got)
	}
	mu.Unlock()
	waitFor(t, "n2 spent=2", func() bool { return n2.Runtime().Status().Summary == "spent=2" })
}

// TestCallersLayersRunAfterSteering: the caller's layers (Runtime.Layers)
// come after the snapshot manager and the steering layer, so they see only
// the events steering lets through; the caller's slice is not changed.
func TestCallersLayersRunAfterSteering(t *testing.T) {
	t.Cleanup(func() { livetest.VerifyNone(t) }) // after the nodes' own cleanups
	rec := &callRecorder{}
	mine := []layer.Layer{rec}
	n := newNode(t, livenode.Config{
		Runtime:   live.RuntimeConfig{ID: 1, Layers: mine},
		Snapshots: &snapshot.Config{},
		Steering:  &steering.LayerConfig{Immediate: true},
		Calls:     func(node.ID, []node.ID) []node.Message { return []node.Message{Spend{4}, Spend{4}, Spend{4}} },
	})
	if len(mine) != 1 || mine[0] != rec {
		t.Fatalf("the caller's layers became %v", mine)
	}
	start(t, n)
	waitFor(t, "a veto", func() bool { return n.Steering().Stats().Vetoes > 0 })
	if got := n.Runtime().Status().Summary; got != "spent=8" {
		t.Errorf("summary %q, want spent=8", got)
	}
	if calls := rec.calls(); !slices.Equal(calls, []node.Message{Spend{4}, Spend{4}}) {
		t.Errorf("the caller's layer saw the calls %v, want the two steering let through", calls)
	}
}

// callRecorder is a layer of the caller's that records the application
// calls it is shown.
type callRecorder struct {
	mu   sync.Mutex
	seen []node.Message
}

func (r *callRecorder) Messages() []node.Message                { return nil }
func (r *callRecorder) Attach(layer.Host) error                 { return nil }
func (r *callRecorder) Start(time.Time) []node.Envelope         { return nil }
func (r *callRecorder) Sending(time.Time, *node.Envelope)       {}
func (r *callRecorder) After(time.Time) []node.Envelope         { return nil }
func (r *callRecorder) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }
func (r *callRecorder) NextTick() time.Time                     { return time.Time{} }

func (r *callRecorder) Before(_ time.Time, ev node.Event, _ *node.Envelope) (bool, []node.Envelope, error) {
	if ev.Kind == node.EventApp {
		r.mu.Lock()
		r.seen = append(r.seen, ev.Msg)
		r.mu.Unlock()
	}
	return true, nil, nil
}

func (r *callRecorder) calls() []node.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

// newNode builds a node of the budget service.
func newNode(t *testing.T, cfg livenode.Config) *livenode.Node {
	t.Helper()
	n, err := livenode.New(budgetSpec(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// start starts n and stops it when the test ends.
func start(t *testing.T, n *livenode.Node) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), deadline)
		defer cancel()
		if err := n.Stop(ctx); err != nil {
			t.Error(err)
		}
	})
}

// waitFor waits until cond holds, failing t after deadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(deadline); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("no %s within %v", what, deadline)
		}
	}
}
