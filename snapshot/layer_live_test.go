package snapshot_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zaptest"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// liveNode is a RandTree runtime with a snapshot layer.
type liveNode struct {
	rt *live.Runtime
	sl *snapshot.Layer
}

func startLiveNode(t *testing.T, spec node.Spec, id node.ID, join ...string) liveNode {
	t.Helper()
	reg, err := spec.Registry()
	if err != nil {
		t.Fatal(err)
	}
	logger := zaptest.NewLogger(t).Named(id.String())
	// The gather and record timeouts are a production node's patience
	// with its peers; in a test, running out of it on a loaded machine
	// would report a live member as dead, so the test waits as long as for
	// anything else.
	cfg := snapshot.Config{Registry: reg, Interval: 300 * time.Millisecond, GatherConfig: snapshot.GatherConfig{GatherTimeout: loadDeadline, RecordTimeout: loadDeadline}}
	sl, err := snapshot.NewLayer(cfg, slog.New(zapslog.NewHandler(logger.Core())))
	if err != nil {
		t.Fatal(err)
	}
	rt := startRuntime(t, spec, id, sl, logger, join...)
	return liveNode{rt: rt, sl: sl}
}

// startRuntime starts live node id of spec hosting the snapshot layer sl,
// joined through join (none: the first node), and makes it join the
// RandTree through the bootstrap nodes the runtime knows (itself when it
// knows none). The node stops at the end of the test.
func startRuntime(t *testing.T, spec node.Spec, id node.ID, sl *snapshot.Layer, logger *zap.Logger, join ...string) *live.Runtime {
	t.Helper()
	rcfg := live.DefaultRuntimeConfig()
	rcfg.ID = id
	rcfg.Join, rcfg.JoinTimeout = join, loadDeadline
	rcfg.Label = "live-snapshot-test"
	rcfg.Logger = logger
	rcfg.Layers = []layer.Layer{sl}
	rt, err := live.NewRuntime(rcfg, spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Stop(context.Background()) })
	targets := rt.Bootstrap()
	if len(targets) == 0 {
		targets = []node.ID{id}
	}
	if err := rt.Submit(randtree.JoinOverlay{Targets: targets}); err != nil {
		t.Fatal(err)
	}
	return rt
}

// loadDeadline bounds every wait for the live nodes: generous, because a
// loaded machine (the race detector, parallel test binaries) can slow
// them tenfold, and only a hang should fail a test.
const loadDeadline = 30 * time.Second

// waitUntil polls cond until it holds, failing t after loadDeadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(loadDeadline); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", loadDeadline, what)
		}
	}
}

// gatherAt makes n gather a snapshot through Runtime.Do and waits for it.
func gatherAt(t *testing.T, n liveNode) *snapshot.Snapshot {
	t.Helper()
	prev := n.sl.Last()
	deadline := time.Now().Add(loadDeadline)
	for {
		var gerr error
		err := n.rt.Do(context.Background(), func(now time.Time) []node.Envelope {
			out, err := n.sl.Gather(now)
			gerr = err
			return out
		})
		if err != nil {
			t.Fatal(err)
		}
		if gerr == nil {
			break
		}
		if !errors.Is(gerr, snapshot.ErrGatherInProgress) || time.Now().After(deadline) {
			t.Fatalf("Gather: %v", gerr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		if s := n.sl.Last(); s != nil && s != prev {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no snapshot gathered at %v within %v: %+v", n.rt.ID(), loadDeadline, n.sl.Status(time.Now()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLiveGathersConsistentSnapshotOverTCP runs three RandTree nodes over
// real TCP with a snapshot layer each: once they form a tree, the root
// gathers a snapshot that holds a checkpoint of itself and of every
// neighbour at one cut, the safety properties hold on its view, the
// protocol traffic went over the runtime's connections, and stopping the
// nodes leaves no goroutine behind.
func TestLiveGathersConsistentSnapshotOverTCP(t *testing.T) {
	defer livetest.VerifyNone(t)
	spec := randtree.NewSpec(randtree.AllFixes())
	nodes := []liveNode{startLiveNode(t, spec, 1)}
	for id := node.ID(2); id <= 3; id++ {
		nodes = append(nodes, startLiveNode(t, spec, id, nodes[0].rt.Addr()))
	}
	root := nodes[0]
	var nbrs []node.ID
	deadline := time.Now().Add(loadDeadline)
	for {
		st := root.rt.Status()
		nbrs = st.Neighbors
		if len(nbrs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the root has neighbours %v after %v: %s", nbrs, loadDeadline, st.Summary)
		}
		time.Sleep(20 * time.Millisecond)
	}

	s := gatherAt(t, root)
	want := append([]node.ID{1}, nbrs...)
	slices.Sort(want)
	var got []node.ID
	for _, nc := range s.Nodes {
		got = append(got, nc.Node)
		if nc.CN < s.CN {
			t.Errorf("%v's checkpoint %d is below the cut %d", nc.Node, nc.CN, s.CN)
		}
	}
	if !slices.Equal(got, want) || len(s.Dead) != 0 || len(s.Excluded) != 0 {
		t.Fatalf("snapshot of %v (dead %v, excluded %v), want %v", got, s.Dead, s.Excluded, want)
	}
	if len(s.Channels) != len(want)*len(want) {
		t.Errorf("%d channels for %d nodes", len(s.Channels), len(want))
	}
	v, err := s.Decode(spec.New)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range spec.PropertiesOf(node.Safety) {
		if err := p.Check(v); err != nil {
			t.Errorf("%s on the snapshot: %v", p.Name, err)
		}
	}
	if r := v.Service(1).(*randtree.State); r.Root != 1 || len(r.Children) == 0 {
		t.Errorf("the root's checkpoint: %v", r)
	}

	st := root.sl.Status(time.Now())
	if st.CN < s.CN || st.Stats.Gathers != 1 || st.Last == nil || st.Last.CN != s.CN ||
		!slices.Equal(st.Last.Members, want) || st.Last.SizeBytes == 0 || st.CheckpointsStored == 0 {
		t.Errorf("root's snapshot status: %+v (last %+v)", st, st.Last)
	}
	for _, n := range nodes[1:] {
		if c := n.rt.Status().Counters; c.LayerMessagesIn == 0 || c.LayerMessagesOut == 0 || c.LayerBytesOut == 0 {
			t.Errorf("%v exchanged no protocol messages over TCP: %+v", n.rt.ID(), c)
		}
	}
	c := root.rt.Status().Counters
	if c.LayerBytesIn == 0 || c.LayerBytesIn >= c.BytesIn {
		t.Errorf("root's counters: %+v", c)
	}

	// The numbers advance by themselves (Interval 300ms) and a second
	// gather is of a later cut. How soon the interval fires depends on the
	// machine's load, so the test waits for the advance instead of
	// sleeping past one interval.
	waitUntil(t, "the root's checkpoint number to advance past the first cut", func() bool {
		return root.sl.Status(time.Now()).CN > s.CN
	})
	if s2 := gatherAt(t, root); s2.CN <= s.CN || len(s2.Nodes) != 3 {
		t.Errorf("second snapshot: cut %d after %d, %d nodes", s2.CN, s.CN, len(s2.Nodes))
	}
	for _, n := range nodes {
		if err := n.rt.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := root.rt.Do(context.Background(), func(time.Time) []node.Envelope { return nil }); !errors.Is(err, live.ErrNotRunning) {
		t.Errorf("Do after Stop = %v", err)
	}
}

// A Layer belongs to one runtime, and its configuration is checked when it
// is built.
func TestLiveMisuse(t *testing.T) {
	defer livetest.VerifyNone(t)
	spec := randtree.NewSpec(randtree.AllFixes())
	reg, _ := spec.Registry()
	if _, err := snapshot.NewLayer(snapshot.Config{}, nil); err == nil {
		t.Error("NewLayer without a registry succeeded")
	}
	if _, err := snapshot.NewLayer(snapshot.Config{Registry: reg, Interval: -time.Second}, nil); err == nil {
		t.Error("NewLayer with a negative interval succeeded")
	}
	sl, err := snapshot.NewLayer(snapshot.Config{Registry: reg}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sl.Gather(time.Now()); !errors.Is(err, snapshot.ErrNotAttached) {
		t.Errorf("Gather before Attach = %v", err)
	}
	if st := sl.Status(time.Now()); st.IntervalSeconds != 10 || st.Last != nil {
		t.Errorf("status before Attach: %+v", st)
	}
	cfg := live.DefaultRuntimeConfig()
	cfg.ID = 1
	cfg.Layers = []layer.Layer{sl}
	if _, err := live.NewRuntime(cfg, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := sl.Gather(time.Now()); !errors.Is(err, snapshot.ErrNotStarted) {
		t.Errorf("Gather before the runtime started = %v", err)
	}
	if _, err := live.NewRuntime(cfg, spec); !errors.Is(err, snapshot.ErrAttached) {
		t.Errorf("a second runtime with the same Layer: %v", err)
	}
}

// lockedBuffer is a log sink the core goroutine writes and the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *lockedBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestLoneSnapshotIsWarnedOnce: a node whose snapshots hold only itself
// (a RandTree root with no other node: no neighbour, no traffic) logs one
// warning saying so, not one per gather.
func TestLoneSnapshotIsWarnedOnce(t *testing.T) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	reg, err := spec.Registry()
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	cfg := snapshot.Config{Registry: reg, Interval: 100 * time.Millisecond, GatherConfig: snapshot.GatherConfig{GatherInterval: 100 * time.Millisecond, GatherTimeout: loadDeadline, RecordTimeout: loadDeadline}}
	sl, err := snapshot.NewLayer(cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	startRuntime(t, spec, 1, sl, zaptest.NewLogger(t))
	var first uint64
	waitUntil(t, "a first snapshot", func() bool {
		if s := sl.Last(); s != nil {
			first = s.CN
			return true
		}
		return false
	})
	waitUntil(t, "three more snapshots", func() bool { s := sl.Last(); return s != nil && s.CN >= first+3 })
	if n := strings.Count(logs.String(), "the snapshot holds only this node"); n != 1 {
		t.Errorf("%d warnings of a lone snapshot, want 1:\n%s", n, logs.String())
	}
}
