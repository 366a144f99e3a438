package steering

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// grant is a lock server with lockd's bug, and its clients: n1 serves,
// the others ask. The server gave the lock to n2 before the run; n3 asks
// for it at Init. The server grants every Acquire without looking whether
// the lock is held, so n3's Acquire, once delivered, makes two holders.
// Every event of that path is the server's or n3's: n2, the holder, whose
// round predicts it, can stop none of them.
type grant struct {
	Holder node.ID
	Held   bool
}

type grantAcquire struct{}

func (grantAcquire) MessageType() string { return "grant.Acquire" }

type grantReply struct{}

func (grantReply) MessageType() string { return "grant.Grant" }

func (s *grant) Init(env node.Env) {
	switch env.Self() {
	case 1:
		s.Holder = 2
	case 2:
		s.Held = true
	case 3:
		env.Send(1, grantAcquire{})
	}
}

func (s *grant) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	switch msg.(type) {
	case grantAcquire:
		s.Holder = from // the bug: no check that the lock is free
		env.Send(from, grantReply{})
	case grantReply:
		s.Held = true
	}
}

func (s *grant) HandleTimer(node.Env, string)           {}
func (s *grant) HandleApp(node.Env, node.Message)       {}
func (s *grant) HandleTransportError(node.Env, node.ID) {}
func (s *grant) Neighbors(self node.ID) []node.ID {
	if self == 1 {
		return []node.ID{2, 3}
	}
	return []node.ID{1}
}

func grantSpec() node.Spec {
	return node.Spec{
		Name:     "grant",
		New:      func() node.Service { return &grant{} },
		Messages: []node.Message{grantAcquire{}, grantReply{}},
		Properties: []node.Property{node.Always("OneHolder", func(v node.View) error {
			var holders []node.ID
			for _, id := range v.Nodes() {
				if s, ok := v.Service(id).(*grant); ok && s.Held {
					holders = append(holders, id)
				}
			}
			if len(holders) > 1 {
				return fmt.Errorf("%v hold the lock", holders)
			}
			return nil
		})},
	}
}

// grantLayer is the steering layer of node id in mode Steer, on a core
// past its Init.
func grantLayer(t *testing.T, id node.ID, cfg func(*LayerConfig)) (*Layer, *fakeHost) {
	t.Helper()
	spec := grantSpec()
	core, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: time.Unix(100, 0)}); err != nil {
		t.Fatal(err)
	}
	c := LayerConfig{Controller: Config{Mode: Steer, Spec: spec, LivenessWalks: LivenessWalks{WalkOptions: WalkOptions{Walks: -1}}}}
	if cfg != nil {
		cfg(&c)
	}
	return newTestLive(t, c, core)
}

// steeringSends returns the envelopes of steering messages among out.
func steeringSends(out []node.Envelope) []node.Envelope {
	var got []node.Envelope
	for _, e := range out {
		if layer.IsMessage(e.Msg) {
			got = append(got, e)
		}
	}
	return got
}

// A steering request installed at the owner prevents a violation that the
// predicting node's own filters cannot: n2 predicts that n3's Acquire,
// delivered to the server, makes two holders; none of the path's events
// is n2's, so it asks n1 to drop the Acquire from n3. n1 replays the path
// on its own view, checks the filter, installs it and answers; n1's gate
// then drops the Acquire, and n2 records the answer.
func TestRequestInstalledAtTheOwner(t *testing.T) {
	spec := grantSpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 2)
	req, h2 := grantLayer(t, 2, nil)
	req.Gathered(snap)
	sent := steeringSends(applyRound(t, req, h2))
	if fs := req.Filters(); len(fs) != 0 {
		t.Fatalf("n2 installed %v: it has no event on the path", fs)
	}
	if st := req.Status(); st.RequestsSent != 1 || len(st.Sent) != 1 {
		t.Fatalf("n2 sent %d requests (%+v), want 1", st.RequestsSent, st.Sent)
	}
	if len(sent) != 1 || sent[0].To != 1 {
		t.Fatalf("n2's steering sends: %v, want one request to n1", sent)
	}
	r := sent[0].Msg.(Request)
	want := Filter{Kind: FilterMessage, Node: 1, From: 3, Type: "grant.Acquire", Break: true}
	if r.Filter != want || r.Property != "OneHolder" || len(r.Path) != 2 || r.CN != snap.CN {
		t.Fatalf("request %+v, want %v for OneHolder along a path of 2 from cut %d", r, want, snap.CN)
	}

	// The owner's own rounds explore too little to see it (one state):
	// only the request can make it act.
	owner, h1 := grantLayer(t, 1, func(c *LayerConfig) { c.Controller.MaxStates, c.Controller.FullDepth = 1, -1 })
	owner.Gathered(snap)
	awaitRound(t, owner, h1)
	if fs := owner.Filters(); len(fs) != 0 {
		t.Fatalf("n1's own round installed %v", fs)
	}
	v, back, err := owner.Gate(time.Now(), node.Event{Kind: node.EventMessage, From: 2, Msg: r}, &node.Envelope{From: 2, To: 1, Msg: r}, false)
	if err != nil || v.Handle || len(back) != 0 {
		t.Fatalf("n1 on the request: %v %v %v; want it consumed, answered after its round", v, back, err)
	}
	answers := steeringSends(applyRound(t, owner, h1))
	if fs := owner.Filters(); len(fs) != 1 || fs[0] != want {
		t.Fatalf("n1's filters %v, want %v", fs, want)
	}
	if len(answers) != 1 || answers[0].To != 2 || !answers[0].Msg.(Answer).Accepted {
		t.Fatalf("n1 answered %v, want an acceptance to n2", answers)
	}
	v, _, _ = owner.Gate(time.Now(), node.Event{Kind: node.EventMessage, From: 3, Msg: grantAcquire{}}, nil, false)
	if v.Handle {
		t.Fatal("n1 let n3's Acquire through with the requested filter in force")
	}
	st := owner.Status()
	if st.RequestsAdmitted != 1 || st.RequestsAccepted != 1 || len(st.Received) != 1 || st.Received[0].Answer != "accepted" {
		t.Fatalf("n1's status: admitted %d, accepted %d, received %+v", st.RequestsAdmitted, st.RequestsAccepted, st.Received)
	}
	// Every intervention is explained: the filter came from n2's request
	// about OneHolder, along the path n2 predicted.
	if len(st.Reasons) != 1 || st.Reasons[0].Why.Source != "request" || st.Reasons[0].Why.Requester != 2 ||
		st.Reasons[0].Why.Property != "OneHolder" || len(st.Reasons[0].Why.Path) != 2 {
		t.Fatalf("n1's reasons: %+v", st.Reasons)
	}
	if st.Interventions["request/OneHolder"] != 1 {
		t.Fatalf("n1's interventions by reason: %v", st.Interventions)
	}
	req.Gate(time.Now(), node.Event{Kind: node.EventMessage, From: 1, Msg: answers[0].Msg}, nil, false)
	if st := req.Status(); st.AnswersAccepted != 1 || st.Sent[0].Answer != "accepted" {
		t.Fatalf("n2's status after the answer: %+v", st.Sent)
	}
}

// The owner refuses what it cannot confirm, and a peer cannot make it do
// more than its bounds: a stranger, a filter for another node, a path that
// does not replay to a violation from the owner's view, a flood past the
// per-peer budget — each is answered with its reason and installs
// nothing, and a node not steering refuses them all.
func TestRequestRefusals(t *testing.T) {
	spec := grantSpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2, 3}, 1)
	owner, h1 := grantLayer(t, 1, func(c *LayerConfig) {
		c.Controller.Requests = RequestConfig{PerPeer: 3, TTL: time.Hour}
		c.Controller.MaxStates, c.Controller.FullDepth = 1, -1
	})
	owner.Gathered(snap)
	awaitRound(t, owner, h1)
	good := Filter{Kind: FilterMessage, Node: 1, From: 3, Type: "grant.Acquire"}
	// A path that delivers the Grant first: from n1's view it cannot run.
	bogus := Request{ID: 7, Filter: good, Property: "OneHolder", CN: snap.CN}
	req, h2 := grantLayer(t, 2, nil)
	req.Gathered(snap)
	real := steeringSends(applyRound(t, req, h2))[0].Msg.(Request)
	bogus.Path = append(bogus.Path, real.Path[1], real.Path[1])
	ask := func(from node.ID, r Request) (string, bool) {
		t.Helper()
		_, back, err := owner.Gate(time.Now(), node.Event{Kind: node.EventMessage, From: from, Msg: r}, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(back) == 1 {
			return back[0].Msg.(Answer).Reason, false // refused at once
		}
		a := steeringSends(applyRound(t, owner, h1))
		if len(a) != 1 {
			t.Fatalf("%d answers after the round", len(a))
		}
		return a[0].Msg.(Answer).Reason, a[0].Msg.(Answer).Accepted
	}
	other := good
	other.Node = 3
	for _, c := range []struct {
		name string
		from node.ID
		r    Request
		want string
	}{
		{"stranger", 9, real, RefusedStranger},
		{"another node's filter", 2, Request{ID: 1, Filter: other, Property: "OneHolder", Path: real.Path}, RefusedMalformed},
		{"no path", 2, Request{ID: 2, Filter: good, Property: "OneHolder"}, RefusedMalformed},
		{"a path that does not replay", 2, bogus, RefusedNoReplay},
	} {
		why, ok := ask(c.from, c.r)
		if ok || !strings.HasPrefix(why, c.want) {
			t.Errorf("%s: accepted %v, reason %q; want refused with %q", c.name, ok, why, c.want)
		}
		if fs := owner.Filters(); len(fs) != 0 {
			t.Fatalf("%s: n1 installed %v", c.name, fs)
		}
	}
	// Of n2's 3 requests a window, the bogus path used one (malformed
	// requests are refused before they count). A flood past the budget is
	// refused at once.
	refused := 0
	for i := 0; i < 10; i++ {
		why, _ := ask(2, bogus)
		if strings.HasPrefix(why, RefusedRate) {
			refused++
		}
	}
	if refused != 8 {
		t.Errorf("%d of 10 flooding requests refused for the rate, want 8 (3 a window, one used)", refused)
	}
	if fs := owner.Filters(); len(fs) != 0 {
		t.Fatalf("the flood installed %v", fs)
	}
	debug, _ := grantLayer(t, 1, func(c *LayerConfig) { c.Controller.Mode = Debug })
	_, back, _ := debug.Gate(time.Now(), node.Event{Kind: node.EventMessage, From: 2, Msg: real}, nil, false)
	if len(back) != 1 || back[0].Msg.(Answer).Reason != RefusedMode {
		t.Errorf("a node in mode Debug answered %v", back)
	}
}

// A member cannot make the owner starve its neighbourhood with a request
// its own check confirms for safety: n1 predicts that n2 handling its ping
// violates NotPinged and asks n2 to drop it; n2's replay and safety check
// agree, but without the ping n1 never gets its pong on what is under way
// (its declared Knock is a call no client owes it), so n2 refuses for
// liveness and installs nothing.
func TestRequestRefusedForLiveness(t *testing.T) {
	spec := sideDoorSpec()
	snap := StartSnapshot(t, spec, []node.ID{1, 2}, 1)
	layer := func(id node.ID, own int) (*Layer, *fakeHost) {
		core := initedCore(t, spec, id, snap.At)
		return newTestLive(t, LayerConfig{Controller: Config{Mode: Steer, Spec: spec, SearchBudget: SearchBudget{MaxStates: own, FullDepth: -1}, LivenessWalks: LivenessWalks{WalkOptions: WalkOptions{Walks: 8, DMax: 20}}}}, core)
	}
	asker, h1 := layer(1, 0)
	asker.Gathered(snap)
	sent := steeringSends(applyRound(t, asker, h1))
	if len(sent) != 1 || sent[0].To != 2 {
		t.Fatalf("n1 sent %v, want a request to n2", sent)
	}
	r := sent[0].Msg.(Request)
	// The owner's own rounds explore too little to see it (one state):
	// only the request can make it act.
	owner, h2 := layer(2, 1)
	owner.Gathered(snap)
	awaitRound(t, owner, h2)
	if _, _, err := owner.Gate(snap.At, node.Event{Kind: node.EventMessage, From: 1, Msg: r}, nil, false); err != nil {
		t.Fatal(err)
	}
	answers := steeringSends(applyRound(t, owner, h2))
	if len(answers) != 1 || answers[0].Msg.(Answer).Accepted || answers[0].Msg.(Answer).Reason != RefusedLiveness {
		t.Fatalf("n2 answered %v, want a refusal for liveness", answers)
	}
	if fs := owner.Filters(); len(fs) != 0 {
		t.Fatalf("n2 installed %v", fs)
	}
}
