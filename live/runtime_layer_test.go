package live

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"go.uber.org/zap"
)

// probe is the message type of probeLayer.
type probe struct{ Seq int }

func (probe) MessageType() string { return "test.probe" }
func (probe) LayerMessage()       {}

// probeLayer stamps every service send with CN 42, sends a probe to peer
// on every tick (every 30ms), consumes the probes it receives, and records
// what it saw.
type probeLayer struct {
	peer node.ID
	leak bool // let received probes through to the core (a layer bug)

	mu       sync.Mutex
	host     layer.Host
	started  bool
	next     time.Time
	seq      int
	probes   []int    // Seq of probes received, in order
	kinds    []string // events Before saw, by kind
	stamped  []uint64 // CN of service messages received
	afters   int
	attaches int
}

func (l *probeLayer) Messages() []node.Message { return []node.Message{probe{}} }

func (l *probeLayer) Attach(h layer.Host) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.attaches++
	if l.host != nil {
		return errors.New("attached twice")
	}
	l.host = h
	return nil
}

func (l *probeLayer) Start(now time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.host.Checkpoint(); err != nil {
		panic("Start before the core's Init: " + err.Error())
	}
	l.started, l.next = true, now.Add(30*time.Millisecond)
	return nil
}

func (l *probeLayer) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.kinds = append(l.kinds, ev.Kind.String())
	if ev.Kind != node.EventMessage {
		return true, nil, nil
	}
	if p, ok := in.Msg.(probe); ok {
		l.probes = append(l.probes, p.Seq)
		return l.leak, nil, nil
	}
	l.stamped = append(l.stamped, in.CN)
	return true, nil, nil
}

func (l *probeLayer) Sending(now time.Time, env *node.Envelope) { env.CN = 42 }

func (l *probeLayer) After(time.Time) []node.Envelope {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.afters++
	return nil
}

func (l *probeLayer) Tick(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.next = now.Add(30 * time.Millisecond)
	if l.peer == node.None {
		return nil, nil
	}
	l.seq++
	return []node.Envelope{{From: l.host.ID(), To: l.peer, Msg: probe{Seq: l.seq}}}, nil
}

func (l *probeLayer) NextTick() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.started {
		return time.Time{}
	}
	return l.next
}

func (l *probeLayer) snapshot() (probes []int, kinds []string, stamped []uint64, afters int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.probes), slices.Clone(l.kinds), slices.Clone(l.stamped), l.afters
}

// TestRuntimeLayers: a layer's messages travel on the runtime's
// connections (ticked by its own timer, and sent through Do), reach the
// peer's layer and never its service; the layer stamps the service's
// sends (the peer's layer sees the CN on arrival), sees every event
// before the core, including messages to self, and runs After each step.
func TestRuntimeLayers(t *testing.T) {
	defer livetest.VerifyNone(t)
	l1, l2 := &probeLayer{peer: 2}, &probeLayer{}
	withLayer := func(l layer.Layer) func(*RuntimeConfig) {
		return func(c *RuntimeConfig) { c.Layers = []layer.Layer{l} }
	}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), withLayer(l1))
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), withLayer(l2), n1.Addr())

	waitFor(t, "n2's layer to get three ticked probes", func() bool {
		p, _, _, _ := l2.snapshot()
		return len(p) >= 3
	})
	if err := n1.Do(context.Background(), func(now time.Time) []node.Envelope {
		return []node.Envelope{{From: 1, To: 2, CN: 7, Msg: probe{Seq: -1}}}
	}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2's layer to get the probe sent through Do", func() bool {
		p, _, _, _ := l2.snapshot()
		return slices.Contains(p, -1)
	})
	if err := n1.Submit(sendNote{To: 2, Text: "stamped"}); err != nil {
		t.Fatal(err)
	}
	if err := n1.Submit(sendNote{To: 1, Text: "self"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to get the note", gotNote(t, n2, "n1:stamped"))
	waitFor(t, "n1 to get its own note", gotNote(t, n1, "n1:self"))

	probes, _, stamped, _ := l2.snapshot()
	for i := 1; i < len(probes) && probes[i] != -1; i++ {
		if probes[i] != probes[i-1]+1 {
			t.Errorf("probes out of order or lost: %v", probes)
			break
		}
	}
	if !slices.Equal(stamped, []uint64{42}) {
		t.Errorf("n2's layer saw service messages with CN %v, want [42]", stamped)
	}
	c1, c2 := n1.Status().Counters, n2.Status().Counters
	if c1.LayerMessagesOut < 4 || c1.LayerBytesOut == 0 || c2.LayerMessagesIn < 4 || c2.LayerBytesIn == 0 ||
		c2.LayerBytesIn >= c2.BytesIn || c2.MessagesIn <= c2.LayerMessagesIn {
		t.Errorf("counters: n1 %+v, n2 %+v", c1, c2)
	}
	for _, r := range []*Runtime{n2, n1} {
		if err := r.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}

	// Stopped: the layers' records are final.
	probes, kinds2, _, afters2 := l2.snapshot()
	if afters2 != len(kinds2)-len(probes) {
		t.Errorf("n2's core stepped %d of %d events, but %d of them were consumed probes", afters2, len(kinds2), len(probes))
	}
	_, kinds, stamped1, afters := l1.snapshot()
	for _, k := range []string{"init", "app", "timer", "message"} {
		if !slices.Contains(kinds, k) {
			t.Errorf("n1's layer never saw a %s event: %v", k, kinds)
		}
	}
	if !slices.Equal(stamped1, []uint64{42}) {
		t.Errorf("n1's layer saw its message to itself with CN %v, want [42]", stamped1)
	}
	if afters != len(kinds) {
		t.Errorf("After ran %d times for %d events n1's layer let through", afters, len(kinds))
	}
}

// TestRuntimeDropsLeakedLayerMessages: a layer message no layer consumed
// is dropped, never handed to the service's core.
func TestRuntimeDropsLeakedLayerMessages(t *testing.T) {
	defer livetest.VerifyNone(t)
	l1, l2 := &probeLayer{peer: 2}, &probeLayer{leak: true}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []layer.Layer{l1} })
	n2 := startNoteNodeWith(t, 2, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []layer.Layer{l2} }, n1.Addr())
	waitFor(t, "n2's layer to get three probes", func() bool {
		p, _, _, _ := l2.snapshot()
		return len(p) >= 3
	})
	for _, r := range []*Runtime{n2, n1} {
		if err := r.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	probes, kinds, _, afters := l2.snapshot()
	if afters != len(kinds)-len(probes) {
		t.Errorf("n2's core stepped %d of %d events, %d of which were leaked probes", afters, len(kinds), len(probes))
	}
}

// TestRuntimeLayerConfigErrors: layers are checked when the runtime is
// built: no nil layer, no message name clashing with the service's, no
// layer shared between runtimes; application calls cannot be layer
// messages.
func TestRuntimeLayerConfigErrors(t *testing.T) {
	defer livetest.VerifyNone(t)
	cfg := DefaultRuntimeConfig()
	cfg.ID = 1
	cfg.Layers = []layer.Layer{nil}
	if _, err := NewRuntime(cfg, noteSpec()); err == nil || !strings.Contains(err.Error(), "Layers[0] is nil") {
		t.Errorf("nil layer: %v", err)
	}
	clash := noteSpec()
	clash.Messages = append(clash.Messages, probe{})
	cfg.Layers = []layer.Layer{&probeLayer{}}
	if _, err := NewRuntime(cfg, clash); !errors.Is(err, node.ErrDuplicateMessageType) {
		t.Errorf("clashing message names: %v", err)
	}
	l := &probeLayer{}
	cfg.Layers = []layer.Layer{l}
	r, err := NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewRuntime(cfg, noteSpec()); err == nil || !strings.Contains(err.Error(), "attach layer") {
		t.Errorf("second runtime with the same layer: %v", err)
	}
	if err := r.Submit(probe{}); !errors.Is(err, node.ErrUnknownMessageType) {
		t.Errorf("Submit of a layer message = %v", err)
	}
	if err := r.Do(context.Background(), func(time.Time) []node.Envelope { return nil }); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Do before Start = %v", err)
	}
	if err := r.Do(context.Background(), nil); err == nil {
		t.Error("Do(nil) succeeded")
	}
}

// gateLayer is a Gate and a Stopper: it drops (breaking the connection)
// every note from dropFrom, postpones by delay the first occurrence of each
// event named in once, postpones by an hour every firing of timer hold, and
// records the events it sees ("kind:detail", with " retry" for retries)
// and its ticks and stops.
type gateLayer struct {
	dropFrom node.ID
	once     map[string]bool
	hold     string
	delay    time.Duration

	mu      sync.Mutex
	host    layer.RuntimeHost
	seen    []string
	due     time.Time // NextTick
	ticks   int
	stops   int
	afterUp bool // a hook ran after Stop
}

func (l *gateLayer) Messages() []node.Message { return nil }

func (l *gateLayer) Attach(h layer.Host) error {
	lh, ok := h.(layer.RuntimeHost)
	if !ok {
		return errors.New("not a RuntimeHost")
	}
	l.host = lh
	return nil
}

func (l *gateLayer) Start(time.Time) []node.Envelope { return nil }

func (l *gateLayer) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	panic("the runtime called Before on a Gate")
}

func (l *gateLayer) Gate(now time.Time, ev node.Event, in *node.Envelope, retry bool) (layer.Verdict, []node.Envelope, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.afterUp = l.afterUp || l.stops > 0
	name := ev.Kind.String()
	switch ev.Kind {
	case node.EventTimer:
		name += ":" + ev.Timer
	case node.EventApp, node.EventMessage:
		name += ":" + ev.Msg.MessageType()
	case node.EventTransportError:
		name += ":" + ev.Peer.String()
	}
	if retry {
		l.seen = append(l.seen, name+" retry")
	} else {
		l.seen = append(l.seen, name)
	}
	switch {
	case ev.Kind == node.EventMessage && ev.From == l.dropFrom:
		return layer.Verdict{Break: true}, nil, nil
	case ev.Kind == node.EventTimer && ev.Timer == l.hold:
		return layer.Verdict{RetryAt: now.Add(time.Hour)}, nil, nil
	case l.once[name] && !retry:
		delete(l.once, name)
		return layer.Verdict{RetryAt: now.Add(l.delay)}, nil, nil
	}
	return layer.Verdict{Handle: true}, nil, nil
}

func (l *gateLayer) Sending(time.Time, *node.Envelope) {}
func (l *gateLayer) After(time.Time) []node.Envelope   { return nil }

func (l *gateLayer) Tick(now time.Time) ([]node.Envelope, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.ticks++
	l.due = time.Time{}
	return nil, nil
}

func (l *gateLayer) NextTick() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.due
}

func (l *gateLayer) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stops++
}

func (l *gateLayer) events() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

func (l *gateLayer) saw(what string) func() bool {
	return func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return slices.Contains(l.seen, what)
	}
}

// TestRuntimeGate: a Gate's verdicts are carried out. A dropped message
// with Break never reaches the service and breaks the connection: both
// ends' services are told (the node's own through its gate, which
// postpones that transport error once). A postponed timer,
// application call and transport error are delivered again later, to the
// gate with retry set, and then handled (the timer after another timer
// that was due later); a postponed timer the service cancels is not
// delivered again. RuntimeHost.Wake makes the runtime tick a layer that is
// due; Stop calls the layer's Stop once, after its last hook.
func TestRuntimeGate(t *testing.T) {
	defer livetest.VerifyNone(t)
	g := &gateLayer{dropFrom: 2, hold: "x", delay: 100 * time.Millisecond,
		once: map[string]bool{"timer:tick": true, "app:test.timerCall": true, "transport-error:n2": true}}
	n1 := startNoteNodeWith(t, 1, zap.NewNop(), func(c *RuntimeConfig) { c.Layers = []layer.Layer{g} })
	n2 := startNoteNode(t, 2, zap.NewNop(), n1.Addr())

	// The tick (20ms) was postponed by 100ms, so the "cancelled" timer
	// (40ms), which the tick would have cancelled, fired first.
	waitFor(t, "the postponed tick", gotNote(t, n1, "timer:tick"))
	if got := noteState(t, n1).Got; !slices.Equal(got[:2], []string{"timer:cancelled", "timer:tick"}) {
		t.Errorf("n1 got %v, want the cancelled timer before the postponed tick", got)
	}
	if !g.saw("timer:tick retry")() {
		t.Errorf("the gate did not see the tick's retry: %v", g.events())
	}

	// A note from n2 is dropped and the connection broken: both services
	// hear of the break, n1's after its gate postponed the transport
	// error once; n1's never gets the note.
	if err := n2.Submit(sendNote{To: 1, Text: "dropped"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to hear its connection to n1 broke", func() bool { return slices.Contains(noteState(t, n2).Broken, 1) })
	waitFor(t, "n1 to hear its connection to n2 broke", func() bool { return slices.Contains(noteState(t, n1).Broken, 2) })
	if s := noteState(t, n1); slices.Contains(s.Got, "n2:dropped") {
		t.Errorf("n1's service got the dropped note: %+v", s)
	}
	if !g.saw("transport-error:n2 retry")() {
		t.Errorf("n1's transport error about the break was not postponed: %v", g.events())
	}

	// The first app call is postponed, then runs and sets timer x, whose
	// firings are held an hour; cancelling x drops the held firing.
	if err := n1.Submit(timerCall{Name: "x", After: 10 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "timer x to fire and be held", g.saw("timer:x"))
	if !g.saw("app:test.timerCall retry")() || !slices.Contains(noteState(t, n1).Got, "set:x") {
		t.Errorf("the app call was not delivered again: %v", g.events())
	}
	retries := func() (n int) {
		if err := n1.Do(context.Background(), func(time.Time) []node.Envelope { n = n1.pipe.Postponed(); return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := retries(); n != 1 {
		t.Fatalf("%d postponed events, want timer x's firing", n)
	}
	if err := n1.Submit(timerCall{Name: "x", Cancel: true}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cancel", gotNote(t, n1, "cancel:x"))
	if n := retries(); n != 0 {
		t.Errorf("%d postponed events after the service cancelled timer x", n)
	}

	// Wake: the layer is due, but no event comes; Wake gets it ticked.
	g.mu.Lock()
	g.due = time.Now()
	g.mu.Unlock()
	if c := g.host.Core(); c != n1.core || g.host.ID() != 1 {
		t.Error("RuntimeHost does not expose the runtime's core")
	}
	g.host.Wake()
	waitFor(t, "the woken tick", func() bool { g.mu.Lock(); defer g.mu.Unlock(); return g.ticks > 0 })

	// n1 opens a connection to n2 again, n2 stops, n1's service hears of
	// it (the gate's one postponement of such an error is spent).
	if err := n1.Submit(sendNote{To: 2, Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n2 to get n1's note", gotNote(t, n2, "n1:hello"))
	if err := n2.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "n1's service to hear n2 stopped", func() bool { return len(noteState(t, n1).Broken) == 2 })
	if err := n1.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stops != 1 || g.afterUp {
		t.Errorf("layer stopped %d times (hook after Stop: %v)", g.stops, g.afterUp)
	}
}

// TestBreakConnFullInbox: the core goroutine carries out a Gate's Break
// while the inbox is full (readers of other peers keep it so under load).
// It must not wait for room in the inbox, which only it empties: the
// transport error of the broken connection is queued for drain to step.
func TestBreakConnFullInbox(t *testing.T) {
	cfg := DefaultRuntimeConfig()
	cfg.ID = 1
	cfg.Transport.InboxLen = 1
	r, err := NewRuntime(cfg, noteSpec())
	if err != nil {
		t.Fatal(err)
	}
	defer r.cancel()
	r.events <- netEvent{peer: 3} // the inbox is full
	c := &peerConn{t: r.tr, peer: 2, closed: make(chan struct{})}
	c.msgs.Store(true)
	r.tr.mu.Lock()
	r.tr.in[2] = c
	r.tr.mu.Unlock()

	done := make(chan bool)
	go func() { done <- r.breakConn(2) }()
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("breakConn failed without a store")
		}
	case <-time.After(5 * time.Second):
		r.cancel() // unblocks the transport's report
		<-done
		t.Fatal("breakConn blocked on the full inbox: the core goroutine waited for itself")
	}
	if !isClosed(c) {
		t.Error("the connection to n2 is still open")
	}
	if !slices.Equal(r.failq, []node.ID{2}) {
		t.Errorf("failq %v, want the transport error for n2", r.failq)
	}
	if len(r.events) != 1 {
		t.Errorf("%d events in the inbox, want only the one already there", len(r.events))
	}
}
