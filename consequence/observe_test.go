package consequence

import (
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

type obsPing struct{ node.Named[obsPing] }

type obsOp struct {
	node.Named[obsOp]
	N int
}

// obsService: node 1 pings node 2 every second; node 2 counts the pings.
// An application call at node 2 starts operation obsOp, which the next
// ping answers.
type obsService struct {
	node.NopHandlers
	Pings int
	Open  []obsOp
}

func (s *obsService) Init(env node.Env) {
	if env.Self() == 1 {
		env.SetTimer("tick", time.Second)
	}
}

func (s *obsService) HandleTimer(env node.Env, _ string) {
	env.Send(2, obsPing{})
	env.SetTimer("tick", time.Second)
}

func (s *obsService) HandleMessage(env node.Env, _ node.ID, _ node.Message) {
	s.Pings++
	if len(s.Open) > 0 {
		node.Respond(env, s.Open[0], nil)
		s.Open = s.Open[1:]
	}
}

func (s *obsService) HandleApp(env node.Env, call node.Message) {
	op := call.(obsOp)
	node.Invoke(env, op)
	s.Open = append(append([]obsOp(nil), s.Open...), op)
}

func (s *obsService) Outstanding(node.ID) []node.Message {
	out := make([]node.Message, len(s.Open))
	for i, o := range s.Open {
		out[i] = o
	}
	return out
}

func obsSpec(props ...node.Property) node.Spec {
	return node.Spec{Name: "obs", New: func() node.Service { return &obsService{} }, Messages: []node.Message{obsPing{}, obsOp{}}, Properties: props}
}

var (
	pinged  = node.Within("Pinged", 3*time.Second, nil, func(v node.View) error { return nil })
	history = node.OnHistory("Any", func(node.History) error { return nil })
)

func TestObserverOnlyForDeclaringSpecs(t *testing.T) {
	plain, err := NewActorModel(obsSpec(), ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if plain.obs != nil || plain.start.seen != nil || plain.NewPacker() == nil {
		t.Fatal("a spec with no bounded or history property observes its paths")
	}
	m, err := NewActorModel(obsSpec(pinged), ActorOptions{N: 2})
	if err != nil {
		t.Fatal(err)
	}
	if m.obs == nil || m.NewPacker() != nil || m.obs.maxDelay != DefaultMaxDelay {
		t.Fatal("a spec with a bounded property does not observe its paths, or packs them")
	}
	if _, err := NewActorModel(obsSpec(pinged), ActorOptions{N: 2, Timely: TimelyOptions{MaxDelay: -1}}); !errors.Is(err, ErrActorModel) {
		t.Errorf("negative MaxDelay: %v", err)
	}
	if _, err := NewActorModel(obsSpec(history), ActorOptions{N: 2, Symmetry: true}); !errors.Is(err, ErrNoSymmetry) {
		t.Errorf("symmetry with a history property: %v", err)
	}
}

// TestTimelyBoundFromTheSpec: a spec's declared delivery delay
// (node.DeliverySpec.MaxDelay) bounds its messages unless the options
// name one; an undeclared one keeps the default.
func TestTimelyBoundFromTheSpec(t *testing.T) {
	spec := obsSpec(pinged)
	spec.Delivery.MaxDelay = 50 * time.Millisecond
	for _, c := range []struct {
		opts TimelyOptions
		want time.Duration
	}{{TimelyOptions{}, 50 * time.Millisecond}, {TimelyOptions{MaxDelay: 2 * time.Second}, 2 * time.Second}} {
		m, err := NewActorModel(spec, ActorOptions{N: 2, Timely: c.opts})
		if err != nil {
			t.Fatal(err)
		}
		if m.obs.maxDelay != c.want {
			t.Errorf("options %+v: messages bound by %v, want %v", c.opts, m.obs.maxDelay, c.want)
		}
	}
	spec.Delivery.MaxDelay = -time.Second
	if _, err := NewActorModel(spec, ActorOptions{N: 2}); err == nil {
		t.Error("a spec declaring a negative MaxDelay was accepted")
	}
}

// TestTimelyRule: a timer does not fire past the deadline of a message
// in flight (its send time plus MaxDelay): with MaxDelay 1.5 s, node 1's
// third tick waits for the first ping's delivery.
func TestTimelyRule(t *testing.T) {
	m, err := NewActorModel(obsSpec(pinged), ActorOptions{N: 2, Timely: TimelyOptions{MaxDelay: 1500 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	tick := ActorAction{Kind: ActTimer, Node: 1, Timer: "tick"}
	g := m.Start()
	for i := range 2 {
		var ok bool
		if g, ok = m.Next(g, tick); !ok {
			t.Fatalf("tick %d not enabled", i+1)
		}
	}
	if _, ok := m.Next(g, tick); ok {
		t.Fatal("the third tick fired with the first ping 2 s in flight")
	}
	g, ok := m.Next(g, ActorAction{Kind: ActDeliver, Node: 2, Peer: 1, Msg: obsPing{}})
	if !ok {
		t.Fatal("the first ping is not deliverable")
	}
	if _, ok := m.Next(g, tick); !ok {
		t.Error("the third tick is held once the first ping arrived")
	}
}

// TestHistoryIsPartOfTheState: a path's marks are its state's history,
// in its fingerprint; a model from a snapshot begins with the operations
// under way (node.Client).
func TestHistoryIsPartOfTheState(t *testing.T) {
	m, err := NewActorModel(obsSpec(history), ActorOptions{N: 2, Workload: func(id node.ID, _ bool) []node.Message {
		if id == 2 {
			return []node.Message{obsOp{N: 1}}
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Start()
	for _, a := range []ActorAction{
		{Kind: ActApp, Node: 2, Msg: obsOp{N: 1}, Pending: true},
		{Kind: ActTimer, Node: 1, Timer: "tick"},
		{Kind: ActDeliver, Node: 2, Peer: 1, Msg: obsPing{}},
	} {
		var ok bool
		if g, ok = m.Next(g, a); !ok {
			t.Fatalf("%v not enabled", a)
		}
	}
	h := g.History()
	ops, err := h.Operations()
	if err != nil || len(ops) != 1 || !ops[0].Done() || h.Start != nil || ops[0].Op != (obsOp{N: 1}) {
		t.Fatalf("history %+v (%v), want one operation invoked and answered", h, err)
	}
	if g.seen.histN != 2 || g.fp != g.fingerprint() {
		t.Errorf("history of %d events, fingerprint %v (from scratch %v)", g.seen.histN, g.fp, g.fingerprint())
	}

	cp, err := (&node.State{Service: &obsService{Open: []obsOp{{N: 7}}}}).AppendCheckpoint(nil)
	if err != nil {
		t.Fatal(err)
	}
	sm, err := NewActorModelFromCheckpoints(obsSpec(history), []Checkpoint{{ID: 2, Bytes: cp, At: DefaultStart}}, nil, ActorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h = sm.Start().History()
	if len(h.Events) != 1 || !h.Events[0].Outstanding || h.Start == nil || h.Events[0].Op != (obsOp{N: 7}) {
		t.Errorf("a snapshot's history %+v, want the operation under way", h)
	}
}
