package snapshot_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// hookNode is one RandTree node with a snapshot.Layer in a layer.Pipeline,
// driven by hand (as a deterministic shell drives it), and the effects
// its OnEffects function saw.
type hookNode struct {
	core *node.Core
	pipe *layer.Pipeline
	sl   *snapshot.Layer
	fx   []snapshot.LayerEffects
	// onFx, when set, runs inside the OnEffects call.
	onFx func(snapshot.LayerEffects)
}

var hookT0 = time.Unix(1000, 0).UTC()

func newHookNode(t *testing.T, spec node.Spec, id node.ID) *hookNode {
	t.Helper()
	reg, err := spec.Registry()
	if err != nil {
		t.Fatal(err)
	}
	sl, err := snapshot.NewLayer(snapshot.Config{Registry: reg, Interval: time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	core, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New, Seed: uint64(id)})
	if err != nil {
		t.Fatal(err)
	}
	pipe, err := layer.NewPipeline(layer.PipelineConfig{Core: core, Layers: []layer.Layer{sl}})
	if err != nil {
		t.Fatal(err)
	}
	n := &hookNode{core: core, pipe: pipe, sl: sl}
	sl.OnEffects(func(fx snapshot.LayerEffects) {
		// The slices are the Manager's until its next call: keep copies.
		fx.Effects = snapshot.Effects{Sends: slices.Clone(fx.Effects.Sends), Taken: slices.Clone(fx.Effects.Taken),
			Snapshots: slices.Clone(fx.Effects.Snapshots), Failures: slices.Clone(fx.Effects.Failures)}
		n.fx = append(n.fx, fx)
		if n.onFx != nil {
			n.onFx(fx)
		}
	})
	n.step(t, node.Event{Kind: node.EventInit, At: hookT0}, nil)
	pipe.Start(hookT0)
	return n
}

// step runs ev through the pipeline and returns the sends.
func (n *hookNode) step(t *testing.T, ev node.Event, in *node.Envelope) []layer.Send {
	t.Helper()
	o := n.pipe.Step(ev, in)
	if len(o.Errors) > 0 {
		t.Fatalf("%v: %v", ev, o.Errors)
	}
	return o.Sends
}

// calls returns the LayerCalls of the effects seen since mark.
func (n *hookNode) calls(mark int) []snapshot.LayerCall {
	var c []snapshot.LayerCall
	for _, fx := range n.fx[mark:] {
		c = append(c, fx.Call)
	}
	return c
}

// joinPair starts n1 (a root) and n2, moves n2's number to 1 with a
// periodic tick and has n2 join through n1: it returns n2's Join to n1
// (stamped 1), not yet delivered, and the time.
func joinPair(t *testing.T) (n1, n2 *hookNode, join node.Envelope, at time.Time) {
	t.Helper()
	spec := randtree.NewSpec(randtree.AllFixes())
	n1, n2 = newHookNode(t, spec, 1), newHookNode(t, spec, 2)
	n1.step(t, node.Event{Kind: node.EventApp, At: hookT0, Msg: randtree.JoinOverlay{Targets: []node.ID{1}}}, nil)
	at = hookT0.Add(time.Second)
	if due := n2.pipe.NextDue(); !due.Equal(at) {
		t.Fatalf("n2 due at %v, want %v", due, at)
	}
	mark := len(n2.fx)
	if errs := n2.pipe.Tick(at).Errors; len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := n2.calls(mark); !slices.Equal(got, []snapshot.LayerCall{snapshot.CallTick}) ||
		n2.fx[mark].CN != 1 || len(n2.fx[mark].Effects.Taken) != 1 || n2.fx[mark].Effects.Taken[0].Reason != snapshot.CheckpointPeriodic {
		t.Fatalf("n2's tick effects: %+v", n2.fx[mark:])
	}
	sends := n2.step(t, node.Event{Kind: node.EventApp, At: at, Msg: randtree.JoinOverlay{Targets: []node.ID{1}}}, nil)
	if len(sends) != 1 || sends[0].Env.CN != 1 || sends[0].Env.To != 1 {
		t.Fatalf("n2 sent %+v, want one Join to n1 stamped 1", sends)
	}
	return n1, n2, sends[0].Env, at
}

// OnEffects sees a forced checkpoint from Before while the message that
// forced it has not reached the core, with the number it adopted.
func TestLiveEffectsForcedCheckpoint(t *testing.T) {
	n1, _, join, at := joinPair(t)
	handled := false
	n1.onFx = func(fx snapshot.LayerEffects) {
		if len(n1.core.Service().(*randtree.State).Children) != 0 {
			handled = true
		}
	}
	mark := len(n1.fx)
	n1.step(t, node.Event{Kind: node.EventMessage, At: at, From: 2, Msg: join.Msg}, &join)
	if got := n1.calls(mark); len(got) == 0 || got[0] != snapshot.CallBefore {
		t.Fatalf("n1's effects on the Join: %v", got)
	}
	if fx := n1.fx[mark]; fx.CN != 1 || len(fx.Effects.Taken) != 1 || fx.Effects.Taken[0].Reason != snapshot.CheckpointForced || handled {
		t.Fatalf("n1's Before effects %+v (service had handled the Join: %v)", fx, handled)
	}
	if kids := n1.core.Service().(*randtree.State).Children; !slices.Contains(kids, 2) {
		t.Fatalf("n1's children %v after the Join", kids)
	}
}

// gatherPending makes n1 (which heard from n2) gather at at and delivers
// its Marker to itself, so the gather waits for n2 only; it returns the
// Request to n2.
func gatherPending(t *testing.T, n1 *hookNode, at time.Time) node.Envelope {
	t.Helper()
	out, err := n1.sl.Gather(at)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(out, func(e node.Envelope) bool { _, ok := e.Msg.(snapshot.Request); return ok && e.To == 2 })
	if i < 0 {
		t.Fatalf("Gather sent %+v, want a Request to n2", out)
	}
	req := out[i] // out is the Manager's until its next call
	for _, env := range out {
		if env.To == 1 { // the gatherer's Marker to itself
			n1.step(t, node.Event{Kind: node.EventMessage, At: at, From: 1, Msg: env.Msg}, &env)
		}
	}
	if !n1.sl.Status(at).Gathering {
		t.Fatal("the gather completed before n2 answered")
	}
	return req
}

// ConnectionBroken marks a pending member dead without the service; a
// gather left with the gatherer alone is a failure (FailureNoMember),
// reported by ConnectionBroken's effects, not a snapshot.
func TestLiveConnectionBroken(t *testing.T) {
	n1, _, join, at := joinPair(t)
	n1.step(t, node.Event{Kind: node.EventMessage, At: at, From: 2, Msg: join.Msg}, &join)
	snaps := 0
	n1.sl.OnSnapshot(func(*snapshot.Snapshot) { snaps++ })
	t2 := at.Add(100 * time.Millisecond)
	gatherPending(t, n1, t2)
	mark := len(n1.fx)
	n1.sl.ConnectionBroken(t2.Add(time.Millisecond), 2)
	if got := n1.calls(mark); !slices.Equal(got, []snapshot.LayerCall{snapshot.CallConnectionBroken}) {
		t.Fatalf("effects of ConnectionBroken: %v", got)
	}
	fx := n1.fx[mark].Effects
	if len(fx.Snapshots) != 0 || len(fx.Failures) != 1 || !strings.HasPrefix(fx.Failures[0].Reason, snapshot.FailureNoMember) ||
		!strings.Contains(fx.Failures[0].Reason, "dead [n2]") {
		t.Fatalf("gather after the break: snapshots %+v, failures %+v", fx.Snapshots, fx.Failures)
	}
	if snaps != 0 || n1.sl.Last() != nil || n1.sl.Status(t2).Stats.GathersFailed != 1 {
		t.Errorf("OnSnapshot called %d times, Last = %+v, stats %+v", snaps, n1.sl.Last(), n1.sl.Status(t2).Stats)
	}
	if n1.core.Service().(*randtree.State).Root != 1 {
		t.Error("the service changed")
	}
}

// A completed gather reaches OnEffects before OnSnapshot.
func TestLiveEffectsBeforeSnapshot(t *testing.T) {
	n1, n2, join, at := joinPair(t)
	n1.step(t, node.Event{Kind: node.EventMessage, At: at, From: 2, Msg: join.Msg}, &join)
	var order []string
	n1.onFx = func(fx snapshot.LayerEffects) {
		if len(fx.Effects.Snapshots) > 0 {
			order = append(order, "effects")
		}
	}
	n1.sl.OnSnapshot(func(*snapshot.Snapshot) { order = append(order, "snapshot") })
	t2 := at.Add(100 * time.Millisecond)
	queue := []node.Envelope{gatherPending(t, n1, t2)}
	nodes := map[node.ID]*hookNode{1: n1, 2: n2}
	for steps := 0; len(queue) > 0 && steps < 100; steps++ {
		env := queue[0]
		queue = queue[1:]
		for _, out := range nodes[env.To].step(t, node.Event{Kind: node.EventMessage, At: t2, From: env.From, Msg: env.Msg}, &env) {
			queue = append(queue, out.Env)
		}
	}
	s := n1.sl.Last()
	if s == nil || len(s.Nodes) != 2 {
		t.Fatalf("Last = %+v, want a snapshot of n1 and n2", s)
	}
	if !slices.Equal(order, []string{"effects", "snapshot"}) {
		t.Errorf("order of the reports: %v", order)
	}
}

// Crash resets the Manager once, when the node goes down: the EventReset
// of the restart leaves it alone, so its clocks date from the crash; an
// EventReset without a Crash before it resets it.
func TestLiveCrash(t *testing.T) {
	n1, _, join, at := joinPair(t)
	n1.step(t, node.Event{Kind: node.EventMessage, At: at, From: 2, Msg: join.Msg}, &join)
	gatherPending(t, n1, at.Add(time.Second))
	crash := at.Add(2 * time.Second)
	mark := len(n1.fx)
	n1.sl.Crash(crash)
	if got := n1.calls(mark); !slices.Equal(got, []snapshot.LayerCall{snapshot.CallCrash}) || len(n1.fx[mark].Effects.Failures) != 1 {
		t.Fatalf("effects of Crash: %+v", n1.fx[mark:])
	}
	if st := n1.sl.Status(crash); st.CheckpointsStored != 0 || st.Gathering {
		t.Errorf("after Crash: %+v", st)
	}
	back := crash.Add(30 * time.Second)
	mark = len(n1.fx)
	n1.step(t, node.Event{Kind: node.EventReset, At: back}, nil)
	if got := n1.calls(mark); len(got) != 0 {
		t.Errorf("the restart's EventReset reset the Manager again: %v", got)
	}
	if due := n1.sl.NextTick(); !due.Equal(crash.Add(time.Second)) {
		t.Errorf("NextTick after the restart = %v, want the crash's %v plus the interval", due, crash)
	}
	n1.step(t, node.Event{Kind: node.EventReset, At: back.Add(time.Second)}, nil)
	if due := n1.sl.NextTick(); !due.Equal(back.Add(2 * time.Second)) {
		t.Errorf("NextTick after a plain EventReset = %v, want %v", due, back.Add(2*time.Second))
	}
}

// LayerCall names its calls.
func TestLiveCallString(t *testing.T) {
	want := map[snapshot.LayerCall]string{snapshot.CallStart: "start", snapshot.CallBefore: "before", snapshot.CallAfter: "after",
		snapshot.CallTick: "tick", snapshot.CallGather: "gather", snapshot.CallCrash: "crash",
		snapshot.CallConnectionBroken: "connection-broken", 0: "call(?)"}
	for c, s := range want {
		if c.String() != s {
			t.Errorf("%d.String() = %q, want %q", c, c.String(), s)
		}
	}
}

// Through the layer: a service message stamped 2^62 still reaches the
// service, and the node's number does not move.
func TestLiveHostileNumberDeliveredNotAdopted(t *testing.T) {
	n1, _, join, at := joinPair(t)
	join.CN = 1 << 62
	n1.step(t, node.Event{Kind: node.EventMessage, At: at, From: 2, Msg: join.Msg}, &join)
	if kids := n1.core.Service().(*randtree.State).Children; !slices.Contains(kids, 2) {
		t.Fatalf("n1's children %v: the Join did not reach the service", kids)
	}
	if st := n1.sl.Status(at).Stats; st.CN != 0 || st.CNRejected != 1 || st.Forced != 0 {
		t.Fatalf("n1's stats %+v, want the number rejected", st)
	}
}
