package node

import (
	"errors"
	"testing"
	"time"
)

type note struct{ Text string }

func (note) MessageType() string { return "test.note" }

// recorder logs what it handles and exercises every Env method.
type recorder struct {
	Log   []string
	Draws []int
}

func (r *recorder) Init(env Env) {
	r.Log = append(r.Log, "init")
	env.SetTimer("tick", time.Second)
}
func (r *recorder) HandleMessage(env Env, from ID, m Message) {
	r.Log = append(r.Log, "msg "+m.(note).Text+" from "+from.String())
	if m.(note).Text == "echo" {
		env.Send(from, note{Text: "echoed"})
	}
	if m.(note).Text == "datagram" {
		env.Send(from, note{Text: "first"})
		env.SendDatagram(from, note{Text: "second"})
	}
	if m.(note).Text == "cancel" {
		env.CancelTimer("tick")
	}
}
func (r *recorder) HandleTimer(env Env, name string) {
	r.Log = append(r.Log, "timer "+name)
	r.Draws = append(r.Draws, env.Rand().IntN(1000))
	if env.TimerScheduled(name) {
		panic("a firing timer must be unscheduled when its handler runs")
	}
	env.SetTimer(name, time.Second)
}
func (r *recorder) HandleApp(env Env, call Message) { r.Log = append(r.Log, "app "+call.(note).Text) }
func (r *recorder) HandleTransportError(env Env, peer ID) {
	r.Log = append(r.Log, "error "+peer.String())
}

func newRecorderCore(t *testing.T, seed uint64) *Core {
	t.Helper()
	c, err := NewCore(CoreConfig{ID: 5, Factory: func() Service { return &recorder{} }, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var t0 = time.Unix(1000, 0).UTC()

func TestCoreStepReturnsEffectsAsData(t *testing.T) {
	c := newRecorderCore(t, 1)
	if _, err := c.Step(Event{Kind: EventMessage, From: 2, Msg: note{"x"}}); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("step before init: %v, want ErrNotStarted", err)
	}
	fx, err := c.Step(Event{Kind: EventInit, At: t0})
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Timers) != 1 || fx.Timers[0] != (TimerOp{Name: "tick", At: t0.Add(time.Second)}) {
		t.Fatalf("init effects = %+v", fx)
	}
	if _, err := c.Step(Event{Kind: EventInit, At: t0}); !errors.Is(err, ErrAlreadyStarted) {
		t.Fatalf("second init: %v", err)
	}
	fx, _ = c.Step(Event{Kind: EventMessage, At: t0.Add(10), From: 2, Msg: note{"echo"}})
	if len(fx.Sends) != 1 || fx.Sends[0].To != 2 || fx.Sends[0].From != 5 || fx.Sends[0].Msg != (note{"echoed"}) {
		t.Fatalf("echo effects = %+v", fx)
	}
	if c.Now() != t0.Add(10) {
		t.Fatalf("now = %v", c.Now())
	}
	// Time never goes backwards.
	c.Step(Event{Kind: EventApp, At: t0, Msg: note{"late"}})
	if c.Now() != t0.Add(10) {
		t.Fatalf("clock moved backwards to %v", c.Now())
	}
}

func TestCoreTimers(t *testing.T) {
	c := newRecorderCore(t, 1)
	fx, _ := c.Step(Event{Kind: EventInit, At: t0})
	deadline := fx.Timers[0].At

	// A firing whose deadline does not match the scheduled one is stale.
	fx, _ = c.Step(Event{Kind: EventTimer, At: deadline, Timer: "tick", Deadline: deadline.Add(-time.Millisecond)})
	if !fx.Ignored {
		t.Fatal("stale timer was not ignored")
	}
	fx, _ = c.Step(Event{Kind: EventTimer, At: deadline, Timer: "tick", Deadline: deadline})
	if fx.Ignored || len(fx.Timers) != 1 || !fx.Timers[0].At.Equal(deadline.Add(time.Second)) {
		t.Fatalf("timer effects = %+v", fx)
	}
	// Cancelling from a handler is reported; firing a cancelled timer is ignored.
	fx, _ = c.Step(Event{Kind: EventMessage, At: deadline, From: 2, Msg: note{"cancel"}})
	if len(fx.Timers) != 1 || !fx.Timers[0].Cancel {
		t.Fatalf("cancel effects = %+v", fx)
	}
	if fx, _ = c.Step(Event{Kind: EventTimer, At: deadline, Timer: "tick"}); !fx.Ignored {
		t.Fatal("cancelled timer fired")
	}
}

func TestCoreResetLosesStateKeepsRandom(t *testing.T) {
	c := newRecorderCore(t, 1)
	c.Step(Event{Kind: EventInit, At: t0})
	c.Step(Event{Kind: EventApp, At: t0, Msg: note{"hello"}})
	fx, _ := c.Step(Event{Kind: EventReset, At: t0.Add(time.Minute)})
	got := c.Service().(*recorder).Log
	if len(got) != 1 || got[0] != "init" {
		t.Fatalf("after reset log = %v, want a fresh [init]", got)
	}
	if len(fx.Timers) != 1 || len(c.State().Timers) != 1 {
		t.Fatalf("reset must drop old timers and Init re-arms one: %+v / %+v", fx.Timers, c.State().Timers)
	}
}

func TestCoreDeterministicAndCopyIsSpeculative(t *testing.T) {
	run := func(c *Core) []int {
		fx, _ := c.Step(Event{Kind: EventInit, At: t0})
		at := fx.Timers[0].At
		for i := 0; i < 5; i++ {
			fx, _ = c.Step(Event{Kind: EventTimer, At: at, Timer: "tick"})
			at = fx.Timers[0].At
		}
		return c.Service().(*recorder).Draws
	}
	a, b := run(newRecorderCore(t, 9)), run(newRecorderCore(t, 9))
	if len(a) != 5 || len(b) != 5 {
		t.Fatalf("draws %v %v", a, b)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("same seed, different draws: %v vs %v", a, b)
		}
	}

	c := newRecorderCore(t, 3)
	c.Step(Event{Kind: EventInit, At: t0})
	before, _ := c.Hash()
	spec, err := c.Copy()
	if err != nil {
		t.Fatal(err)
	}
	spec.Step(Event{Kind: EventApp, At: t0, Msg: note{"speculative"}})
	spec.Step(Event{Kind: EventTimer, At: t0.Add(time.Second), Timer: "tick"})
	if after, _ := c.Hash(); after != before {
		t.Fatal("stepping a copy changed the original")
	}
	if h, _ := spec.Hash(); h == before {
		t.Fatal("copy did not change")
	}
}

func TestCoreRejectsInvalidEvents(t *testing.T) {
	c := newRecorderCore(t, 1)
	c.Step(Event{Kind: EventInit, At: t0})
	for name, ev := range map[string]Event{
		"message without sender":       {Kind: EventMessage, Msg: note{}},
		"message without body":         {Kind: EventMessage, From: 1},
		"app without call":             {Kind: EventApp},
		"transport error without peer": {Kind: EventTransportError},
		"unknown kind":                 {Kind: 99},
	} {
		if _, err := c.Step(ev); !errors.Is(err, ErrInvalidEvent) {
			t.Errorf("%s: err = %v, want ErrInvalidEvent", name, err)
		}
	}
	if _, err := NewCore(CoreConfig{Factory: func() Service { return &recorder{} }}); err == nil {
		t.Error("NewCore accepted ID None")
	}
	if _, err := NewCore(CoreConfig{ID: 1}); err == nil {
		t.Error("NewCore accepted a nil factory")
	}
}

func TestEnvOutsideHandlerPanics(t *testing.T) {
	c := newRecorderCore(t, 1)
	defer func() {
		if recover() == nil {
			t.Fatal("using Env after the handler returned did not panic")
		}
	}()
	c.env.Send(1, note{})
}

func TestRandIntNUniformAndBounded(t *testing.T) {
	r := NewRand(42, 7)
	counts := make([]int, 6)
	const n = 60000
	for i := 0; i < n; i++ {
		v := r.IntN(6)
		if v < 0 || v >= 6 {
			t.Fatalf("IntN(6) = %d", v)
		}
		counts[v]++
	}
	for v, c := range counts {
		if c < n/6-600 || c > n/6+600 { // > 6 standard deviations away
			t.Fatalf("value %d drawn %d times of %d (seed 42)", v, c, n)
		}
	}
	if f := r.Float64(); f < 0 || f >= 1 {
		t.Fatalf("Float64 = %v", f)
	}
}

func TestParseID(t *testing.T) {
	for in, want := range map[string]ID{"13": 13, "n13": 13, "N7": 7} {
		if got, err := ParseID(in); err != nil || got != want {
			t.Errorf("ParseID(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "n", "0", "-1", "x3", "n18446744073709551616"} {
		if _, err := ParseID(in); err == nil {
			t.Errorf("ParseID(%q) accepted", in)
		}
	}
}

type tick struct{}

func (tick) MessageType() string { return "test.tick" }

// ticker re-arms a timer and sends a zero-size message on every firing: the
// shape of a periodic protocol step.
type ticker struct{ Fired int }

func (k *ticker) Init(env Env) { env.SetTimer("t", time.Second) }
func (k *ticker) HandleTimer(env Env, _ string) {
	k.Fired++
	env.Send(2, tick{})
	env.SetTimer("t", time.Second)
}
func (k *ticker) HandleMessage(Env, ID, Message)     {}
func (k *ticker) HandleApp(Env, Message)             {}
func (k *ticker) HandleTransportError(env Env, _ ID) {}

// Step reuses the core's effect buffers, so a step whose handler allocates
// nothing allocates nothing; and the returned effects are those of the
// latest step only.
func TestStepDoesNotAllocate(t *testing.T) {
	c, _ := NewCore(CoreConfig{ID: 1, Factory: func() Service { return &ticker{} }})
	fx, _ := c.Step(Event{Kind: EventInit, At: t0})
	at := fx.Timers[0].At
	allocs := testing.AllocsPerRun(100, func() {
		fx, _ = c.Step(Event{Kind: EventTimer, At: at, Timer: "t"})
		at = fx.Timers[0].At
		if len(fx.Sends) != 1 || len(fx.Timers) != 1 {
			t.Fatalf("effects of one step = %+v", fx)
		}
	})
	if allocs != 0 {
		t.Fatalf("Step allocated %v times per event", allocs)
	}
}

// A datagram is a send effect with Datagram set, in the order the handler
// made it among the messages; the core does not allocate for it.
func TestCoreSendDatagramEffect(t *testing.T) {
	c := newRecorderCore(t, 1)
	if _, err := c.Step(Event{Kind: EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	fx, err := c.Step(Event{Kind: EventMessage, At: t0, From: 2, Msg: note{"datagram"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Envelope{
		{From: 5, To: 2, Msg: note{"first"}},
		{From: 5, To: 2, Msg: note{"second"}, Datagram: true},
	}
	if len(fx.Sends) != 2 || fx.Sends[0] != want[0] || fx.Sends[1] != want[1] {
		t.Fatalf("sends = %v, want %v", fx.Sends, want)
	}
	if got := fx.Sends[1].String(); got != "{n5 n2 0 {second} datagram}" {
		t.Errorf("String = %q", got)
	}
	if got := fx.Sends[0].String(); got != "{n5 n2 0 {first}}" {
		t.Errorf("String = %q", got)
	}

	d, _ := NewCore(CoreConfig{ID: 1, Factory: func() Service { return &dgramTicker{} }})
	fx, _ = d.Step(Event{Kind: EventInit, At: t0})
	at := fx.Timers[0].At
	allocs := testing.AllocsPerRun(100, func() {
		fx, _ = d.Step(Event{Kind: EventTimer, At: at, Timer: "t"})
		at = fx.Timers[0].At
		if len(fx.Sends) != 1 || !fx.Sends[0].Datagram {
			t.Fatalf("effects of one step = %+v", fx)
		}
	})
	if allocs != 0 {
		t.Fatalf("Step allocated %v times per event with a datagram", allocs)
	}
}

// dgramTicker is ticker with a datagram instead of a message.
type dgramTicker struct{ ticker }

func (k *dgramTicker) HandleTimer(env Env, _ string) {
	k.Fired++
	env.SendDatagram(2, tick{})
	env.SetTimer("t", time.Second)
}

// TestZeroCoreConfigMeansDefault: a CoreConfig with only ID and Factory
// set makes the same node as DefaultCoreConfig with them filled in.
func TestZeroCoreConfigMeansDefault(t *testing.T) {
	factory := func() Service { return &recorder{} }
	def := DefaultCoreConfig()
	if def.Logger == nil || def.Seed != 0 || def.ID != None || def.Factory != nil {
		t.Fatalf("DefaultCoreConfig() = %+v", def)
	}
	def.ID, def.Factory = 4, factory
	var hashes []Hash
	for _, cfg := range []CoreConfig{{ID: 4, Factory: factory}, def} {
		c, err := NewCore(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Step(Event{Kind: EventInit, At: time.Unix(10, 0)}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Step(Event{Kind: EventTimer, Timer: "tick", At: time.Unix(11, 0)}); err != nil {
			t.Fatal(err)
		}
		h, err := c.Hash()
		if err != nil {
			t.Fatal(err)
		}
		hashes = append(hashes, h)
	}
	if hashes[0] != hashes[1] {
		t.Errorf("zero and default configs step to different states: %v, %v", hashes[0], hashes[1])
	}
}
