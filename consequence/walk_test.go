package consequence_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// retxSvc is a tiny reliable-delivery service with a planted liveness bug:
// n1 sends Data to n2 and retransmits on its "retx" timer until n2's Ack
// arrives; with Lossy set the retransmission timer is lost after the first
// retransmission (it is not re-armed), so two lost copies leave n1 waiting
// forever. Transport errors are ignored: the timer is the only recovery.
type retxSvc struct {
	Done    bool
	Retries int
	Lossy   bool `msgpack:"-"`
}

type retxData struct{}

func (retxData) MessageType() string { return "test.Data" }

type retxAck struct{}

func (retxAck) MessageType() string { return "test.Ack" }

func (s *retxSvc) Init(env node.Env) {
	if env.Self() == 1 {
		env.Send(2, retxData{})
		env.SetTimer("retx", time.Second)
	}
}

func (s *retxSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case retxData:
		env.Send(from, retxAck{})
	case retxAck:
		s.Done = true
		env.CancelTimer("retx")
	}
}

func (s *retxSvc) HandleTimer(env node.Env, name string) {
	if s.Done {
		return
	}
	s.Retries++
	env.Send(2, retxData{})
	if !s.Lossy || s.Retries < 1 {
		env.SetTimer("retx", time.Second)
	}
}

func (s *retxSvc) HandleApp(env node.Env, call node.Message)       {}
func (s *retxSvc) HandleTransportError(env node.Env, peer node.ID) {}

func retxModel(t *testing.T, lossy bool) *consequence.ActorModel {
	t.Helper()
	spec := node.Spec{
		Name:     "retx",
		New:      func() node.Service { return &retxSvc{Lossy: lossy} },
		Messages: []node.Message{retxData{}, retxAck{}},
		Properties: []node.Property{node.Eventually("Delivered", func(v node.View) error {
			if s, ok := v.Service(1).(*retxSvc); ok && !s.Done {
				return errors.New("n1 is still waiting for its ack")
			}
			return nil
		})},
	}
	m, err := consequence.NewActorModel(spec, consequence.ActorOptions{N: 2, Faults: consequence.Faults{Breaks: 2}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func pathString(p []consequence.Action[consequence.ActorAction]) string {
	var b []string
	for _, a := range p {
		b = append(b, a.Act.String())
	}
	return fmt.Sprintf("%q", b)
}

// TestLivenessCriticalTransition: random walks find the planted dead state
// and the critical transition is the break that loses the last copy of
// the data, with C1; the correct service has no suspected violation.
func TestLivenessCriticalTransition(t *testing.T) {
	ctx := context.Background()
	opts := consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 200, DMax: 60, K: 10}
	m := retxModel(t, true)
	res, err := consequence.RandomWalks(ctx, m, m.Properties(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Suspect == nil {
		t.Fatalf("no suspected violation in %d walks", res.Walks)
	}
	s := res.Suspect
	if len(s.Failing) != 1 || s.Failing[0].Property != "Delivered" {
		t.Fatalf("suspect fails %v", s.Failing)
	}
	again, err := consequence.RandomWalks(ctx, m, m.Properties(), opts)
	if err != nil || again.Walks != res.Walks || pathString(again.Suspect.Path) != pathString(s.Path) {
		t.Fatalf("walks are not deterministic: %v", err)
	}
	crit, err := consequence.FindCriticalTransition(ctx, m, m.Properties(), s.Start, s.Path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("suspect after %d walks (%d live): %s; %v at step %d (%v) after %d probes",
		res.Walks, res.Live, pathString(s.Path), crit.Verdict, crit.Step, crit.Action.Act, crit.Probes)
	if crit.Verdict != consequence.C1 || crit.Step < 0 {
		t.Fatalf("verdict %v step %d", crit.Verdict, crit.Step)
	}
	if crit.Action.Act.Kind != consequence.ActBreak {
		t.Fatalf("critical action %v, want a break; path %s", crit.Action.Act, pathString(s.Path))
	}
	// After the critical step nothing of the data is left and no timer runs.
	dead, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, s.Start, s.Path[:crit.Step+1])
	if err != nil {
		t.Fatal(err)
	}
	if dead.TimerScheduled(1, "retx") || len(dead.InFlight(1, 2)) != 1 || dead.InFlight(1, 2)[0].Msg != nil {
		t.Fatalf("state after the critical step:\n%s", dead)
	}
	live, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, s.Start, crit.LivePath)
	if err != nil {
		t.Fatal(err)
	}
	if !live.Service(1).(*retxSvc).Done {
		t.Fatalf("the live path %s does not deliver", pathString(crit.LivePath))
	}

	// The correct service: every walk is live.
	ok := retxModel(t, false)
	res, err = consequence.RandomWalks(ctx, ok, ok.Properties(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Suspect != nil {
		t.Fatalf("correct service: suspect %s", pathString(res.Suspect.Path))
	}
	if res.Live != res.Walks || res.Walks != opts.Walks {
		t.Fatalf("correct service: %d of %d walks live", res.Live, res.Walks)
	}
	// Without breaks the lossy service never loses its data.
	noBreaks := opts
	noBreaks.Weight = consequence.KindWeights(map[consequence.ActorActionKind]float64{consequence.ActBreak: 0, consequence.ActTimer: 0.5})
	if res, err := consequence.RandomWalks(ctx, m, m.Properties(), noBreaks); err != nil || res.Suspect != nil {
		t.Fatalf("lossy service without breaks: %v, suspect %v", err, res.Suspect != nil)
	}
	// A suspect that is too short to tell: the end still reaches a live state.
	short, err := consequence.FindCriticalTransition(ctx, ok, ok.Properties(), ok.Start(), nil, opts)
	if err != nil || short.Verdict != consequence.C2 {
		t.Fatalf("start of the correct service: %v, %v", short, err)
	}
}

// TestLivenessFromPeriphery: MaceMC's combination — a bounded BFS, then
// random walks from the states where it left off. The periphery states
// replay to themselves from their paths, the choice does not depend on the
// number of workers, and a suspect found from the periphery carries the
// whole path from the start state, on which the critical transition is
// found as from the start.
func TestLivenessFromPeriphery(t *testing.T) {
	ctx := context.Background()
	m := retxModel(t, true)
	const depth, keep = 4, 8
	var first []consequence.PathState[*consequence.GlobalState, consequence.ActorAction]
	for _, workers := range []int{1, 2} {
		res, err := consequence.NewChecker(m).
			Workers(workers).MaxDepth(depth).Periphery(keep).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n := min(keep, int(res.DepthCounts[depth])); len(res.Periphery) != n {
			t.Fatalf("workers=%d: %d periphery states, want %d (level %d has %d)", workers, len(res.Periphery), n, depth, res.DepthCounts[depth])
		}
		for i, ps := range res.Periphery {
			if len(ps.Path) != depth {
				t.Fatalf("periphery state %d at depth %d, want %d", i, len(ps.Path), depth)
			}
			end, err := consequence.Replay[*consequence.GlobalState, consequence.ActorAction](m, ps.Start, ps.Path)
			if err != nil {
				t.Fatal(err)
			}
			if m.Fingerprint(end) != m.Fingerprint(ps.State) {
				t.Fatalf("periphery state %d does not replay to itself", i)
			}
			if first != nil && pathString(ps.Path) != pathString(first[i].Path) {
				t.Fatalf("periphery state %d differs between 1 and 2 workers: %s vs %s", i, pathString(first[i].Path), pathString(ps.Path))
			}
		}
		first = res.Periphery
	}

	opts := consequence.WalkOptions[consequence.ActorAction]{Seed: 1, Walks: 200, DMax: 60, K: 10}
	res, err := consequence.RandomWalksFrom(ctx, m, m.Properties(), first, opts)
	if err != nil {
		t.Fatal(err)
	}
	if res.Suspect == nil {
		t.Fatalf("no suspect in %d walks from the periphery", res.Walks)
	}
	s := res.Suspect
	var from *consequence.PathState[*consequence.GlobalState, consequence.ActorAction]
	for i := range first {
		if len(s.Path) >= depth && pathString(s.Path[:depth]) == pathString(first[i].Path) {
			from = &first[i]
		}
	}
	if from == nil || s.Start != from.Start {
		t.Fatalf("suspect path %s does not begin with a periphery path", pathString(s.Path))
	}
	crit, err := consequence.FindCriticalTransition(ctx, m, m.Properties(), s.Start, s.Path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if crit.Verdict != consequence.C1 || crit.Step < 0 || crit.Action.Act.Kind != consequence.ActBreak {
		t.Fatalf("%v at step %d (%v) on %s", crit.Verdict, crit.Step, crit.Action.Act, pathString(s.Path))
	}

	ok := retxModel(t, false)
	bounded, err := consequence.NewChecker(ok).MaxDepth(depth).Periphery(keep).Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err = consequence.RandomWalksFrom(ctx, ok, ok.Properties(), bounded.Periphery, opts)
	if err != nil || res.Suspect != nil || res.Walks != opts.Walks {
		t.Fatalf("correct service from the periphery: %v, %d walks, suspect %v", err, res.Walks, res.Suspect != nil)
	}
	if _, err := consequence.NewChecker(ok).Periphery(-1).Run(ctx); !errors.Is(err, consequence.ErrInvalidOptions) {
		t.Fatalf("Periphery(-1): %v", err)
	}
}

// TestIntercept: event filters inside the model. Dropping n1's Data at n2
// consumes it without a reply; dropping and breaking also tells the sender;
// a postponed timer is not enabled; the filtered model shares the start
// state with the unfiltered one.
func TestIntercept(t *testing.T) {
	m := retxModel(t, false)
	isData := func(a consequence.ActorAction) bool {
		return a.Kind == consequence.ActDeliver && a.Node == 2 && a.Msg != nil && a.Msg.MessageType() == "test.Data"
	}
	find := func(m *consequence.ActorModel, s *consequence.GlobalState, want string) (consequence.ActorAction, bool) {
		for _, a := range m.Actions(s, nil) {
			if a.Act.String() == want {
				return a.Act, true
			}
		}
		return consequence.ActorAction{}, false
	}
	drop, dropBreak := layer.Verdict{}, layer.Verdict{Break: true}
	for _, verdict := range []layer.Verdict{drop, dropBreak} {
		f := m.WithIntercept(func(a consequence.ActorAction) layer.Verdict {
			if isData(a) {
				return verdict
			}
			return layer.Verdict{Handle: true}
		})
		if f.Fingerprint(f.Start()) != m.Fingerprint(m.Start()) {
			t.Fatal("filtered model has another start state")
		}
		a, ok := find(f, f.Start(), "n2 deliver test.Data from n1")
		if !ok {
			t.Fatalf("%v: the delivery is not enabled", verdict)
		}
		next, ok := f.Next(f.Start(), a)
		if !ok {
			t.Fatalf("%v: Next refused the delivery", verdict)
		}
		if len(next.InFlight(1, 2)) != 0 && verdict == drop {
			t.Fatalf("drop: channel 1->2 still holds %v", next.InFlight(1, 2))
		}
		if acks := next.InFlight(2, 1); verdict == drop && len(acks) != 0 {
			t.Fatalf("drop: n2 answered %v", acks)
		}
		if verdict == dropBreak {
			// Both ends hear of the break: the sender, and the filtering
			// node, whose own recovery must run too.
			if in := next.InFlight(2, 1); len(in) != 1 || in[0].Msg != nil {
				t.Fatalf("drop+break: channel 2->1 holds %v, want one transport error for the sender", in)
			}
			if in := next.InFlight(1, 2); len(in) != 1 || in[0].Msg != nil {
				t.Fatalf("drop+break: channel 1->2 holds %v, want one transport error for the filtering node", in)
			}
			if next.Connected(1, 2) {
				t.Fatal("drop+break: still connected")
			}
		}
		// Unfiltered, the same delivery runs the handler: n2 acks.
		if a, ok := find(m, m.Start(), "n2 deliver test.Data from n1"); ok {
			if plain, _ := m.Next(m.Start(), a); len(plain.InFlight(2, 1)) != 1 || plain.InFlight(2, 1)[0].Msg == nil {
				t.Fatalf("unfiltered delivery: %v", plain.InFlight(2, 1))
			}
		}
	}
	postponed := m.WithIntercept(func(a consequence.ActorAction) layer.Verdict {
		if a.Kind == consequence.ActTimer && a.Timer == "retx" {
			return layer.Verdict{RetryAt: time.Unix(1, 0)}
		}
		return layer.Verdict{Handle: true}
	})
	if _, ok := find(postponed, postponed.Start(), "n1 timer retx"); ok {
		t.Fatal("a postponed timer is enabled")
	}
	if _, ok := find(m, m.Start(), "n1 timer retx"); !ok {
		t.Fatal("the timer is not enabled without the filter")
	}
	if _, ok := postponed.Next(postponed.Start(), consequence.ActorAction{Kind: consequence.ActTimer, Node: 1, Timer: "retx"}); ok {
		t.Fatal("Next ran a postponed timer")
	}
}
