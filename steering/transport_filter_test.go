package steering

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// teSvc is a two-node request/reply whose property breaks when n1 learns
// that its connection to n2 broke before n2's reply came: the one event
// a filter at n1 can stop on that path is the transport error itself.
type teSvc struct {
	Got, Gone bool
}

type teHello struct{}
type teReply struct{}

func (teHello) MessageType() string { return "te.Hello" }
func (teReply) MessageType() string { return "te.Reply" }

func (s *teSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.Send(2, teHello{})
	}
}
func (s *teSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case teHello:
		env.Send(from, teReply{})
	case teReply:
		s.Got = true
	}
}
func (s *teSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *teSvc) HandleTimer(env node.Env, name string)           {}
func (s *teSvc) HandleTransportError(env node.Env, peer node.ID) { s.Gone = true }

var teSpec = node.Spec{
	Name:     "te",
	New:      func() node.Service { return &teSvc{} },
	Messages: []node.Message{teHello{}, teReply{}},
	Properties: []node.Property{node.Always("ReplyFirst", func(v node.View) error {
		if s, _ := v.Service(1).(*teSvc); s != nil && s.Gone && !s.Got {
			return fmt.Errorf("n1 gave up on n2 before its reply")
		}
		return nil
	})},
}

var teFilter = Filter{Kind: FilterTransportError, Node: 1, From: 2}

// In the explorer: the only path to the violation is a break of the
// connection n1–n2 before the reply, then n1's transport error. n1's
// prediction carries the transport-error filter (today's filters had
// none: Prediction.Filter was nil), the filter's check passes (with it in
// place the explorer postpones the error: no violation), and n2, which
// has no event of its own on the path after the break, gets none.
func TestTransportErrorFilterInTheExplorer(t *testing.T) {
	m, err := consequence.NewActorModel(teSpec, consequence.ActorOptions{Nodes: []node.ID{1, 2}, Faults: consequence.Faults{Breaks: 1}})
	if err != nil {
		t.Fatal(err)
	}
	props := []consequence.Property[*consequence.GlobalState]{consequence.AdaptProperty(teSpec.Properties[0])}
	ctx := context.Background()
	c, err := New(Config{Mode: Steer, Spec: teSpec}, 1)
	if err != nil {
		t.Fatal(err)
	}
	found, _, err := c.search(ctx, m, props)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != 1 || found[0].Filter == nil || *found[0].Filter != teFilter {
		t.Fatalf("predictions %v, want one with the filter %v", found, teFilter)
	}
	path := found[0].Report.Path
	if last := path[len(path)-1].Text; last != "n1 transport-error from n2" {
		t.Fatalf("path %v does not end with n1's transport error", path)
	}
	if got := teFilter.String(); got != "n1: postpone transport-error from n2" {
		t.Fatalf("String %q", got)
	}
	ok, unhelpful, _, err := c.checkFilters(ctx, m, props, nil, filterSet{teFilter})
	if err != nil || unhelpful != 0 || !ok.has(teFilter) {
		t.Fatalf("check of the filter: %v, %d unhelpful, %v", ok, unhelpful, err)
	}
	filtered, _, err := c.search(ctx, m.WithIntercept(filterSet{teFilter}.intercept), props)
	if err != nil || len(filtered) != 0 {
		t.Fatalf("with the filter in place: %v, %v", filtered, err)
	}
	c2, err := New(Config{Mode: Steer, Spec: teSpec}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if found, _, _ := c2.search(ctx, m, props); len(found) != 1 || found[0].Filter != nil {
		t.Fatalf("at n2: %v, want the prediction without a filter", found)
	}
}

// In a shell: the filter in force at n1's steering layer postpones the
// transport error in the layer.Pipeline both shells host (the emulator's
// loop and the live runtime's core goroutine run the same Pipeline): the
// core does not see it, the pipeline holds it for PostponeDelay, a retry
// is postponed again while the filter is in force, and runs once a round
// without the filter replaced it.
func TestTransportErrorFilterPostponesInThePipeline(t *testing.T) {
	core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: teSpec.New})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	cfg := LayerConfig{Controller: Config{Mode: Steer, Spec: teSpec, InterventionPolicy: InterventionPolicy{PostponeDelay: 200 * time.Millisecond}}, Runner: &SyncRunner{}}
	l, err := NewLayer(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := layer.NewPipeline(layer.PipelineConfig{Core: core, Layers: []layer.Layer{l}, Host: newFakeHost(core)})
	if err != nil {
		t.Fatal(err)
	}
	p.Start(t0)
	l.install([]Filter{teFilter}, t0)
	te := node.Event{Kind: node.EventTransportError, Peer: 2, At: t0}
	o := p.Step(te, nil)
	if o.Handled || !o.Postponed || !o.Verdict.RetryAt.Equal(t0.Add(200*time.Millisecond)) {
		t.Fatalf("outcome %+v, want the transport error postponed by 200ms", o)
	}
	if s := core.Service().(*teSvc); s.Gone {
		t.Fatal("the core saw the postponed transport error")
	}
	// Another peer's transport error is not the filter's.
	if o := p.Step(node.Event{Kind: node.EventTransportError, Peer: 3, At: t0}, nil); !o.Handled {
		t.Fatalf("n3's transport error: %+v", o)
	}
	core.Service().(*teSvc).Gone = false
	t1 := t0.Add(200 * time.Millisecond)
	due := p.DueRetries(t1)
	if len(due) != 1 {
		t.Fatalf("%d retries due, want 1", len(due))
	}
	if o, ok := p.Retry(due[0], t1); !ok || o.Handled || !o.Postponed {
		t.Fatalf("retry with the filter in force: %+v", o)
	}
	if st := l.Status(); st.FilterHits != 1 || st.Events != 2 {
		t.Fatalf("status %+v: want 1 hit of 2 events (the retry not counted)", st)
	}
	l.apply(&pendingRound{round: &Round{l: l, snap: &snapshot.Snapshot{At: t1}, rep: &RoundReport{Members: []node.ID{1, 2}}}}, t1)
	t2 := t1.Add(200 * time.Millisecond)
	due = p.DueRetries(t2)
	if len(due) != 1 {
		t.Fatalf("%d retries due, want 1", len(due))
	}
	if o, ok := p.Retry(due[0], t2); !ok || !o.Handled {
		t.Fatalf("retry without the filter: %+v", o)
	}
	if s := core.Service().(*teSvc); !s.Gone {
		t.Fatal("the transport error never reached the core")
	}
}
