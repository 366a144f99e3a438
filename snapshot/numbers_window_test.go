package snapshot_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// hostile is the ID of a peer outside the harness's cluster.
const hostile node.ID = 9

// full gathers at id and fails unless every node of the harness is in the
// snapshot.
func (h *harness) full(id node.ID) *snapshot.Snapshot {
	h.t.Helper()
	s := h.gather(id)
	var got []node.ID
	for _, n := range s.Nodes {
		got = append(got, n.Node)
	}
	if !slices.Equal(got, h.ids()) || len(s.Dead) != 0 || len(s.Excluded) != 0 {
		h.t.Fatalf("gather at %v: nodes %v dead %v excluded %v, want all of %v", id, got, s.Dead, s.Excluded, h.ids())
	}
	return s
}

// One service message stamped 2^62 from a hostile peer: the message still
// reaches the service, its number is not adopted (and so does not spread),
// it is counted, and every node keeps gathering snapshots of the whole
// cluster. Today's code adopted it: the number reached MaxCN, the next
// cut stepped past it, and peers dropped the gatherer's requests.
func TestPoisonedNumberIsNotAdopted(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, defaults)
	h.tick(time.Second)
	h.full(1)
	before := h.mgrs[2].CN()
	ok, _, err := h.mgrs[2].Deliver(h.now, node.Envelope{From: hostile, To: 2, CN: 1 << 62, Msg: ping{N: 1}})
	if !ok || err != nil {
		t.Fatalf("deliver=%v err=%v, want the service message delivered", ok, err)
	}
	if cn := h.mgrs[2].CN(); cn != before {
		t.Fatalf("n2's number jumped from %d to %d", before, cn)
	}
	if st := h.mgrs[2].Stats(); st.CNRejected != 1 || st.Exhausted {
		t.Fatalf("n2's stats %+v, want one rejected number", st)
	}
	// n2 talks to everyone, everyone gathers, time passes.
	for round := range 3 {
		for _, to := range []node.ID{1, 3} {
			h.send(2, to, round)
			h.send(to, 2, round)
		}
		h.deliverAll()
		for _, id := range h.ids() {
			h.full(id)
		}
		h.tick(time.Second)
		h.deliverAll()
	}
	for _, id := range h.ids() {
		st := h.mgrs[id].Stats()
		if st.CN > 100 || st.GathersFailed != 0 || st.BadMessages != 0 {
			t.Errorf("n%d: cn %d, %d failed gathers, %d bad messages", id, st.CN, st.GathersFailed, st.BadMessages)
		}
	}
	if len(h.fails) != 0 {
		t.Errorf("failures %+v", h.fails)
	}
}

// A hostile peer repeating numbers beyond the window moves the node by at
// most the window per message, and only within it.
func TestOnePeerCannotPushPastTheWindow(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, LimitsConfig: snapshot.LimitsConfig{CNWindow: 100}}
	})
	for i := range 50 {
		h.mgrs[1].Deliver(h.now, node.Envelope{From: hostile, To: 1, CN: 1000 + uint64(i), Msg: ping{}})
	}
	if st := h.mgrs[1].Stats(); st.CN != 0 || st.CNRejected != 50 || st.CNCaughtUp != 0 {
		t.Fatalf("after 50 numbers beyond the window from one peer: %+v", st)
	}
	// Within the window a number is adopted, as it always was.
	h.mgrs[1].Deliver(h.now, node.Envelope{From: hostile, To: 1, CN: 100, Msg: ping{}})
	if cn := h.mgrs[1].CN(); cn != 100 {
		t.Fatalf("cn %d after a number within the window, want 100", cn)
	}
	h.full(2)
}

// A protocol message asking for a cut beyond the window is answered with
// a Negative (ReasonWindow) and the responder's number, and a Negative
// pointing beyond it leaves its member out: neither moves the number.
func TestProtocolNumbersBeyondTheWindow(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, LimitsConfig: snapshot.LimitsConfig{CNWindow: 100}}
	})
	_, fx, err := h.mgrs[2].Deliver(h.now, node.Envelope{From: 1, To: 2, CN: 0,
		Msg: snapshot.Request{Gather: 1, CR: 5000, Members: []node.ID{1, 2}}})
	if neg, ok := onlyNegative(fx.Sends); err != nil || !ok || neg.Reason != snapshot.ReasonWindow || h.mgrs[2].CN() != 0 || h.mgrs[2].Stats().CNRejected != 1 {
		t.Fatalf("request beyond the window: err %v, sends %+v, stats %+v", err, fx.Sends, h.mgrs[2].Stats())
	}

	fx, err = h.mgrs[1].Gather(h.now)
	if err != nil {
		t.Fatal(err)
	}
	h.apply(fx)
	var g uint64
	for _, env := range fx.Sends {
		if r, ok := env.Msg.(snapshot.Request); ok {
			g = r.Gather
		}
	}
	delete(h.q, [2]node.ID{1, 2}) // n2 never sees the request; a forged answer does
	_, fx, err = h.mgrs[1].Deliver(h.now, node.Envelope{From: 2, To: 1, CN: 1,
		Msg: snapshot.Negative{Gather: g, CR: 1, CN: 5000, Reason: snapshot.ReasonPruned}})
	if err != nil {
		t.Fatal(err)
	}
	h.apply(fx)
	h.deliverAll()
	if cn := h.mgrs[1].CN(); cn > 100 {
		t.Fatalf("the gatherer's number reached %d on a forged Negative", cn)
	}
	if st := h.mgrs[1].Stats(); st.CNRejected != 1 {
		t.Fatalf("gatherer stats %+v, want the Negative's number rejected", st)
	}
	if len(h.fails) != 1 || !strings.HasPrefix(h.fails[0].Reason, snapshot.FailureNoMember) || !strings.Contains(h.fails[0].Reason, "malformed [n2]") {
		t.Fatalf("failures %+v, want the gather failed with n2 malformed", h.fails)
	}
}

// A node restarted from 0 far behind its cluster catches up once two
// distinct peers carry numbers beyond its window, to the smaller of them;
// it refuses cuts up to that number (its state there is not a cut), even
// once the quota pruned the checkpoints before the jump, and the next
// gather includes it.
func TestRestartedNodeCatchesUpThroughTwoPeers(t *testing.T) {
	// The quota holds one full checkpoint and two identical ones.
	cfg := func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, Quota: 750, LimitsConfig: snapshot.LimitsConfig{CNWindow: 10}}
	}
	h := newHarness(t, []node.ID{1, 2, 3}, cfg)
	for range 30 {
		h.tick(time.Second)
	}
	ahead := h.mgrs[1].CN()
	if ahead < 30 {
		t.Fatalf("cluster at cn %d", ahead)
	}
	reg, err := node.NewRegistry(ping{})
	if err != nil {
		t.Fatal(err)
	}
	for k := range h.q {
		if k[0] == 2 || k[1] == 2 {
			delete(h.q, k)
		}
	}
	c := cfg(2)
	c.Registry = reg
	m, err := snapshot.New(c, 2, h.srcs[2])
	if err != nil {
		t.Fatal(err)
	}
	h.mgrs[2] = m
	h.apply(m.Start(h.now))
	h.now = h.now.Add(time.Second)
	if _, err := m.Tick(h.now); err != nil || m.CN() != 1 {
		t.Fatalf("restarted node's first increment: cn %d, %v", m.CN(), err)
	}

	h.send(1, 2, 1)
	h.deliverAll()
	if st := m.Stats(); st.CN != 1 || st.CNRejected != 1 {
		t.Fatalf("after one peer's number: %+v, want it rejected", st)
	}
	h.send(3, 2, 1)
	h.deliverAll()
	if st := m.Stats(); st.CN != ahead || st.CNCaughtUp != 1 {
		t.Fatalf("after two peers' numbers: %+v, want caught up to %d", st, ahead)
	}
	h.now = h.now.Add(time.Second)
	if _, err := m.Tick(h.now); err != nil || m.Stats().Pruned == 0 {
		t.Fatalf("the increment after the catch-up pruned nothing (%v): %+v", err, m.Stats())
	}
	_, fx, err := m.Deliver(h.now, node.Envelope{From: 1, To: 2, CN: ahead,
		Msg: snapshot.Request{Gather: 99, CR: ahead, Members: []node.ID{1, 2, 3}}})
	if err != nil || len(fx.Sends) != 1 {
		t.Fatalf("request for cut %d: err %v, sends %+v, want one Negative", ahead, err, fx.Sends)
	}
	if neg, ok := fx.Sends[0].Msg.(snapshot.Negative); !ok || neg.Reason != snapshot.ReasonPruned || neg.CN <= ahead {
		t.Fatalf("request for cut %d answered %+v, want a Negative for a pruned cut", ahead, fx.Sends[0].Msg)
	}
	s := h.gather(1)
	if cp := nodeCP(t, s, 2); cp.CN <= ahead {
		t.Fatalf("n2 answered cut %d with its catch-up checkpoint %d", s.CN, cp.CN)
	}
	h.full(3)
}

// Numbers stop at MaxCN: the periodic increment stays there (and is
// rescheduled, not overdue forever), a gather fails with FailureExhausted
// instead of asking for a cut past MaxCN, and nothing panics. Today's code
// asked for cut MaxCN+1, which every peer drops as hostile.
func TestNumberStopsAtMaxCN(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{GatherInterval: 5 * time.Second, GatherOnChange: true}, LimitsConfig: snapshot.LimitsConfig{CNWindow: math.MaxInt64}}
	})
	h.full(1) // GatherOnChange watches from the first gather on
	h.mgrs[1].Deliver(h.now, node.Envelope{From: 2, To: 1, CN: snapshot.MaxCN, Msg: ping{}})
	if st := h.mgrs[1].Stats(); st.CN != snapshot.MaxCN || !st.Exhausted {
		t.Fatalf("stats %+v, want cn MaxCN and exhausted", st)
	}
	fx, err := h.mgrs[1].Gather(h.now)
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Failures) != 1 || fx.Failures[0].Reason != snapshot.FailureExhausted || len(fx.Sends) != 0 {
		t.Fatalf("Gather at MaxCN: sends %+v, failures %+v", fx.Sends, fx.Failures)
	}
	for range 10 {
		h.now = h.now.Add(time.Second)
		if next := h.mgrs[1].NextTick(); next.Before(h.now.Add(-time.Second)) {
			t.Fatalf("NextTick %v stays overdue at %v", next, h.now)
		}
		fx, err := h.mgrs[1].Tick(h.now)
		if err != nil {
			t.Fatal(err)
		}
		for _, env := range fx.Sends {
			if r, ok := env.Msg.(snapshot.Request); ok || env.CN > snapshot.MaxCN {
				t.Fatalf("sent %+v (request %+v) at MaxCN", env, r)
			}
		}
		h.apply(h.mgrs[1].AfterStep(h.now))
	}
	if st := h.mgrs[1].Stats(); st.CN != snapshot.MaxCN || st.GathersFailed != 3 {
		t.Fatalf("stats %+v, want cn MaxCN and the two automatic gathers failed", st)
	}
	// A change of the neighbourhood fails once, not after every step.
	h.srcs[1].svc.nbrs = nil
	for range 3 {
		h.apply(h.mgrs[1].AfterStep(h.now))
	}
	if st := h.mgrs[1].Stats(); st.GathersFailed != 4 || h.mgrs[1].Gathering() {
		t.Fatalf("stats %+v after a neighbourhood change at MaxCN, want one more failed gather", st)
	}
}

// A gather whose members all stay silent (their peers drop its traffic)
// fails with FailureNoMember: a snapshot of the gatherer alone is no
// success. Today's code reported one with every member dead.
func TestGatherWithNoMemberFails(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, defaults)
	fx, err := h.mgrs[1].Gather(h.now)
	if err != nil {
		t.Fatal(err)
	}
	h.apply(fx)
	delete(h.q, [2]node.ID{1, 2})
	delete(h.q, [2]node.ID{1, 3})
	h.deliverAll()
	h.tick(snapshot.DefaultGatherTimeout)
	h.deliverAll()
	if len(h.snaps) != 0 || len(h.fails) != 1 || h.fails[0].Reason != snapshot.FailureNoMember+": dead [n2 n3]" {
		t.Fatalf("snapshots %+v, failures %+v; want the gather failed", h.snaps, h.fails)
	}
	if st := h.mgrs[1].Stats(); st.GathersFailed != 1 || st.Gathers != 0 {
		t.Fatalf("stats %+v", st)
	}
	h.full(1) // with the members answering, the next gather succeeds
}

func TestNegativeCNWindowIsAnError(t *testing.T) {
	reg, _ := node.NewRegistry(ping{})
	_, err := snapshot.New(snapshot.Config{Registry: reg, LimitsConfig: snapshot.LimitsConfig{CNWindow: -1}}, 1, &fakeSrc{svc: &fakeSvc{}})
	if err == nil || !strings.HasPrefix(err.Error(), "snapshot: ") || !strings.Contains(err.Error(), "CNWindow") {
		t.Fatalf("New with CNWindow -1: %v", err)
	}
}

// Without TLS a hello proves no ID: two forged IDs that each send one
// message stamped near MaxCN made every node "catch up" to it (the numbers
// exhausted, every gather failed). A number counts toward a catch-up only
// through a witness the shell vouches for (a WitnessHost), once per
// witness key: forged IDs claim nothing, and members behind one address
// count once.
func TestForgedIDsCannotCatchANodeUp(t *testing.T) {
	// Members 1..3 vouch by an address; 4 and 5 share one; 8 and 9 are
	// forged (no witness).
	witness := func(p node.ID) (string, bool) {
		switch {
		case p <= 3:
			return fmt.Sprintf("addr-%d", p), true
		case p <= 5:
			return "addr-shared", true
		}
		return "", false
	}
	cfg := func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, LimitsConfig: snapshot.LimitsConfig{CNWindow: 100}}
	}
	h := newHarness(t, []node.ID{1, 2, 3}, cfg)
	h.srcs[2].witness = witness
	h.tick(time.Second)
	before := h.mgrs[2].CN()
	deliver := func(from node.ID, cn uint64) {
		if ok, _, err := h.mgrs[2].Deliver(h.now, node.Envelope{From: from, To: 2, CN: cn, Msg: ping{N: 1}}); !ok || err != nil {
			t.Fatalf("deliver from %v: %v %v", from, ok, err)
		}
	}
	deliver(8, snapshot.MaxCN-5)
	deliver(9, snapshot.MaxCN-5)
	if st := h.mgrs[2].Stats(); st.CN != before || st.CNCaughtUp != 0 || st.CNUnvouched != 2 || st.Exhausted {
		t.Fatalf("after two forged IDs: %+v", st)
	}
	for _, id := range h.ids() {
		h.full(id) // the cluster gathers as before
	}
	before = h.mgrs[2].CN()
	deliver(4, 5000)
	deliver(5, 5000)
	if st := h.mgrs[2].Stats(); st.CN != before || st.CNCaughtUp != 0 {
		t.Fatalf("two IDs behind one address caught n2 up: %+v", st)
	}
	deliver(3, 6000)
	if st := h.mgrs[2].Stats(); st.CN != 5000 || st.CNCaughtUp != 1 {
		t.Fatalf("two witnesses: %+v, want a catch-up to 5000", st)
	}
}
