package live

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"

	"github.com/hashicorp/memberlist"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// sendNote is the app call of noteSvc: send a note to To.
type sendNote struct {
	To   node.ID
	Text string
	// Retry makes the service send again whenever the connection to To
	// breaks.
	Retry bool
	// Datagram sends the note as a datagram (Env.SendDatagram).
	Datagram bool
}

func (sendNote) MessageType() string { return "test.sendNote" }

// timerCall is an app call of noteSvc: set (After) or cancel its timer
// Name.
type timerCall struct {
	Name   string
	After  time.Duration
	Cancel bool
}

func (timerCall) MessageType() string { return "test.timerCall" }

// trySend is an app call of noteSvc: send itself SelfNote (unless empty),
// then TrySend Count tryNotes numbered from First to To, each with Pad
// bytes of padding. Retry makes the service TrySend again at once every
// tryNote refused from now on.
type trySend struct {
	To           node.ID
	First, Count int
	Pad          int
	SelfNote     string
	Retry        bool
}

func (trySend) MessageType() string { return "test.trySend" }

// tryNote is what trySend sends.
type tryNote struct {
	Seq int
	Pad string
}

func (tryNote) MessageType() string { return "test.tryNote" }

// noteSvc records the notes it receives, the refusals of its TrySends
// ("refused:n99:3" in Got) and the peers whose connections broke.
type noteSvc struct {
	Got          []string
	Broken       []node.ID
	RetryTo      node.ID
	RetryRefused bool
}

func (s *noteSvc) Init(env node.Env) {
	env.SetTimer("tick", 20*time.Millisecond)
	env.SetTimer("cancelled", 40*time.Millisecond)
}
func (s *noteSvc) HandleMessage(env node.Env, from node.ID, msg node.Message) {
	if n, ok := msg.(note); ok {
		s.Got = append(s.Got, from.String()+":"+n.Text)
	}
	if n, ok := msg.(tryNote); ok {
		s.Got = append(s.Got, fmt.Sprintf("%v:try:%d", from, n.Seq))
	}
}
func (s *noteSvc) HandleTimer(env node.Env, name string) {
	s.Got = append(s.Got, "timer:"+name)
	if name == "tick" {
		env.CancelTimer("cancelled")
	}
}
func (s *noteSvc) HandleApp(env node.Env, call node.Message) {
	if c, ok := call.(sendNote); ok && c.Datagram {
		env.SendDatagram(c.To, note{Text: c.Text})
	} else if ok {
		env.Send(c.To, note{Text: c.Text})
		if c.Retry {
			s.RetryTo = c.To
		}
	}
	if c, ok := call.(trySend); ok {
		s.trySend(env, c)
	}
	if c, ok := call.(timerCall); ok {
		if c.Cancel {
			env.CancelTimer(c.Name)
			s.Got = append(s.Got, "cancel:"+c.Name)
		} else {
			env.SetTimer(c.Name, c.After)
			s.Got = append(s.Got, "set:"+c.Name)
		}
	}
}

func (s *noteSvc) HandleSendRefused(env node.Env, to node.ID, msg node.Message) {
	if n, ok := msg.(tryNote); ok {
		s.Got = append(s.Got, fmt.Sprintf("refused:%v:%d", to, n.Seq))
	}
	if s.RetryRefused {
		env.TrySend(to, msg) // what node.SendRefusedHandler asks not to do
	}
}

func (s *noteSvc) trySend(env node.Env, c trySend) {
	if c.SelfNote != "" {
		env.Send(env.Self(), note{Text: c.SelfNote})
	}
	s.RetryRefused = s.RetryRefused || c.Retry
	pad := strings.Repeat("x", c.Pad)
	for i := range c.Count {
		env.TrySend(c.To, tryNote{Seq: c.First + i, Pad: pad})
	}
}

func (s *noteSvc) HandleTransportError(env node.Env, peer node.ID) {
	s.Broken = append(s.Broken, peer)
	if peer == s.RetryTo {
		env.Send(peer, note{Text: "retry"})
	}
}

func noteSpec() node.Spec {
	return node.Spec{Name: "notes", New: func() node.Service { return &noteSvc{} }, Messages: []node.Message{note{}, joinMsg{}, sendNote{}, timerCall{}, trySend{}, tryNote{}}}
}

func startNoteNode(t *testing.T, id node.ID, logger *zap.Logger, join ...string) *Runtime {
	t.Helper()
	return startNoteNodeWith(t, id, logger, func(*RuntimeConfig) {}, join...)
}

func startNoteNodeWith(t *testing.T, id node.ID, logger *zap.Logger, tune func(*RuntimeConfig), join ...string) *Runtime {
	t.Helper()
	cfg := DefaultRuntimeConfig()
	cfg.ID = id
	cfg.Join = join
	cfg.Label = "test"
	cfg.Logger = logger
	cfg.Transport.MaxFrameSize = 4096
	cfg.JoinTimeout = waitDeadline // a join that must succeed, on any load
	tune(&cfg)
	r, err := NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(context.Background()) })
	return r
}

func noteState(t *testing.T, r *Runtime) noteSvc {
	t.Helper()
	var s noteSvc
	st := r.Status()
	if err := json.Unmarshal(st.State, &s); err != nil {
		t.Fatalf("status state %s: %v", st.State, err)
	}
	return s
}

// waitDeadline bounds waitFor: generous, because a loaded machine (the
// race detector, test binaries side by side) can slow a runtime tenfold,
// and only a hang should fail a test.
const waitDeadline = 30 * time.Second

// waitFor polls cond until it holds, failing t after waitDeadline.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", waitDeadline, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func gotNote(t *testing.T, r *Runtime, want string) func() bool {
	return func() bool { return slices.Contains(noteState(t, r).Got, want) }
}

// attack opens a raw connection to addr, sends the payload frames (after a
// valid hello from node 99 when hello is set) and reports whether the node
// closed the connection.
func attack(t *testing.T, addr string, withHello bool, raw []byte) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, waitDeadline)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A hang guard: the node closes at once, however long a loaded
	// machine takes to get to it.
	conn.SetDeadline(time.Now().Add(waitDeadline))
	if withHello {
		if err := writeHelloFrame(conn, hello{kind: helloData, id: 99, label: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := readHelloFrame(conn); err != nil {
			t.Fatalf("hello: %v", err)
		}
	}
	if _, err := conn.Write(raw); err != nil {
		t.Fatal(err)
	}
	var b [1]byte
	if _, err := conn.Read(b[:]); err == nil {
		t.Fatal("node sent data on an inbound connection")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("node did not close the connection")
	}
}

// TestRuntimeDisconnectsBadPeers: a peer that sends garbage, an oversized
// frame, a frame with a bad checksum or an envelope of an unknown message
// type is disconnected with a logged reason, the service hears of the
// broken connection, and the node keeps exchanging messages with a good
// peer throughout.
func TestRuntimeDisconnectsBadPeers(t *testing.T) {
	defer livetest.VerifyNone(t)
	core, logs := observer.New(zapcore.DebugLevel)
	n1 := startNoteNode(t, 1, zap.New(core))
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	if got := n2.Bootstrap(); !slices.Equal(got, []node.ID{1}) {
		t.Fatalf("bootstrap = %v", got)
	}
	if err := n2.Submit(sendNote{To: 1, Text: "before"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get the first note", gotNote(t, n1, "n2:before"))

	unknown := []byte{envelopeFormatV1}
	for _, v := range []uint64{99, 1, 0, uint64(len("test.nope"))} {
		unknown = binary.AppendUvarint(unknown, v)
	}
	unknown = append(append(unknown, "test.nope"...), 0x90)
	badSum := AppendFrame(nil, []byte("payload"))
	badSum[5] ^= 0xff
	attacks := []struct {
		name      string
		withHello bool
		raw       []byte
		reason    string
	}{
		{"garbage", false, []byte("GET / HTTP/1.1\r\n\r\n"), "frame"},
		{"oversized", true, []byte{0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0}, "exceeds maximum frame size"},
		{"checksum", true, badSum, "checksum"},
		{"unknown type", true, AppendFrame(nil, unknown), "unknown message type"},
		{"array32 bomb", true, AppendFrame(nil, envelopeWithBody([]byte{0xdd, 0xff, 0xff, 0xff, 0xff})), "length header exceeds"},
	}
	for _, a := range attacks {
		attack(t, n1.Addr(), a.withHello, a.raw)
		waitFor(t, a.name+" to be logged", func() bool {
			for _, e := range logs.All() {
				for _, f := range e.Context {
					if (f.Key == "reason" || f.Key == "error") && f.Interface != nil &&
						strings.Contains(f.Interface.(error).Error(), a.reason) {
						return true
					}
				}
			}
			return false
		})
	}
	waitFor(t, "the service to hear of the broken connections", func() bool {
		return len(noteState(t, n1).Broken) >= 4
	})
	for _, p := range noteState(t, n1).Broken {
		if p != 99 {
			t.Errorf("transport error for %v, want only n99", p)
		}
	}
	if st := n1.Status(); st.Counters.FramesRejected != uint64(len(attacks)) {
		t.Errorf("frames rejected = %d, want %d", st.Counters.FramesRejected, len(attacks))
	}

	// The good peer is served in both directions throughout.
	if err := n2.Submit(sendNote{To: 1, Text: "after"}); err != nil {
		t.Fatal(err)
	}
	if err := n1.Submit(sendNote{To: 2, Text: "back"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to get the second note", gotNote(t, n1, "n2:after"))
	waitFor(t, "n2 to get n1's note", gotNote(t, n2, "n1:back"))
	if b := noteState(t, n2).Broken; len(b) != 0 {
		t.Errorf("n2 saw transport errors for %v", b)
	}

	for _, r := range []*Runtime{n2, n1} {
		if err := r.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if st := n1.Status(); st.Running || st.Counters.MessagesIn < 2 {
		t.Errorf("status after stop: %+v", st)
	}
	if err := n1.Submit(sendNote{To: 2}); err != ErrNotRunning {
		t.Errorf("Submit after Stop = %v", err)
	}
}

// TestRuntimeTransportErrorOnPeerStop: when a peer stops, a node with a
// connection to it gets a transport error for it, and messages to a node
// that is gone turn into transport errors too.
func TestRuntimeTransportErrorOnPeerStop(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNode(t, 1, zap.NewNop())
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())
	if err := n1.Submit(sendNote{To: 2, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to get the note", gotNote(t, n2, "n1:hi"))
	if err := n2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1 to hear n2 broke", func() bool { return slices.Contains(noteState(t, n1).Broken, 2) })
	before := len(noteState(t, n1).Broken)
	if err := n1.Submit(sendNote{To: 2, Text: "anyone?"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a send to the stopped node to fail", func() bool { return len(noteState(t, n1).Broken) > before })
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeTimersAndSelfSends: wall-clock timers fire through the core and
// messages to self are delivered.
func TestRuntimeTimersAndSelfSends(t *testing.T) {
	defer livetest.VerifyNone(t)
	n1 := startNoteNode(t, 1, zap.NewNop())
	if err := n1.Submit(sendNote{To: 1, Text: "me"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a note to self", gotNote(t, n1, "n1:me"))
	waitFor(t, "the tick timer", gotNote(t, n1, "timer:tick"))
	// The runtime fires due timers earliest first, so once a timer armed
	// after "cancelled"'s deadline has fired, "cancelled" would have fired
	// too: an ordering, where a fixed sleep would be a guess at the load.
	if err := n1.Submit(timerCall{Name: "later", After: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a timer armed after the cancelled one's deadline", gotNote(t, n1, "timer:later"))
	if got := noteState(t, n1).Got; slices.Contains(got, "timer:cancelled") {
		t.Errorf("a cancelled timer fired: %v", got)
	}
	if st := n1.Status(); len(st.Timers) != 0 {
		t.Errorf("timers left: %v", st.Timers)
	}
	if err := n1.Start(context.Background()); !errors.Is(err, ErrRuntimeStarted) {
		t.Errorf("second Start = %v", err)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Errorf("second Stop = %v", err)
	}
}

// TestRuntimeLifecycleWithoutStart: a runtime that never started refuses
// calls, stops as a no-op, and a failed Start (nobody at the join address)
// releases everything it acquired.
func TestRuntimeLifecycleWithoutStart(t *testing.T) {
	defer livetest.VerifyNone(t)
	cfg := DefaultRuntimeConfig()
	cfg.ID = 1
	r, err := NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Submit(sendNote{To: 2}); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Submit before Start = %v", err)
	}
	if err := r.Submit(unregistered{}); !errors.Is(err, node.ErrUnknownMessageType) {
		t.Errorf("Submit of an unregistered call = %v", err)
	}
	if st := r.Status(); st.Running || st.ID != 1 {
		t.Errorf("status before Start: %+v", st)
	}
	if err := r.Stop(context.Background()); err != nil {
		t.Errorf("Stop before Start = %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close()
	cfg.Join, cfg.JoinTimeout = []string{dead}, 300*time.Millisecond
	r, err = NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err == nil || !strings.HasPrefix(err.Error(), "live: join") {
		t.Errorf("Start with nobody to join = %v", err)
	}
}

func TestRuntimeConfigValidate(t *testing.T) {
	good := DefaultRuntimeConfig()
	good.ID = 1
	if err := good.Validate(); err != nil {
		t.Fatalf("default config with an ID: %v", err)
	}
	cases := map[string]func(*RuntimeConfig){
		"ID":                          func(c *RuntimeConfig) { c.ID = node.None },
		"Listen":                      func(c *RuntimeConfig) { c.Listen = "nonsense" },
		"Advertise":                   func(c *RuntimeConfig) { c.Listen = "0.0.0.0:7000" },
		"Join[0]":                     func(c *RuntimeConfig) { c.Join = []string{"127.0.0.1:0"} },
		"JoinTimeout":                 func(c *RuntimeConfig) { c.JoinTimeout = -time.Second },
		"Label":                       func(c *RuntimeConfig) { c.Label = strings.Repeat("x", 256) },
		"Layers[0]":                   func(c *RuntimeConfig) { c.Layers = []layer.Layer{nil} },
		"Gossip.Bind":                 func(c *RuntimeConfig) { c.Gossip.Bind = "x:y" },
		"Gossip.Advertise":            func(c *RuntimeConfig) { c.Gossip.Advertise = "127.0.0.1:0" },
		"Gossip.SecretKey":            func(c *RuntimeConfig) { c.Gossip.SecretKey = []byte("short") },
		"Gossip.LeaveTimeout":         func(c *RuntimeConfig) { c.Gossip.LeaveTimeout = -1 },
		"Transport.MaxFrameSize":      func(c *RuntimeConfig) { c.Transport.MaxFrameSize = 10 },
		"Transport.SendQueueLen":      func(c *RuntimeConfig) { c.Transport.SendQueueLen = -1 },
		"Transport.InboxLen":          func(c *RuntimeConfig) { c.Transport.InboxLen = -5 },
		"Transport.TrySendQueueBytes": func(c *RuntimeConfig) { c.Transport.TrySendQueueBytes = -1 },
		"Transport.DialTimeout":       func(c *RuntimeConfig) { c.Transport.DialTimeout = -time.Second },
		"Transport.RedialBackoff":     func(c *RuntimeConfig) { c.Transport.RedialBackoff = -time.Second },
		"Transport.HandshakeTimeout":  func(c *RuntimeConfig) { c.Transport.HandshakeTimeout = -1 },
		"Transport.WriteTimeout":      func(c *RuntimeConfig) { c.Transport.WriteTimeout = -1 },
		"Transport.MaxRedialBackoff": func(c *RuntimeConfig) {
			c.Transport.RedialBackoff, c.Transport.MaxRedialBackoff = time.Second, time.Millisecond
		},
		"Durability.DataDir":         func(c *RuntimeConfig) { c.Durability.DataDir, c.Durability.Store = "d", &gatedStore{} },
		"Durability.Ephemeral":       func(c *RuntimeConfig) { c.Durability.DataDir, c.Durability.Ephemeral = "d", true },
		"Durability.ForgetLostStore": func(c *RuntimeConfig) { c.Durability.ForgetLostStore = true },
	}
	for field, mutate := range cases {
		c := good
		mutate(&c)
		err := c.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), "live: RuntimeConfig."+field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := NewRuntime(good, node.Spec{}); err == nil {
		t.Error("NewRuntime accepted an empty spec")
	}
}

// TestRuntimeConfigZeroMeansDefault pins the config convention: every zero
// field stands for the value DefaultRuntimeConfig documents, and NewRuntime
// fills it in.
func TestRuntimeConfigZeroMeansDefault(t *testing.T) {
	zero := RuntimeConfig{ID: 7}
	if err := zero.Validate(); err != nil {
		t.Fatalf("RuntimeConfig{ID: 7}.Validate() = %v", err)
	}
	r, err := NewRuntime(zero, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	// The defaults the fields' docs state, written out.
	want := RuntimeConfig{ID: 7, Listen: "127.0.0.1:0", JoinTimeout: 10 * time.Second,
		Gossip: GossipConfig{LeaveTimeout: time.Second},
		Transport: TransportConfig{MaxFrameSize: 1 << 20, SendQueueLen: 1024, TrySendQueueBytes: 64 << 10, InboxLen: 1024,
			DialTimeout: 3 * time.Second, RedialBackoff: 100 * time.Millisecond, MaxRedialBackoff: 5 * time.Second,
			HandshakeTimeout: 2 * time.Second, WriteTimeout: 5 * time.Second},
		Limits: LimitsConfig{MaxInboundConns: 1024, MaxInboundConnsPerHost: 128, IdleTimeout: 2 * time.Minute,
			FrameReadTimeout: 30 * time.Second, UnconfirmedPeerTTL: 30 * time.Second},
	}
	got := r.cfg
	if got.Logger == nil {
		t.Fatal("no logger filled in")
	}
	got.Logger = nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("filled-in config\n got %+v\nwant %+v", got, want)
	}
	def := DefaultRuntimeConfig()
	def.ID, def.Logger = 7, nil
	if !reflect.DeepEqual(def, want) {
		t.Errorf("DefaultRuntimeConfig\n got %+v\nwant %+v", def, want)
	}

	// A field that is set is kept; MaxRedialBackoff's default never falls
	// below a longer RedialBackoff.
	set := RuntimeConfig{ID: 7, Transport: TransportConfig{InboxLen: 3, RedialBackoff: 8 * time.Second}}.withDefaults()
	if set.Transport.InboxLen != 3 || set.Transport.SendQueueLen != DefaultSendQueueLen || set.Transport.MaxRedialBackoff != 8*time.Second {
		t.Errorf("withDefaults kept InboxLen %d, SendQueueLen %d, MaxRedialBackoff %v", set.Transport.InboxLen, set.Transport.SendQueueLen, set.Transport.MaxRedialBackoff)
	}
	if err := (RuntimeConfig{ID: 7, Transport: TransportConfig{RedialBackoff: 8 * time.Second}}).Validate(); err != nil {
		t.Errorf("a long RedialBackoff with the default cap: %v", err)
	}
}

func TestMemberlistLogBridge(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	l := newMemberlistLogger(zap.New(core))
	l.Printf("[DEBUG] memberlist: Stream connection from=%s", "1.2.3.4")
	l.Printf("[WARN] memberlist: Was able to connect to n2 over TCP but UDP probes failed")
	l.Printf("[ERR] memberlist: Failed to send")
	l.Printf("no prefix")
	want := []zapcore.Level{zapcore.DebugLevel, zapcore.WarnLevel, zapcore.ErrorLevel, zapcore.InfoLevel}
	all := logs.All()
	if len(all) != len(want) {
		t.Fatalf("%d entries", len(all))
	}
	for i, e := range all {
		if e.Level != want[i] || strings.HasPrefix(e.Message, "[") {
			t.Errorf("entry %d: %v %q", i, e.Level, e.Message)
		}
	}
}

// TestRuntimePeerDeclaredDead: memberlist's news that a peer left or died
// closes the connections to it and becomes one transport error for it.
func TestRuntimePeerDeclaredDead(t *testing.T) {
	defer livetest.VerifyNone(t)
	// The test declares n2 dead itself and counts transport errors, so
	// memberlist must not do it too: on a starved machine its 200ms probe
	// timeouts make it suspect a live node, and a suspect is declared dead
	// after SuspicionMult probe intervals unless it refutes in time.
	patient := func(c *RuntimeConfig) {
		c.Gossip.Tune = func(mc *memberlist.Config) { mc.SuspicionMult = 60 }
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), patient)
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), patient, n1.Addr())
	if err := n1.Submit(sendNote{To: 2, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to get the note", gotNote(t, n2, "n1:hi"))
	// What memberlist calls when it declares n2 dead.
	d := &membership{self: 1, dir: n1.dir, log: zap.NewNop(), onDead: func(id node.ID) { n1.tr.closePeer(id, errPeerDead, true) }}
	d.NotifyLeave(&memberlist.Node{Name: "n2", Meta: encodeMeta(2, n2.Addr())})
	waitFor(t, "n1 to hear n2 died", func() bool { return slices.Contains(noteState(t, n1).Broken, 2) })
	if out, _ := n1.tr.connections(); len(out) != 0 {
		t.Errorf("connections to %v still open", out)
	}
	// Node 2 is in fact alive: the next send redials.
	if err := n1.Submit(sendNote{To: 2, Text: "again"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to get the second note", gotNote(t, n2, "n1:again"))
	if b := noteState(t, n1).Broken; len(b) != 1 {
		t.Errorf("transport errors for %v, want one for n2", b)
	}
	n2.Stop(context.Background())
	n1.Stop(context.Background())
}

// TestRuntimeClusterLabelAndKey: nodes sharing a label and gossip key form
// a cluster (memberlist sees both); a node with another label is refused
// at the handshake and cannot join.
func TestRuntimeClusterLabelAndKey(t *testing.T) {
	defer livetest.VerifyNone(t)
	key := []byte("0123456789abcdef")
	config := func(id node.ID, label string, join ...string) RuntimeConfig {
		cfg := DefaultRuntimeConfig()
		cfg.ID, cfg.Label, cfg.Gossip.SecretKey, cfg.Join = id, label, key, join
		// A join that must succeed gets as long as a loaded machine needs.
		cfg.JoinTimeout = waitDeadline
		return cfg
	}
	start := func(cfg RuntimeConfig) *Runtime {
		r, err := NewRuntime(cfg, noteSpec())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Stop(context.Background()) })
		if err := r.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		return r
	}
	n1 := start(config(1, "blue"))
	n2 := start(config(2, "blue", n1.Addr()))
	waitFor(t, "memberlist to see both nodes", func() bool { return n1.ml.NumMembers() == 2 && n2.ml.NumMembers() == 2 })
	mc, err := memberlistConfig(n1.cfg, &membership{}, zap.NewNop())
	if err != nil || !bytes.Equal(mc.SecretKey, key) || mc.Label != "blue" {
		t.Errorf("memberlist config: key %x label %q (%v)", mc.SecretKey, mc.Label, err)
	}
	if err := startUntilRefused(t, config(3, "green", n1.Addr()), "cluster label"); err == nil || !strings.Contains(err.Error(), "cluster label") {
		t.Errorf("joining a blue cluster as green: %v", err)
	}
	n2.Stop(context.Background())
	n1.Stop(context.Background())
}

// startUntilRefused starts a runtime with cfg that is expected not to
// join, and returns Start's error once a join probe has been refused for
// a reason containing want. A fixed JoinTimeout would be a guess at the
// machine's load: too short, and a slow handshake times out before the
// refusal it should report.
func startUntilRefused(t *testing.T, cfg RuntimeConfig, want string) error {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	cfg.Logger = zap.New(core)
	r, err := NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for ctx.Err() == nil {
			for _, e := range logs.FilterMessage("live: join probe failed").All() {
				if msg, _ := e.ContextMap()["error"].(string); strings.Contains(msg, want) {
					cancel()
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	err = r.Start(ctx)
	cancel()
	<-watched
	r.Stop(context.Background())
	return err
}

// TestRuntimeSlowPeerIsDisconnected: a peer that completes the handshake
// and then stops reading fills its bounded send queue (or stalls a write
// past WriteTimeout); the node closes that connection and the service gets
// a transport error for it, and nothing else.
func TestRuntimeSlowPeerIsDisconnected(t *testing.T) {
	defer livetest.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		if _, err := readHelloFrame(conn); err == nil {
			writeHelloFrame(conn, hello{kind: helloData, id: 99, label: "test"})
		}
		accepted <- conn // and never read again
	}()
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) {
		c.Transport.SendQueueLen = 16
		c.Transport.WriteTimeout = 200 * time.Millisecond
	})
	n1.dir.learn(99, ln.Addr().String(), "")
	big := strings.Repeat("x", 3500)
	for i := 0; len(noteState(t, n1).Broken) == 0; i++ {
		if i == 20000 {
			t.Fatal("20000 notes of 3.5 KB to a peer that does not read: no transport error")
		}
		if err := n1.Submit(sendNote{To: 99, Text: big}); err != nil {
			t.Fatal(err)
		}
	}
	if b := noteState(t, n1).Broken; !slices.Equal(b[:1], []node.ID{99}) {
		t.Errorf("transport errors for %v", b)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	// On a loaded machine the runtime can give up (handshake timeout)
	// before the goroutine above got to Accept: closing the listener ends
	// an Accept still waiting, so the test never hangs on it.
	ln.Close()
	if conn, ok := <-accepted; ok {
		conn.Close()
	}
}

// TestRuntimeRedialBackoff: a service that answers every transport error by
// sending again to a peer that refuses connections does not spin: dials
// back off exponentially.
func TestRuntimeRedialBackoff(t *testing.T) {
	defer livetest.VerifyNone(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	n1 := startNoteNode(t, 1, zap.NewNop())
	n1.dir.learn(99, dead, "")
	started := time.Now()
	if err := n1.Submit(sendNote{To: 99, Text: "hello?", Retry: true}); err != nil {
		t.Fatal(err)
	}
	// A loaded machine only delays dials, so the test bounds the count
	// from above by the time it took: the k-th dial waits out 100, 200,
	// 400... ms after each failure before it, so n failures need at least
	// 100·(2^(n-1)-1) ms. A transport that spins or backs off linearly
	// fails more often than that.
	const want = 5
	waitFor(t, "five failed dials", func() bool { return n1.Status().Counters.DialFailures >= want })
	n := n1.Status().Counters.DialFailures
	elapsed := time.Since(started)
	var least time.Duration // the backoffs between the n dials
	for b, k := n1.cfg.Transport.RedialBackoff, uint64(1); k < n && least <= elapsed; b, k = min(2*b, n1.cfg.Transport.MaxRedialBackoff), k+1 {
		least += b
	}
	if elapsed < least {
		t.Errorf("%d failed dials in %v, want at least %v between the first and the last", n, elapsed, least)
	}
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
}
