package emulation_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/snapshot"
)

// Blob is the link tests' message: a sequence number and a payload that
// sets its wire size.
type Blob struct {
	Seq int
	Pad []byte
}

func (Blob) MessageType() string { return "test.blob" }

// Push is an application call: send N Blobs of Size payload bytes to To,
// with TrySend when Try is set.
type Push struct {
	To   node.ID
	N    int
	Size int
	Try  bool
	// Datagram sends with SendDatagram instead.
	Datagram bool
}

func (Push) MessageType() string { return "test.push" }

// blobSvc sends Blobs on Push, records when each arrives and which sends
// were refused (and when); with Retry, it retries a refused send at once
// from HandleSendRefused (the runaway the emulator must stop).
type blobSvc struct {
	Next     int
	RecvAt   []int64 // virtual ns since Epoch, in arrival order
	RecvSeq  []int
	RecvFrom []node.ID
	Refused  []int   // Seq of refused sends, in refusal order
	RefAt    []int64 // when HandleSendRefused ran
	Retry    bool
	Timed    bool // push 4 TrySends of 1000 bytes to n2 at 2s (timer "push")
}

func (s *blobSvc) Init(env node.Env) {
	if s.Timed && env.Self() == 1 {
		env.SetTimer("push", 2*time.Second)
	}
}

func (s *blobSvc) HandleMessage(env node.Env, from node.ID, m node.Message) {
	s.RecvFrom = append(s.RecvFrom, from)
	s.RecvAt = append(s.RecvAt, env.Now().Sub(emulation.Epoch).Nanoseconds())
	s.RecvSeq = append(s.RecvSeq, m.(Blob).Seq)
}

func (s *blobSvc) HandleTimer(env node.Env, _ string) {
	s.HandleApp(env, Push{To: 2, N: 4, Size: 1000, Try: true})
}

func (s *blobSvc) HandleApp(env node.Env, call node.Message) {
	p := call.(Push)
	for i := 0; i < p.N; i++ {
		b := Blob{Seq: s.Next, Pad: make([]byte, p.Size)}
		s.Next++
		switch {
		case p.Datagram:
			env.SendDatagram(p.To, b)
		case p.Try:
			env.TrySend(p.To, b)
		default:
			env.Send(p.To, b)
		}
	}
}

func (s *blobSvc) HandleTransportError(node.Env, node.ID) {}

func (s *blobSvc) HandleSendRefused(env node.Env, to node.ID, m node.Message) {
	s.Refused = append(s.Refused, m.(Blob).Seq)
	s.RefAt = append(s.RefAt, env.Now().Sub(emulation.Epoch).Nanoseconds())
	if s.Retry {
		env.TrySend(to, m)
	}
}

var _ node.SendRefusedHandler = (*blobSvc)(nil)

func blobSpec(retry bool) node.Spec {
	return node.Spec{
		Name:     "blob",
		New:      func() node.Service { return &blobSvc{Retry: retry} },
		Messages: []node.Message{Blob{}, Push{}},
	}
}

// wire returns the wire size of a Blob of pad payload bytes from 1 to 2
// (frame header and envelope: what the live transport would write).
func wire(t *testing.T, pad int) int {
	t.Helper()
	reg, err := node.NewRegistry(Blob{}, Push{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := reg.AppendEnvelope(nil, node.Envelope{From: 1, To: 2, Msg: Blob{Pad: make([]byte, pad)}})
	if err != nil {
		t.Fatal(err)
	}
	return node.FrameHeaderLen + len(b)
}

// linked builds an emulator of blobSvc on the exact 10 ms network with the
// given links, every node started at Epoch, run to 1s.
func linked(t *testing.T, nodes int, netw emulation.NetworkConfig, retry bool) (*emulation.Emulator, *bytes.Buffer) {
	t.Helper()
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec:        blobSpec(retry),
		Nodes:       nodes,
		Seed:        1,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Network:     netw,
		Observers:   emulation.Observers{Trace: &trace},
	})
	run(t, e, time.Second)
	return e, &trace
}

func blob(t testing.TB, e *emulation.Emulator, id node.ID) *blobSvc {
	t.Helper()
	return e.Core(id).Service().(*blobSvc)
}

// 8 Mb/s is one byte per microsecond, 16 Mb/s half a microsecond.
const (
	mbps8  = 8_000_000
	mbps16 = 16_000_000
)

// TestLinkDeliveryTime: a message of S bytes leaves the uplink after
// S·8/up, crosses the 10 ms link, and is in after S·8/down more.
func TestLinkDeliveryTime(t *testing.T) {
	s := wire(t, 1000)
	e, _ := linked(t, 2, emulation.NetworkConfig{Uplink: mbps8, Downlink: mbps16}, false)
	app(t, e, 1, Push{To: 2, N: 1, Size: 1000})
	run(t, e, 2*time.Second)
	want := ns(time.Second) + int64(s)*1000 + ns(lat) + int64(s)*500
	if got := blob(t, e, 2).RecvAt; !slices.Equal(got, []int64{want}) {
		t.Fatalf("n2 received at %v, want [%d] (wire size %d bytes)", got, want, s)
	}
	r := e.Result()
	if r.Links == nil || r.Links.ServiceBytes != int64(s) || r.Links.ServiceMessages != 1 || r.Links.LayerBytes != 0 {
		t.Fatalf("links = %+v, want %d service bytes in 1 message", r.Links, s)
	}
	if l := e.NodeLinks(1); l.ServiceBytes != int64(s) || e.NodeLinks(2).ServiceBytes != 0 {
		t.Fatalf("per node: n1 %+v, n2 %+v", l, e.NodeLinks(2))
	}
	if want := fmt.Sprintf("links: service %d B in 1 messages, layer 0 B in 0 messages, refused 0", s); !strings.Contains(r.String(), want) {
		t.Fatalf("Result.String() has no %q:\n%s", want, r)
	}
}

// TestUplinkFIFOAcrossPeers: two messages to different peers share the
// sender's uplink: the second leaves only after the first.
func TestUplinkFIFOAcrossPeers(t *testing.T) {
	s := int64(wire(t, 2000))
	e, _ := linked(t, 3, emulation.NetworkConfig{Uplink: mbps8}, false)
	if err := e.AppCall(1, Push{To: 2, N: 1, Size: 2000}); err != nil {
		t.Fatal(err)
	}
	app(t, e, 1, Push{To: 3, N: 1, Size: 2000})
	run(t, e, 2*time.Second)
	if got, want := blob(t, e, 2).RecvAt, ns(time.Second)+s*1000+ns(lat); !slices.Equal(got, []int64{want}) {
		t.Fatalf("n2 received at %v, want [%d]", got, want)
	}
	if got, want := blob(t, e, 3).RecvAt, ns(time.Second)+2*s*1000+ns(lat); !slices.Equal(got, []int64{want}) {
		t.Fatalf("n3 received at %v, want [%d] (behind n2's on the uplink)", got, want)
	}
	if l := e.Result().Links; l.UplinkWaitMax != time.Duration(s*1000) || l.UplinkWaitMean != time.Duration(s*1000/2) {
		t.Fatalf("uplink waits: %+v", l)
	}
}

// TestDownlinkQueue: two senders' messages reach one receiver at the same
// instant and are serialised one after the other on its downlink.
func TestDownlinkQueue(t *testing.T) {
	s := int64(wire(t, 3000))
	e, _ := linked(t, 3, emulation.NetworkConfig{Downlink: mbps8}, false)
	app(t, e, 1, Push{To: 3, N: 1, Size: 3000})
	app(t, e, 2, Push{To: 3, N: 1, Size: 3000})
	run(t, e, 2*time.Second)
	base := ns(time.Second) + ns(lat)
	if got, want := blob(t, e, 3).RecvAt, []int64{base + s*1000, base + 2*s*1000}; !slices.Equal(got, want) {
		t.Fatalf("n3 received at %v, want %v", got, want)
	}
	if l := e.Result().Links; l.DownlinkWaitMax != time.Duration(s*1000) || l.UplinkWaitMax != 0 {
		t.Fatalf("waits: %+v", l)
	}
}

// TestChannelStaysFIFOWithLinks: many messages of different sizes on one
// channel, interleaved with another sender's, arrive in send order.
func TestChannelStaysFIFOWithLinks(t *testing.T) {
	e, _ := linked(t, 3, emulation.INETAccessLinks(emulation.NetworkConfig{}), false)
	for i := 0; i < 20; i++ {
		app(t, e, 1, Push{To: 3, N: 1, Size: (i % 5) * 700})
		app(t, e, 2, Push{To: 3, N: 2, Size: 100})
	}
	run(t, e, 5*time.Second)
	got := blob(t, e, 3)
	if len(got.RecvSeq) != 60 {
		t.Fatalf("n3 got %d messages, want 60", len(got.RecvSeq))
	}
	// Sequence numbers count each sender's sends: n1's 0..19, n2's 0..39,
	// each received in order.
	next := map[node.ID]int{}
	for i, q := range got.RecvSeq {
		from := got.RecvFrom[i]
		if q != next[from] {
			t.Fatalf("message %d from %v has seq %d, want %d (received %v from %v)", i, from, q, next[from], got.RecvSeq, got.RecvFrom)
		}
		next[from]++
	}
}

// TestRefusalWhenQueueFull: with a 2.5-message send queue, TrySends beyond
// it are refused at once — HandleSendRefused runs at the send's instant,
// before anything else of the sender — and a TrySend is accepted again
// once the uplink drained the queue; Send is never refused.
func TestRefusalWhenQueueFull(t *testing.T) {
	s := wire(t, 1000)
	e, trace := linked(t, 2, emulation.NetworkConfig{Uplink: mbps8, SendQueueBytes: s*5/2 + 1}, false)
	app(t, e, 1, Push{To: 2, N: 4, Try: true, Size: 1000})
	n1 := blob(t, e, 1)
	if !slices.Equal(n1.Refused, []int{2, 3}) || !slices.Equal(n1.RefAt, []int64{ns(time.Second), ns(time.Second)}) {
		t.Fatalf("refused %v at %v, want [2 3] at 1s", n1.Refused, n1.RefAt)
	}
	if q := e.SendQueue(1, 2); q != 2*s {
		t.Fatalf("send queue = %d bytes, want %d", q, 2*s)
	}
	// The first message has left the uplink after S µs: room for one more.
	run(t, e, time.Second+time.Duration(s)*time.Microsecond)
	app(t, e, 1, Push{To: 2, N: 1, Try: true, Size: 1000})
	if n1 := blob(t, e, 1); len(n1.Refused) != 2 {
		t.Fatalf("refused %v after the queue drained, want still [2 3]", n1.Refused)
	}
	// Send is never refused, however full the queue.
	app(t, e, 1, Push{To: 2, N: 10, Size: 1000})
	run(t, e, 3*time.Second)
	if got := blob(t, e, 2).RecvSeq; !slices.Equal(got, []int{0, 1, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}) {
		t.Fatalf("n2 received %v", got)
	}
	r := e.Result()
	if r.Links.Refused != 2 || r.EventsByKind["send-refused"] != 2 || r.Messages.Sent != 13 || r.Messages.Delivered != 13 {
		t.Fatalf("result: links %+v, events %v, messages %+v", r.Links, r.EventsByKind, r.Messages)
	}
	// The trace shows the refusals right after the step that sent them.
	lines := strings.Split(trace.String(), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, "n1 app test.push") })
	if i < 0 || i+2 >= len(lines) ||
		!strings.HasPrefix(lines[i+1], "00:00:01.000000000 n1 send-refused test.blob to n2 -> hash=") ||
		!strings.HasPrefix(lines[i+2], "00:00:01.000000000 n1 send-refused test.blob to n2 -> hash=") {
		t.Fatalf("trace around the refusals:\n%s", strings.Join(lines[max(i, 0):min(i+4, len(lines))], "\n"))
	}
}

// TestRefusalLoopFails: a service that answers every refusal with the
// same TrySend, without letting time pass, fails the run with an error
// naming the node, the peer and the seed.
func TestRefusalLoopFails(t *testing.T) {
	e, _ := linked(t, 2, emulation.NetworkConfig{Uplink: mbps8, SendQueueBytes: 100}, true)
	err := e.AppCall(1, Push{To: 2, N: 2, Try: true, Size: 1000})
	if !errors.Is(err, emulation.ErrRefusalLoop) {
		t.Fatalf("AppCall = %v, want ErrRefusalLoop", err)
	}
	for _, want := range []string{"node n1", "to n2", "seed=1", "1000 refused sends"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// TestLinksSameSeedSameResult: with the INET links, a gossip run with
// churn (12 nodes, one virtual minute) is still a pure function of its
// seed.
func TestLinksSameSeedSameResult(t *testing.T) {
	const seed = 4242
	logSeedOnFailure(t, seed)
	cfg := gossipConfig(seed, 12, 4, nil)
	cfg.Duration = time.Minute
	cfg.Network = emulation.INETAccessLinks(emulation.NetworkConfig{})
	a, ra := runTrace(t, cfg)
	b, rb := runTrace(t, cfg)
	if a != b {
		t.Fatalf("two runs with seed %d gave different traces", seed)
	}
	ra.WallTime, rb.WallTime = 0, 0
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("results differ:\n%s\n%s", ja, jb)
	}
	if ra.Links == nil || ra.Links.ServiceMessages == 0 || ra.Messages.Delivered == 0 {
		t.Fatalf("links %+v, messages %+v", ra.Links, ra.Messages)
	}
	// Bandwidth off (baseRun, the same configuration with another seed): no
	// link account, as before.
	_, rc := baseRun(t)
	if rc.Links != nil {
		t.Fatalf("links without bandwidth: %+v", rc.Links)
	}
}

// TestLayerTrafficOnLinks: the snapshot protocol's messages use the same
// links and are counted apart from the service's. The run is
// snapshotConfig's cut to 15 virtual seconds (a gather every 3 s at four
// gatherers): enough for both kinds of traffic.
func TestLayerTrafficOnLinks(t *testing.T) {
	const seed = 77
	logSeedOnFailure(t, seed)
	cfg := snapshotConfig(seed, nil)
	cfg.Duration = 15 * time.Second
	cfg.Network = emulation.INETAccessLinks(emulation.NetworkConfig{})
	_, r := runTrace(t, cfg)
	if r.Links == nil || r.Links.LayerMessages == 0 || r.Links.LayerBytes == 0 || r.Links.ServiceBytes == 0 {
		t.Fatalf("links %+v", r.Links)
	}
	if r.Snapshots == nil || r.Snapshots.Gathers == 0 {
		t.Fatalf("snapshots %+v", r.Snapshots)
	}
}

// TestLinkConfigErrors: negative capacities and bounds are rejected.
func TestLinkConfigErrors(t *testing.T) {
	for _, n := range []emulation.NetworkConfig{{Uplink: -1}, {Downlink: -5}, {SendQueueBytes: -1}} {
		_, err := emulation.New(emulation.Config{Spec: blobSpec(false), Nodes: 2, Network: n})
		if err == nil || !strings.HasPrefix(err.Error(), "emulation: Config.Network.") {
			t.Errorf("New(%+v) = %v, want an emulation: Config.Network error", n, err)
		}
	}
}

// muteBlob is blobSvc without HandleSendRefused: a refusal is a silent
// loss for it.
type muteBlob struct{ B blobSvc }

func (m *muteBlob) Init(env node.Env) { m.B.Init(env) }
func (m *muteBlob) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	m.B.HandleMessage(env, from, msg)
}
func (m *muteBlob) HandleTimer(env node.Env, name string)        { m.B.HandleTimer(env, name) }
func (m *muteBlob) HandleApp(env node.Env, call node.Message)    { m.B.HandleApp(env, call) }
func (m *muteBlob) HandleTransportError(env node.Env, p node.ID) { m.B.HandleTransportError(env, p) }

// TestRefusalWithoutHandler: a service that sends with TrySend but has no
// HandleSendRefused loses the refused message silently; the run goes on
// and the trace still shows the refusal.
func TestRefusalWithoutHandler(t *testing.T) {
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec: node.Spec{Name: "mute", New: func() node.Service { return &muteBlob{} },
			Messages: []node.Message{Blob{}, Push{}}},
		Nodes:       2,
		Seed:        1,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Network:     emulation.NetworkConfig{Uplink: mbps8, SendQueueBytes: 100},
		Observers:   emulation.Observers{Trace: &trace},
	})
	run(t, e, time.Second)
	app(t, e, 1, Push{To: 2, N: 3, Try: true, Size: 500})
	run(t, e, 2*time.Second)
	if got := e.Core(2).Service().(*muteBlob).B.RecvSeq; !slices.Equal(got, []int{0}) {
		t.Fatalf("n2 received %v, want [0]", got)
	}
	if n := strings.Count(trace.String(), "n1 send-refused test.blob to n2"); n != 2 {
		t.Fatalf("%d refusal lines in the trace, want 2", n)
	}
}

// TestRefusalBeforeCheckpointTick: a checkpoint tick due at the instant of
// a step whose TrySends are refused (queued behind that step) comes after
// the refusals: nothing separates a send from its refusal.
func TestRefusalBeforeCheckpointTick(t *testing.T) {
	var order []string
	e := mustNew(t, emulation.Config{
		Spec: node.Spec{Name: "blob", New: func() node.Service { return &blobSvc{Timed: true} },
			Messages: []node.Message{Blob{}, Push{}}},
		Nodes:       2,
		Seed:        1,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Network:     emulation.NetworkConfig{Uplink: mbps8, SendQueueBytes: 100},
		Snapshots: &emulation.SnapshotConfig{
			Manager: snapshot.Config{Interval: 2 * time.Second},
			OnCheckpoint: func(c emulation.CheckpointEvent) {
				if c.Node == 1 && c.At == 2*time.Second {
					order = append(order, "checkpoint")
				}
			},
		},
		Observers: emulation.Observers{OnStep: func(s emulation.Step) {
			if s.Node == 1 && s.At == 2*time.Second {
				order = append(order, s.Event.Kind.String())
			}
		}},
	})
	run(t, e, 3*time.Second)
	want := []string{"timer", "send-refused", "send-refused", "send-refused", "checkpoint"}
	if !slices.Equal(order, want) {
		t.Fatalf("n1 at 2s: %v, want %v", order, want)
	}
}

// TestDatagramsUseTheLinks: a datagram takes its turn on the sender's
// uplink behind a message to another peer, and on the receiver's downlink.
func TestDatagramsUseTheLinks(t *testing.T) {
	// A datagram's envelope differs from a message's in its first byte
	// only: the same wire size S.
	s := int64(wire(t, 1000))
	reg, _ := node.NewRegistry(Blob{}, Push{})
	if b, _ := reg.AppendEnvelope(nil, node.Envelope{From: 1, To: 3, Datagram: true, Msg: Blob{Seq: 1, Pad: make([]byte, 1000)}}); int64(len(b)+node.FrameHeaderLen) != s {
		t.Fatalf("datagram wire size %d, want %d", len(b)+node.FrameHeaderLen, s)
	}
	d := s
	e, _ := linked(t, 3, emulation.NetworkConfig{Uplink: mbps8, Downlink: mbps16}, false)
	app(t, e, 1, Push{To: 2, N: 1, Size: 1000})
	app(t, e, 1, Push{To: 3, N: 1, Size: 1000, Datagram: true})
	run(t, e, 2*time.Second)
	if got, want := blob(t, e, 3).RecvAt, ns(time.Second)+(s+d)*1000+ns(lat)+d*500; !slices.Equal(got, []int64{want}) {
		t.Fatalf("n3's datagram arrived at %v, want [%d]", got, want)
	}
	if r := e.Result(); r.Links.ServiceMessages != 2 || r.Links.ServiceBytes != s+d {
		t.Fatalf("links %+v", r.Links)
	}
}

// TestInFlightFIFOWithLinks: while a large message is being serialised on
// its receiver's downlink, a later small one of the same channel that has
// already reached that downlink is listed after it.
func TestInFlightFIFOWithLinks(t *testing.T) {
	big, small := int64(wire(t, 10_000)), int64(wire(t, 10))
	e, _ := linked(t, 2, emulation.NetworkConfig{Uplink: mbps8, Downlink: mbps8}, false)
	app(t, e, 1, Push{To: 2, N: 1, Size: 10_000})
	app(t, e, 1, Push{To: 2, N: 1, Size: 10})
	// The big one leaves the uplink at 1s+big µs, the small one small µs
	// later; both reach n2's downlink 10 ms after, and the big one takes
	// big µs there: halfway through the small one's way, the big one is
	// on the downlink until long after the small one arrives there.
	mid := time.Second + lat + time.Duration(big+small/2)*time.Microsecond
	run(t, e, mid)
	var seqs []int
	for _, env := range e.InFlight() {
		seqs = append(seqs, env.Msg.(Blob).Seq)
	}
	if !slices.Equal(seqs, []int{0, 1}) {
		t.Fatalf("in flight at %v: seqs %v, want [0 1]", mid, seqs)
	}
	run(t, e, 2*time.Second)
	if got := blob(t, e, 2).RecvSeq; !slices.Equal(got, []int{0, 1}) {
		t.Fatalf("n2 received %v", got)
	}
}
