package live

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/live/livetest"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"

	"go.uber.org/zap"
)

// promise is promiser's application call: promise N, and tell To (unless
// None) with a note "promised N".
type promise struct {
	To node.ID
	N  int
}

func (promise) MessageType() string { return "test.promise" }

// promiser is a node.Durable service: Promised survives a crash (Recover
// keeps it), Calls does not; SawAtInit is what Init found.
type promiser struct {
	Promised  int
	Calls     int
	SawAtInit int
	Got       []string
}

func (p *promiser) Init(node.Env) { p.SawAtInit = p.Promised }
func (p *promiser) HandleMessage(_ node.Env, from node.ID, m node.Message) {
	if n, ok := m.(note); ok {
		p.Got = append(p.Got, from.String()+":"+n.Text)
	}
}
func (p *promiser) HandleTimer(node.Env, string) {}
func (p *promiser) HandleApp(env node.Env, call node.Message) {
	c := call.(promise)
	p.Promised, p.Calls = c.N, p.Calls+1
	if c.To != node.None {
		env.Send(c.To, note{Text: "promised " + strconv.Itoa(c.N)})
	}
}
func (p *promiser) HandleTransportError(node.Env, node.ID) {}
func (p *promiser) Recover(previous node.Service)          { p.Promised = previous.(*promiser).Promised }

func promiserSpec() node.Spec {
	return node.Spec{Name: "promiser", New: func() node.Service { return &promiser{} }, Messages: []node.Message{note{}, promise{}}}
}

// eventCount is a layer.Durable counting the events it saw; firstSeen
// is the count it held when it saw its first event (after a restart: what
// the store gave back).
type eventCount struct {
	n, firstSeen int
	seen, dirty  bool
}

func (l *eventCount) Messages() []node.Message                { return nil }
func (l *eventCount) Attach(layer.Host) error                 { return nil }
func (l *eventCount) Start(time.Time) []node.Envelope         { return nil }
func (l *eventCount) Sending(time.Time, *node.Envelope)       {}
func (l *eventCount) After(time.Time) []node.Envelope         { return nil }
func (l *eventCount) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }
func (l *eventCount) NextTick() time.Time                     { return time.Time{} }
func (l *eventCount) Before(time.Time, node.Event, *node.Envelope) (bool, []node.Envelope, error) {
	if !l.seen {
		l.seen, l.firstSeen = true, l.n
	}
	l.n, l.dirty = l.n+1, true
	return true, nil, nil
}
func (l *eventCount) DurableKey() string { return "count" }
func (l *eventCount) DurableState() ([]byte, bool) {
	changed := l.dirty
	l.dirty = false
	return []byte(strconv.Itoa(l.n)), changed
}
func (l *eventCount) RestoreDurable(b []byte) error {
	n, err := strconv.Atoi(string(b))
	l.n = n
	return err
}

func promiserConfig(id node.ID, tune func(*RuntimeConfig), join ...string) RuntimeConfig {
	cfg := DefaultRuntimeConfig()
	cfg.ID, cfg.Join, cfg.Label = id, join, "test"
	cfg.JoinTimeout = waitDeadline
	tune(&cfg)
	return cfg
}

func startPromiser(t *testing.T, cfg RuntimeConfig) *Runtime {
	t.Helper()
	r, err := NewRuntime(cfg, promiserSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(context.Background()) })
	return r
}

func promiserState(t *testing.T, r *Runtime) promiser {
	t.Helper()
	var p promiser
	if err := json.Unmarshal(r.Status().State, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRuntimeDurableNeedsDataDir: a node.Durable service refuses to run
// live without a store unless told it may forget (Ephemeral), and says
// why; contradictory settings are refused.
func TestRuntimeDurableNeedsDataDir(t *testing.T) {
	_, err := NewRuntime(RuntimeConfig{ID: 1}, promiserSpec())
	if !errors.Is(err, ErrDurableRequired) {
		t.Fatalf("no data dir: %v, want ErrDurableRequired", err)
	}
	for _, want := range []string{"DataDir", "--data-dir", "Ephemeral", "--ephemeral", "forgets what it promised"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q: %v", want, err)
		}
	}
	if _, err := NewRuntime(RuntimeConfig{ID: 1, Durability: DurabilityConfig{Ephemeral: true}}, promiserSpec()); err != nil {
		t.Fatalf("ephemeral: %v", err)
	}
	if _, err := NewRuntime(RuntimeConfig{ID: 1}, noteSpec()); err != nil {
		t.Fatalf("a service without durable state: %v", err)
	}
	if err := (RuntimeConfig{ID: 1, Durability: DurabilityConfig{DataDir: t.TempDir(), Ephemeral: true}}).Validate(); err == nil {
		t.Fatal("DataDir with Ephemeral accepted")
	}
}

// TestRuntimeRestartRecoversFromStore: a node stopped (or killed: the
// store is synced at every commit) and started again on its data directory
// is the next incarnation of the same node, as a reset makes one in the
// emulator: the service recovers its durable part before Init and loses
// the rest, and its durable layer holds its state before it sees the first
// event. Another node ID on the same directory is refused.
func TestRuntimeRestartRecoversFromStore(t *testing.T) {
	defer livetest.VerifyNone(t)
	dir := t.TempDir()
	counter := &eventCount{}
	cfg := promiserConfig(1, func(c *RuntimeConfig) { c.Durability.DataDir = dir; c.Layers = []layer.Layer{counter} })
	n1 := startPromiser(t, cfg)
	for _, n := range []int{3, 7} {
		if err := n1.Submit(promise{N: n}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the promises", func() bool { return promiserState(t, n1).Calls == 2 })
	if c := n1.Status().Counters; c.DurableCommits == 0 || c.DurableRecords == 0 {
		t.Fatalf("nothing committed: %+v", c)
	}
	stopNodes(t, n1)

	again := &eventCount{}
	cfg = promiserConfig(1, func(c *RuntimeConfig) { c.Durability.DataDir = dir; c.Layers = []layer.Layer{again} })
	n1 = startPromiser(t, cfg)
	p := promiserState(t, n1)
	if p.Promised != 7 || p.SawAtInit != 7 || p.Calls != 0 {
		t.Fatalf("restarted: %+v, want promised 7 seen by Init, no calls", p)
	}
	if again.firstSeen == 0 {
		t.Fatalf("the layer saw its first event before it was restored (count %d)", again.firstSeen)
	}
	stopNodes(t, n1)

	r, err := NewRuntime(promiserConfig(2, func(c *RuntimeConfig) { c.Durability.DataDir = dir }), promiserSpec())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(context.Background()); !errors.Is(err, ErrStoreIdentity) {
		r.Stop(context.Background())
		t.Fatalf("node 2 on node 1's directory: %v, want ErrStoreIdentity", err)
	}
}

// gatedStore is a Store in memory whose Write calls check first, and fail
// with fail when set.
type gatedStore struct {
	mu     sync.Mutex
	recs   map[string][]byte
	writes int
	check  func()
	fail   error
}

func (s *gatedStore) Load() (map[string][]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]byte{}
	for k, v := range s.recs {
		out[k] = slices.Clone(v)
	}
	return out, nil
}

func (s *gatedStore) Write(ws []node.DurableWrite) error {
	if s.check != nil {
		s.check()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.writes++
	for _, w := range ws {
		s.recs[w.Key] = slices.Clone(w.Data)
	}
	return nil
}

func (s *gatedStore) Close() error { return nil }

// TestRuntimeWritesBeforeItSends: the message that states a promise leaves
// the node only after the promise is in the store. The store looks at the
// peer while it writes: the peer has not received the note yet; it does
// once the write returned.
func TestRuntimeWritesBeforeItSends(t *testing.T) {
	defer livetest.VerifyNone(t)
	n2 := startPromiser(t, promiserConfig(2, func(c *RuntimeConfig) { c.Durability.Ephemeral = true }))
	var mu sync.Mutex
	var expect string
	var early []string
	held := 0
	st := &gatedStore{recs: map[string][]byte{}}
	n1 := startPromiser(t, promiserConfig(1, func(c *RuntimeConfig) { c.Durability.Store = st }, n2.Addr()))
	st.mu.Lock()
	st.check = func() {
		mu.Lock()
		defer mu.Unlock()
		if expect != "" && slices.Contains(promiserState(t, n2).Got, expect) {
			early = append(early, expect)
		}
		// check runs on n1's core goroutine, inside the commit: the note
		// waits in the held sends, not on the connection.
		for _, s := range n1.wa.held {
			if s.Env.Msg == (note{Text: expect[len("n1:"):]}) {
				held++
			}
		}
	}
	st.mu.Unlock()
	for n := 1; n <= 5; n++ {
		want := "n1:promised " + strconv.Itoa(n)
		mu.Lock()
		expect = want
		mu.Unlock()
		if err := n1.Submit(promise{To: 2, N: n}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, want, func() bool { return slices.Contains(promiserState(t, n2).Got, want) })
	}
	mu.Lock()
	if len(early) > 0 || held != 5 {
		t.Errorf("the peer had %q before the store wrote them; %d of 5 notes held during their write", early, held)
	}
	mu.Unlock()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.writes < 5 {
		t.Fatalf("%d writes for 5 promises", st.writes)
	}
	stopNodes(t, n1, n2)
}

// TestRuntimeStopsWhenTheStoreFails: a node whose store cannot write stops
// by itself (Done, Err) instead of sending what it could not record.
func TestRuntimeStopsWhenTheStoreFails(t *testing.T) {
	defer livetest.VerifyNone(t)
	st := &gatedStore{recs: map[string][]byte{}}
	n1 := startPromiser(t, promiserConfig(1, func(c *RuntimeConfig) { c.Durability.Store = st; c.Logger = zap.NewNop() }))
	st.mu.Lock()
	st.fail = errors.New("disk full")
	st.mu.Unlock()
	if err := n1.Submit(promise{N: 1}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-n1.Done():
	case <-time.After(waitDeadline):
		t.Fatal("the node went on without its store")
	}
	if err := n1.Err(); !errors.Is(err, ErrStoreFailed) || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Err = %v", err)
	}
	if n1.Status().Running {
		t.Fatal("still running")
	}
}

// TestOpenStoreRefuses: a directory another process's store holds, and a
// file that is not a store, are refused with their errors.
func TestOpenStoreRefuses(t *testing.T) {
	dir := t.TempDir()
	s, err := OpenStore(dir, 1, "svc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(dir, 1, "svc"); !errors.Is(err, ErrStoreInUse) {
		t.Errorf("second open: %v, want ErrStoreInUse", err)
	}
	if err := s.Write([]node.DurableWrite{{Key: "k", Data: []byte("v")}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenStore(dir, 1, "other"); !errors.Is(err, ErrStoreIdentity) {
		t.Errorf("another service: %v, want ErrStoreIdentity", err)
	}
	s, err = OpenStore(dir, 1, "svc")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := s.Load()
	if err != nil || string(recs["k"]) != "v" {
		t.Fatalf("load: %q %v", recs, err)
	}
	s.Close()
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, StoreFile), make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenStore(bad, 1, "svc"); !errors.Is(err, ErrStoreCorrupt) {
		t.Errorf("zeroed file: %v, want ErrStoreCorrupt", err)
	}
}

// FuzzOpenStore opens arbitrary bytes as a data directory's store file,
// as a node restarting on a damaged disk does: a clean error or a store
// that loads, never a panic nor a hang.
func FuzzOpenStore(f *testing.F) {
	dir := f.TempDir()
	s, err := OpenStore(dir, 1, "svc")
	if err != nil {
		f.Fatal(err)
	}
	s.Write([]node.DurableWrite{{Key: node.ServiceDurableKey, Data: []byte{0x91, 0x01}}})
	s.Close()
	good, err := os.ReadFile(filepath.Join(dir, StoreFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:4096])
	f.Add(make([]byte, 8192))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, StoreFile), b, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := OpenStore(dir, 1, "svc")
		if err != nil {
			return
		}
		defer s.Close()
		s.Load()
	})
}
