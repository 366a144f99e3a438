package live

import (
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// roundHost is the layer.RuntimeHost of a runtime that is not there: the
// test goroutine plays the core goroutine and calls the hooks itself.
type roundHost struct {
	core *node.Core
	woke chan struct{}
}

func (h *roundHost) ID() node.ID                 { return h.core.ID() }
func (h *roundHost) Checkpoint() ([]byte, error) { return h.core.Checkpoint() }
func (h *roundHost) Service() node.Service       { return h.core.Service() }
func (h *roundHost) Core() *node.Core            { return h.core }
func (h *roundHost) Wake() {
	select {
	case h.woke <- struct{}{}:
	default:
	}
}

// blockSvc is a service with an endless state space (a counter its timer
// bumps forever) whose timer handler blocks, the first time, until the
// test releases it: it holds a round inside Explore.
type blockSvc struct{ N int }

var blockEntered, blockRelease chan struct{}

func (s *blockSvc) Init(env node.Env) { env.SetTimer("tick", time.Second) }
func (s *blockSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
}
func (s *blockSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *blockSvc) HandleTransportError(env node.Env, peer node.ID) {}
func (s *blockSvc) HandleTimer(env node.Env, name string) {
	select {
	case blockEntered <- struct{}{}:
	default:
	}
	<-blockRelease
	s.N++
	env.SetTimer("tick", time.Second)
}

// awaitRound waits (a hang guard, not a timing assertion) for the runner
// to hand a round back and wake the host, then applies it as the pipeline
// would.
func awaitRound(t *testing.T, l *steering.Layer, h *roundHost) {
	t.Helper()
	select {
	case <-h.woke:
	case <-time.After(30 * time.Second):
		t.Fatal("no round result")
	}
	if _, err := l.Tick(time.Now()); err != nil {
		t.Fatal(err)
	}
}

// TestRoundRunnerNewerSnapshotCancelsRound: with the live shell's runner,
// a snapshot that arrives while a round explores cancels it; the next round
// starts from the newest snapshot (the one in between is skipped); a
// cancelled round is reported as such; Stop ends a running round and the
// goroutine.
func TestRoundRunnerNewerSnapshotCancelsRound(t *testing.T) {
	defer livetest.VerifyNone(t)
	blockEntered, blockRelease = make(chan struct{}, 1), make(chan struct{})
	spec := node.Spec{Name: "block", New: func() node.Service { return &blockSvc{} },
		Properties: []node.Property{{Name: "Small", Kind: node.Safety, Check: func(node.View) error { return nil }}}}
	core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: time.Unix(100, 0)}); err != nil {
		t.Fatal(err)
	}
	cp, err := core.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	snap := func(cn uint64) *snapshot.Snapshot {
		return &snapshot.Snapshot{Gatherer: 1, CN: cn, At: time.Unix(100, 0), Nodes: []snapshot.NodeCheckpoint{{Node: 1, CN: cn, State: cp}}}
	}
	var completed []uint64
	runner := NewRoundRunner()
	l, err := steering.NewLayer(steering.LayerConfig{Controller: steering.Config{Mode: steering.Debug, Spec: spec, SearchBudget: steering.SearchBudget{MaxStates: 500}}, Runner: runner,
		OnRound: func(s *snapshot.Snapshot, _ *steering.RoundReport) { completed = append(completed, s.CN) }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &roundHost{core: core, woke: make(chan struct{}, 16)}
	if err := l.Attach(h); err != nil {
		t.Fatal(err)
	}
	l.Start(time.Now())
	t.Cleanup(l.Stop)

	l.Gathered(snap(1))
	<-blockEntered // round 1 is exploring
	if !l.Status().Running {
		t.Fatal("status does not show the running round")
	}
	l.Gathered(snap(2))
	l.Gathered(snap(3)) // replaces 2 before any round took it
	close(blockRelease)
	awaitRound(t, l, h) // round 1, cancelled
	for l.Status().Rounds < 2 || l.Status().Running {
		awaitRound(t, l, h)
	}
	st := l.Status()
	if st.RoundsCanceled != 1 || st.SnapshotsSkipped != 1 || st.LastRoundCN != 3 || st.RoundErrors != 0 {
		t.Fatalf("status %+v", st)
	}
	if !slices.Equal(completed, []uint64{3}) {
		t.Fatalf("OnRound saw cuts %v, want [3]", completed)
	}
	if st.ExplorationSeconds < st.LastRoundSeconds || st.LastRound == nil {
		t.Fatalf("round times %+v", st)
	}

	// Stop in the middle of a round: it is cancelled and the goroutine
	// ends (goleak). The snapshot holds a new state: one of the last
	// round's state would reuse that round's outcome without exploring.
	blockEntered, blockRelease = make(chan struct{}, 1), make(chan struct{})
	core.State().Service.(*blockSvc).N = 7
	if cp, err = core.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	l.Gathered(snap(4))
	<-blockEntered
	stopped := make(chan struct{})
	go func() {
		l.Stop()
		close(stopped)
	}()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		runner.mu.Lock()
		quit := runner.quit // set with the round's cancellation, under mu
		runner.mu.Unlock()
		if quit {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Stop did not reach the runner")
		}
	}
	close(blockRelease)
	<-stopped
	if st := l.Status(); st.RoundsCanceled != 2 {
		t.Fatalf("Stop did not cancel the round: %+v", st)
	}
	l.Gathered(snap(5)) // after Stop: ignored
	if st := l.Status(); st.Running || st.SnapshotsSkipped != 1 {
		t.Fatalf("a round started after Stop: %+v", st)
	}
}
