package snapshot_test

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// A tiny harness: services whose state is a counter, managers driven by
// hand over FIFO channels.

type ping struct{ N int }

func (ping) MessageType() string { return "test.Ping" }

// bulk is a message with a payload its receiver never reads, recorded in
// flight without it (node.InFlightFormer).
type bulk struct {
	N       int
	Payload []byte
}

func (bulk) MessageType() string { return "test.Bulk" }

func (b bulk) InFlightForm() node.Message {
	b.Payload = nil
	return b
}

// badForm claims an in-flight form of another type.
type badForm struct{}

func (badForm) MessageType() string        { return "test.BadForm" }
func (badForm) InFlightForm() node.Message { return ping{} }

type fakeSvc struct {
	N    int
	nbrs []node.ID
}

func (s *fakeSvc) Init(node.Env)                                 {}
func (s *fakeSvc) HandleMessage(node.Env, node.ID, node.Message) {}
func (s *fakeSvc) HandleTimer(node.Env, string)                  {}
func (s *fakeSvc) HandleApp(node.Env, node.Message)              {}
func (s *fakeSvc) HandleTransportError(node.Env, node.ID)        {}

// withNeighbors adds node.Neighborer.
type withNeighbors struct{ *fakeSvc }

func (w withNeighbors) Neighbors(node.ID) []node.ID { return w.nbrs }

type fakeSrc struct {
	svc  *fakeSvc
	nbrs bool
	fail bool
	// witness, when set, is the source's CatchUpWitness (else every
	// peer vouches by its ID).
	witness func(node.ID) (string, bool)
}

var _ snapshot.WitnessHost = (*fakeSrc)(nil)

func (f *fakeSrc) CatchUpWitness(peer node.ID) (string, bool) {
	if f.witness == nil {
		return peer.String(), true
	}
	return f.witness(peer)
}

func (f *fakeSrc) Checkpoint() ([]byte, error) {
	if f.fail {
		return nil, errors.New("boom")
	}
	// A checkpoint-like blob: mostly constant, so deltas compress well.
	b := []byte("state:" + strconv.Itoa(f.svc.N) + ":")
	for i := 0; i < 40; i++ {
		b = append(b, "padding-padding-"...)
	}
	return b, nil
}

func (f *fakeSrc) Service() node.Service {
	if f.nbrs {
		return withNeighbors{f.svc}
	}
	return f.svc
}

type harness struct {
	t     testing.TB
	now   time.Time
	mgrs  map[node.ID]*snapshot.Manager
	srcs  map[node.ID]*fakeSrc
	q     map[[2]node.ID][]node.Envelope
	snaps []*snapshot.Snapshot
	fails []snapshot.Failure
}

var t0 = time.Unix(1000, 0).UTC()

func newHarness(t testing.TB, ids []node.ID, cfg func(node.ID) snapshot.Config) *harness {
	h := &harness{t: t, now: t0, mgrs: map[node.ID]*snapshot.Manager{}, srcs: map[node.ID]*fakeSrc{}, q: map[[2]node.ID][]node.Envelope{}}
	reg, err := node.NewRegistry(ping{}, bulk{}, badForm{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		var nb []node.ID
		for _, o := range ids {
			if o != id {
				nb = append(nb, o)
			}
		}
		src := &fakeSrc{svc: &fakeSvc{nbrs: nb}, nbrs: true}
		c := cfg(id)
		c.Registry = reg
		m, err := snapshot.New(c, id, src)
		if err != nil {
			t.Fatal(err)
		}
		h.mgrs[id], h.srcs[id] = m, src
		h.apply(m.Start(h.now))
	}
	return h
}

func (h *harness) apply(fx snapshot.Effects) {
	for _, env := range fx.Sends {
		k := [2]node.ID{env.From, env.To}
		h.q[k] = append(h.q[k], env)
	}
	h.snaps = append(h.snaps, fx.Snapshots...)
	h.fails = append(h.fails, fx.Failures...)
}

// tick advances time by d and ticks every manager.
func (h *harness) tick(d time.Duration) {
	h.now = h.now.Add(d)
	for _, id := range h.ids() {
		fx, err := h.mgrs[id].Tick(h.now)
		if err != nil {
			h.t.Fatal(err)
		}
		h.apply(fx)
	}
}

func (h *harness) ids() []node.ID {
	var ids []node.ID
	for id := range h.mgrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// send makes from's service send a ping to to.
func (h *harness) send(from, to node.ID, n int) {
	env := node.Envelope{From: from, To: to, Msg: ping{N: n}}
	h.mgrs[from].Sent(h.now, &env, 10)
	k := [2]node.ID{from, to}
	h.q[k] = append(h.q[k], env)
}

// deliverAll delivers every queued message, channel by channel in ID order,
// until the network is empty.
func (h *harness) deliverAll() {
	for {
		progress := false
		for _, from := range h.ids() {
			for _, to := range h.ids() {
				k := [2]node.ID{from, to}
				for len(h.q[k]) > 0 {
					env := h.q[k][0]
					h.q[k] = h.q[k][1:]
					_, fx, err := h.mgrs[to].Deliver(h.now, env)
					if err != nil {
						h.t.Fatal(err)
					}
					h.apply(fx)
					progress = true
				}
			}
		}
		if !progress {
			return
		}
	}
}

func (h *harness) gather(id node.ID) *snapshot.Snapshot {
	h.t.Helper()
	fx, err := h.mgrs[id].Gather(h.now)
	if err != nil {
		h.t.Fatal(err)
	}
	h.apply(fx)
	before := len(h.snaps)
	h.deliverAll()
	if len(h.snaps) != before+1 {
		h.t.Fatalf("gather at %v: %d snapshots completed, failures %v", id, len(h.snaps)-before, h.fails)
	}
	return h.snaps[len(h.snaps)-1]
}

func nodeCP(t *testing.T, s *snapshot.Snapshot, id node.ID) snapshot.NodeCheckpoint {
	t.Helper()
	for _, n := range s.Nodes {
		if n.Node == id {
			return n
		}
	}
	t.Fatalf("node %v not in snapshot (dead %v, excluded %v)", id, s.Dead, s.Excluded)
	return snapshot.NodeCheckpoint{}
}

func defaults(node.ID) snapshot.Config { return snapshot.Config{Interval: time.Second} }

// A request for a cut below the member's number gets its earliest stored
// checkpoint at or above the cut; one above its number makes it checkpoint
// now, stamped with the cut.
func TestRequestAnswersEarliestCheckpointAtOrAboveCut(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	// Node 2 advances alone to cn 5, its state changing each time.
	for i := 1; i <= 5; i++ {
		h.srcs[2].svc.N = i * 10 // state when cn becomes i+1 ... see below
		h.now = h.now.Add(time.Second)
		fx, _ := h.mgrs[2].Tick(h.now)
		h.apply(fx)
	}
	if got := h.mgrs[2].CN(); got != 5 {
		t.Fatalf("node 2 cn = %d, want 5", got)
	}
	// Node 1 is at cn 0: it gathers cut 1; node 2 answers with the
	// checkpoint it took when its number reached 1 (state N=10).
	s := h.gather(1)
	if s.CN != 1 {
		t.Fatalf("cut %d, want 1", s.CN)
	}
	n2 := nodeCP(t, s, 2)
	if n2.CN != 1 || !slices.Equal(n2.State[:9], []byte("state:10:")) {
		t.Errorf("node 2 answered checkpoint %d %q, want checkpoint 1 of state 10", n2.CN, n2.State[:9])
	}
	// Now node 1 gathers again: its number jumped to 5 when node 2's answer
	// arrived, so the cut is 6, beyond node 2's number: node 2 checkpoints
	// now, stamped 6.
	h.srcs[2].svc.N = 99
	s = h.gather(1)
	n2 = nodeCP(t, s, 2)
	if s.CN != 6 || n2.CN != 6 || !slices.Equal(n2.State[:9], []byte("state:99:")) {
		t.Errorf("cut %d: node 2 answered checkpoint %d %q, want a fresh checkpoint 6", s.CN, n2.CN, n2.State[:9])
	}
	// The request itself carries the gatherer's number 6, so the checkpoint
	// is forced by it, before the request is handled.
	if st := h.mgrs[2].Stats(); st.Forced != 1 || st.Periodic != 5 {
		t.Errorf("node 2 stats %+v: want 5 periodic and 1 forced checkpoint", st)
	}
}

// A message with a larger number forces a checkpoint of the state before it
// is handled; messages that crossed the cut are recorded as in flight.
func TestForcedCheckpointAndInFlightRecording(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	h.send(2, 1, 1) // CN 0, will arrive after node 1's checkpoint for cut 1
	h.srcs[1].svc.N = 7
	fx, err := h.mgrs[1].Gather(h.now) // node 1 checkpoints at 1 (state 7)
	if err != nil {
		t.Fatal(err)
	}
	h.apply(fx)
	h.srcs[1].svc.N = 8 // handled after the checkpoint
	h.deliverAll()
	if len(h.snaps) != 1 {
		t.Fatalf("%d snapshots", len(h.snaps))
	}
	s := h.snaps[0]
	if n1 := nodeCP(t, s, 1); !slices.Equal(n1.State[:8], []byte("state:7:")) {
		t.Errorf("gatherer checkpoint %q, want state 7", n1.State[:8])
	}
	var found bool
	for _, ch := range s.Channels {
		if ch.From == 2 && ch.To == 1 {
			found = true
			if !ch.Complete || ch.Lossy || len(ch.Messages) != 1 || ch.Messages[0].Msg.(ping).N != 1 || ch.Messages[0].CN != 0 {
				t.Errorf("channel 2→1 = %+v, want the one ping in flight, complete", ch)
			}
		} else if len(ch.Messages) != 0 || !ch.Complete {
			t.Errorf("channel %v→%v = %+v, want empty and complete", ch.From, ch.To, ch)
		}
	}
	if !found {
		t.Error("no channel 2→1")
	}
	// Node 2 took a forced checkpoint when the request (CN 1) arrived.
	if st := h.mgrs[2].Stats(); st.Forced != 1 || st.CN != 1 {
		t.Errorf("node 2 stats %+v, want one forced checkpoint and cn 1", st)
	}
}

// A message with an in-flight form (node.InFlightFormer) is recorded in
// that form: the snapshot holds the block's index, not its payload; one
// whose form changes its type is refused as a bug in the service.
func TestInFlightFormIsRecorded(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	env := node.Envelope{From: 2, To: 1, Msg: bulk{N: 4, Payload: make([]byte, 16<<10)}}
	h.mgrs[2].Sent(h.now, &env, 16<<10)
	h.q[[2]node.ID{2, 1}] = append(h.q[[2]node.ID{2, 1}], env)
	fx, err := h.mgrs[1].Gather(h.now)
	if err != nil {
		t.Fatal(err)
	}
	h.apply(fx)
	h.deliverAll()
	if len(h.snaps) != 1 {
		t.Fatalf("%d snapshots", len(h.snaps))
	}
	for _, ch := range h.snaps[0].Channels {
		if ch.From == 2 && ch.To == 1 {
			if len(ch.Messages) != 1 {
				t.Fatalf("channel 2→1 = %+v, want the block in flight", ch)
			}
			if m := ch.Messages[0].Msg.(bulk); m.N != 4 || m.Payload != nil {
				t.Errorf("recorded %d with a payload of %d bytes, want block 4 without its payload", m.N, len(m.Payload))
			}
		}
	}
	_, _, err = h.mgrs[1].Deliver(h.now, node.Envelope{From: 2, To: 1, CN: 0, Msg: badForm{}})
	if err == nil {
		t.Error("an in-flight form of another type was recorded")
	}
}

// A datagram carries the number and forces a checkpoint like a message, but
// it is never recorded as in flight: a snapshot treats it as lost.
func TestDatagramsForceCheckpointsAndAreNotRecorded(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	dg := node.Envelope{From: 2, To: 1, Msg: ping{N: 2}, Datagram: true}
	h.mgrs[2].Sent(h.now, &dg, 10)
	h.q[[2]node.ID{2, 1}] = append(h.q[[2]node.ID{2, 1}], dg)
	h.send(2, 1, 1)                    // a message behind the datagram, both with CN 0
	fx, err := h.mgrs[1].Gather(h.now) // node 1 checkpoints at 1
	if err != nil {
		t.Fatal(err)
	}
	h.apply(fx)
	h.deliverAll()
	if len(h.snaps) != 1 {
		t.Fatalf("%d snapshots", len(h.snaps))
	}
	for _, ch := range h.snaps[0].Channels {
		if ch.From == 2 && ch.To == 1 {
			if !ch.Complete || len(ch.Messages) != 1 || ch.Messages[0].Msg.(ping).N != 1 {
				t.Errorf("channel 2→1 = %+v, want the message only", ch)
			}
		}
	}
	before := h.mgrs[2].Stats().Forced
	ok, fx, err := h.mgrs[2].Deliver(h.now, node.Envelope{From: 1, To: 2, CN: 9, Msg: ping{N: 3}, Datagram: true})
	if err != nil || !ok {
		t.Fatalf("deliver datagram: %v %v", ok, err)
	}
	h.apply(fx)
	if st := h.mgrs[2].Stats(); st.Forced != before+1 || st.CN != 9 {
		t.Errorf("node 2 stats %+v after a datagram with CN 9: want a forced checkpoint and cn 9", st)
	}
}

// With a small quota the requested checkpoint is pruned: the member answers
// negatively with its number and the gatherer retries at it.
func TestPrunedCheckpointNegativeAndRetry(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, func(id node.ID) snapshot.Config {
		c := snapshot.Config{Interval: time.Second}
		if id == 2 {
			c.Quota = 1500 // about two checkpoints
		}
		return c
	})
	for i := 1; i <= 10; i++ {
		h.srcs[2].svc.N = i
		h.now = h.now.Add(time.Second)
		fx, _ := h.mgrs[2].Tick(h.now)
		h.apply(fx)
	}
	s := h.gather(1)
	if s.Rounds != 2 || s.CN != 10 || len(s.Nodes) != 2 {
		t.Fatalf("snapshot rounds=%d cut=%d nodes=%d, want 2 rounds at cut 10 with both nodes", s.Rounds, s.CN, len(s.Nodes))
	}
	if st := h.mgrs[2].Stats(); st.Negatives != 1 || st.Pruned == 0 {
		t.Errorf("node 2 stats %+v, want one negative answer and pruned checkpoints", st)
	}
}

// Over the bandwidth cap a member answers negatively and is left out.
func TestBandwidthCapExcludesMember(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, func(id node.ID) snapshot.Config {
		c := snapshot.Config{Interval: time.Second}
		if id == 3 {
			c.BandwidthBits = 8 // 1 byte/s: no answer fits
		}
		if id == 2 {
			c.BandwidthFraction = 0.5 // of its service bytes: none sent yet
		}
		return c
	})
	s := h.gather(1)
	if len(s.Nodes) != 1 || len(s.Excluded) != 2 || s.Excluded[0].Reason != "bandwidth cap" {
		t.Fatalf("snapshot nodes %v excluded %v, want nodes 2 and 3 excluded for bandwidth", s.Nodes, s.Excluded)
	}
	// Node 2 earns allowance by sending service traffic.
	for i := 0; i < 1000; i++ {
		h.send(2, 1, i)
	}
	h.deliverAll()
	s = h.gather(1)
	if len(s.Nodes) != 2 || nodeCP(t, s, 2).Node != 2 {
		t.Fatalf("after traffic: %d nodes, excluded %v, want node 2 included", len(s.Nodes), s.Excluded)
	}
}

// Checkpoints travel compressed, as deltas against the acknowledged one,
// and not at all when unchanged; the gatherer rebuilds them exactly.
func TestCompressionDeltaAndUnchanged(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	want := func(s *snapshot.Snapshot) {
		t.Helper()
		got := nodeCP(t, s, 2).State
		exp, _ := h.srcs[2].Checkpoint()
		if string(got) != string(exp) {
			t.Fatalf("rebuilt checkpoint %q, want %q", got, exp)
		}
	}
	want(h.gather(1)) // full, compressed
	want(h.gather(1)) // identical: not resent
	h.srcs[2].svc.N = 12345
	want(h.gather(1)) // delta
	st := h.mgrs[2].Stats()
	if st.Responses != 3 || st.Unchanged != 1 || st.Deltas != 1 {
		t.Fatalf("stats %+v: want 3 responses, 1 unchanged, 1 delta", st)
	}
	if st.StateBytes*4 > st.RawStateBytes {
		t.Errorf("sent %d payload bytes for %d raw: compression is not working", st.StateBytes, st.RawStateBytes)
	}
}

// A transport error from a member while gathering marks it dead; a change
// of the neighbourhood starts a new round.
func TestDeadMemberAndNeighbourhoodChange(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, defaults)
	fx, _ := h.mgrs[1].Gather(h.now)
	h.apply(fx)
	h.apply(h.mgrs[1].TransportError(h.now, 3))
	delete(h.q, [2]node.ID{1, 3})
	h.deliverAll()
	// Node 2 waits for the channel from node 3 to close until its record
	// timeout, then answers with that channel incomplete.
	h.tick(3 * time.Second)
	h.deliverAll()
	if len(h.snaps) != 1 || !slices.Equal(h.snaps[0].Dead, []node.ID{3}) || len(h.snaps[0].Nodes) != 2 {
		t.Fatalf("snapshots %+v, want one with node 3 dead", h.snaps)
	}

	fx, _ = h.mgrs[1].Gather(h.now)
	h.apply(fx)
	h.srcs[1].svc.nbrs = []node.ID{2} // node 3 is no longer a neighbour
	h.apply(h.mgrs[1].AfterStep(h.now))
	h.deliverAll()
	s := h.snaps[len(h.snaps)-1]
	if s.Rounds != 2 || len(s.Nodes) != 2 || len(s.Dead) != 0 {
		t.Fatalf("after a neighbourhood change: rounds %d nodes %v dead %v, want a second round over {1,2}", s.Rounds, s.Nodes, s.Dead)
	}
}

// Without node.Neighborer the neighbourhood is the recent peers.
func TestRecentPeersNeighbourhood(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3, 4}, defaults)
	for _, src := range h.srcs {
		src.nbrs = false
	}
	h.send(1, 2, 0)
	h.send(3, 1, 0)
	h.deliverAll()
	s := h.gather(1)
	var ids []node.ID
	for _, n := range s.Nodes {
		ids = append(ids, n.Node)
	}
	if !slices.Equal(ids, []node.ID{1, 2, 3}) {
		t.Fatalf("neighbourhood %v, want the recent peers [1 2 3]", ids)
	}
}

// Every checkpoint of a snapshot names the node's recent peers, members or
// not (NodeCheckpoint.Peers): n2 deals with n4, which n1's gather does not
// hold, and a peer older than RecentWindow is forgotten.
func TestCheckpointsRecordRecentPeers(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3, 4}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, RecentWindow: time.Minute}
	})
	for _, src := range h.srcs {
		src.nbrs = false
	}
	h.send(3, 2, 0)
	h.deliverAll()
	h.tick(2 * time.Minute) // n2's dealings with n3 are old now
	h.send(1, 2, 0)
	h.send(4, 2, 0)
	h.deliverAll()
	s := h.gather(1)
	if got := nodeCP(t, s, 1).Peers; !slices.Equal(got, []node.ID{2}) {
		t.Errorf("n1's peers %v, want [n2]", got)
	}
	if got := nodeCP(t, s, 2).Peers; !slices.Equal(got, []node.ID{1, 4}) {
		t.Errorf("n2's peers %v, want [n1 n4] (n4 outside the snapshot; n3 too long ago)", got)
	}
}

// A reset loses the stored checkpoints but not the number: a request for an
// earlier cut is refused, and the next gather retries above it.
func TestResetKeepsNumberLosesCheckpoints(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	h.tick(time.Second)
	h.tick(time.Second) // both at cn 2
	h.apply(h.mgrs[2].Reset(h.now))
	if h.mgrs[2].CN() != 2 || h.mgrs[2].Stats().Stored != 0 {
		t.Fatalf("after reset: cn %d stored %d, want cn 2 and nothing stored", h.mgrs[2].CN(), h.mgrs[2].Stats().Stored)
	}
	// Node 1's gather is for cut 3 > 2: node 2 checkpoints afresh.
	s := h.gather(1)
	if s.CN != 3 || nodeCP(t, s, 2).CN != 3 {
		t.Fatalf("cut %d, want 3 with node 2's fresh checkpoint", s.CN)
	}
}

func TestConfigAndMisuseErrors(t *testing.T) {
	reg, _ := node.NewRegistry(ping{})
	src := &fakeSrc{svc: &fakeSvc{}}
	if _, err := snapshot.New(snapshot.Config{}, 1, src); err == nil {
		t.Error("New without a registry succeeded")
	}
	if _, err := snapshot.New(snapshot.Config{Registry: reg, Interval: -1}, 1, src); err == nil {
		t.Error("New with a negative interval succeeded")
	}
	m, err := snapshot.New(snapshot.Config{Registry: reg}, 1, src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Gather(t0); !errors.Is(err, snapshot.ErrNotStarted) {
		t.Errorf("Gather before Start: %v, want ErrNotStarted", err)
	}
	m.Start(t0)
	if _, err := m.Gather(t0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Gather(t0); !errors.Is(err, snapshot.ErrGatherInProgress) {
		t.Errorf("second Gather: %v, want ErrGatherInProgress", err)
	}
	src.fail = true
	if _, err := m.Tick(t0.Add(time.Hour)); err == nil || err.Error()[:9] != "snapshot:" {
		t.Errorf("Tick with a failing source: %v, want a snapshot: error", err)
	}
	_ = zap.NewNop()
}

// With GatherOnChange a neighbourhood change since the last gather starts a
// gather by itself.
func TestGatherOnChange(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2, 3}, func(node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{GatherOnChange: true}}
	})
	h.gather(1)
	h.apply(h.mgrs[1].AfterStep(h.now)) // unchanged: nothing
	if h.mgrs[1].Gathering() {
		t.Fatal("gather started without a change")
	}
	h.srcs[1].svc.nbrs = []node.ID{3}
	h.apply(h.mgrs[1].AfterStep(h.now))
	if !h.mgrs[1].Gathering() {
		t.Fatal("no gather after a neighbourhood change")
	}
	h.deliverAll()
	s := h.snaps[len(h.snaps)-1]
	if len(s.Nodes) != 2 || s.Nodes[1].Node != 3 {
		t.Fatalf("snapshot of %d nodes, want {1, 3}", len(s.Nodes))
	}
}

// Malformed requests are counted and ignored.
func TestMalformedRequestIgnored(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	for _, r := range []snapshot.Request{
		{Gather: 1, CR: 0, Members: []node.ID{1, 2}},    // cut 0
		{Gather: 1, CR: 1, Members: []node.ID{2, 1}},    // not ascending
		{Gather: 1, CR: 1, Members: []node.ID{1}},       // receiver not a member
		{Gather: 1, CR: 1, Members: []node.ID{2, 3, 4}}, // sender not a member
	} {
		ok, fx, err := h.mgrs[2].Deliver(h.now, node.Envelope{From: 1, To: 2, CN: 0, Msg: r})
		if ok || err != nil || len(fx.Sends) != 0 {
			t.Errorf("request %+v: deliver=%v err=%v sends=%d, want it consumed and ignored", r, ok, err, len(fx.Sends))
		}
	}
	if got := h.mgrs[2].Stats().BadMessages; got != 4 {
		t.Errorf("BadMessages = %d, want 4", got)
	}
}

// A checkpoint over MaxCheckpointSize is refused, not sent.
func TestOversizedCheckpointRefused(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, func(id node.ID) snapshot.Config {
		return snapshot.Config{Interval: time.Second, LimitsConfig: snapshot.LimitsConfig{MaxCheckpointSize: 100}}
	})
	s := h.gather(1)
	if len(s.Nodes) != 1 || len(s.Excluded) != 1 || s.Excluded[0].Node != 2 {
		t.Fatalf("nodes %d excluded %v, want node 2 refused", len(s.Nodes), s.Excluded)
	}
}

// Numbers above MaxCN from a peer are ignored, so they cannot exhaust the
// number space.
func TestHostileCheckpointNumbersIgnored(t *testing.T) {
	h := newHarness(t, []node.ID{1, 2}, defaults)
	ok, _, err := h.mgrs[2].Deliver(h.now, node.Envelope{From: 1, To: 2, CN: ^uint64(0), Msg: ping{}})
	if !ok || err != nil || h.mgrs[2].CN() != 0 {
		t.Fatalf("deliver=%v err=%v cn=%d, want the message delivered and the number ignored", ok, err, h.mgrs[2].CN())
	}
	_, fx, _ := h.mgrs[2].Deliver(h.now, node.Envelope{From: 1, To: 2, Msg: snapshot.Request{Gather: 1, CR: snapshot.MaxCN + 1, Members: []node.ID{1, 2}}})
	if len(fx.Sends) != 0 || h.mgrs[2].CN() != 0 || h.mgrs[2].Stats().BadMessages != 2 {
		t.Fatalf("hostile request: %d sends, cn %d, stats %+v", len(fx.Sends), h.mgrs[2].CN(), h.mgrs[2].Stats())
	}
}

func TestSnapshotView(t *testing.T) {
	reg, _ := node.NewRegistry(chat{})
	// A lone chatter (no neighbours): the snapshot holds node 1 alone.
	core, _ := node.NewCore(node.CoreConfig{ID: 1, Factory: func() node.Service { return &chatter{Nodes: 1} }})
	if _, err := core.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	m, _ := snapshot.New(snapshot.Config{Registry: reg}, 1, core)
	m.Start(t0)
	fx, _ := m.Gather(t0)
	var s *snapshot.Snapshot
	for i := 1; s == nil && i < 20; i++ {
		for _, env := range fx.Sends {
			if env.To == 1 {
				_, fx2, _ := m.Deliver(t0, env)
				if len(fx2.Snapshots) > 0 {
					s = fx2.Snapshots[0]
				}
			}
		}
		fx, _ = m.Tick(t0.Add(time.Duration(i) * time.Second))
		if len(fx.Snapshots) > 0 {
			s = fx.Snapshots[0]
		}
	}
	if s == nil {
		t.Fatal("no snapshot")
	}
	v, err := s.Decode(func() node.Service { return &chatter{Nodes: 3} })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Nodes(), []node.ID{1}) || v.Service(1) == nil || !v.TimerScheduled(1, "tick") || v.Service(2) != nil || v.TimerScheduled(2, "tick") {
		t.Fatalf("view nodes %v, service(1)=%v", v.Nodes(), v.Service(1))
	}
	s.Nodes[0].State = []byte{0xC1, 0xff}
	if _, err := s.Decode(func() node.Service { return &chatter{} }); !errors.Is(err, node.ErrBadCheckpoint) {
		t.Fatalf("corrupt checkpoint: %v", err)
	}
}

// A neighbourhood that changes during every round gives the gather up after
// MaxRounds rounds; with FinishLastRound the last round finishes with the
// members it asked (node 3 stays in it although it left the
// neighbourhood during it).
func TestFinishLastRound(t *testing.T) {
	for _, finish := range []bool{false, true} {
		h := newHarness(t, []node.ID{1, 2, 3}, func(node.ID) snapshot.Config {
			return snapshot.Config{Interval: time.Second, GatherConfig: snapshot.GatherConfig{MaxRounds: 2, FinishLastRound: finish}}
		})
		h.srcs[1].svc.nbrs = []node.ID{2}
		fx, _ := h.mgrs[1].Gather(h.now)
		h.apply(fx)
		for _, nbrs := range [][]node.ID{{2, 3}, {2}} { // a change in each round
			h.srcs[1].svc.nbrs = nbrs
			h.apply(h.mgrs[1].AfterStep(h.now))
		}
		h.deliverAll()
		switch {
		case !finish && (len(h.snaps) != 0 || len(h.fails) != 1 || h.fails[0].Reason != "neighbourhood changed in the last round"):
			t.Errorf("without FinishLastRound: snapshots %d, failures %+v; want one failure", len(h.snaps), h.fails)
		case finish && (len(h.fails) != 0 || len(h.snaps) != 1 || h.snaps[0].Rounds != 2 || len(h.snaps[0].Nodes) != 3):
			t.Errorf("with FinishLastRound: failures %+v, snapshots %d; want one of round 2 over {1,2,3}", h.fails, len(h.snaps))
		}
	}
}
