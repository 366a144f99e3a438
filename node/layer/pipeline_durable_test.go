package layer

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// pinLayer is a small Durable: a note "pin:X" pins X (as steering
// installs a filter), a reset unpins everything (the incarnation ended),
// and its durable state is the pins joined by commas. It records what it
// held when each hook ran, so a test sees when the Pipeline restored it.
type pinLayer struct {
	key     string
	deaf    bool      // pins nothing
	tickAt  time.Time // NextTick
	pins    []string
	dirty   bool
	asked   int
	seen    []string // "kind:pins" at each Gate
	restore []string // what RestoreDurable got
}

func (l *pinLayer) Messages() []node.Message          { return nil }
func (l *pinLayer) Attach(Host) error                 { return nil }
func (l *pinLayer) Start(time.Time) []node.Envelope   { return nil }
func (l *pinLayer) Sending(time.Time, *node.Envelope) {}
func (l *pinLayer) After(time.Time) []node.Envelope   { return nil }
func (l *pinLayer) Tick(time.Time) ([]node.Envelope, error) {
	l.pins, l.dirty = append(l.pins, "tick"), true
	return nil, nil
}
func (l *pinLayer) NextTick() time.Time { return l.tickAt }
func (l *pinLayer) Before(now time.Time, ev node.Event, in *node.Envelope) (bool, []node.Envelope, error) {
	l.seen = append(l.seen, ev.Kind.String()+":"+strings.Join(l.pins, ","))
	switch {
	case ev.Kind == node.EventReset:
		l.pins, l.dirty = nil, true
	case ev.Kind == node.EventMessage && !l.deaf && strings.HasPrefix(msgText(ev.Msg), "pin:"):
		l.pins, l.dirty = append(l.pins, strings.TrimPrefix(msgText(ev.Msg), "pin:")), true
	}
	return true, nil, nil
}
func (l *pinLayer) DurableKey() string { return l.key }
func (l *pinLayer) DurableState() ([]byte, bool) {
	l.asked++
	changed := l.dirty
	l.dirty = false
	return []byte(strings.Join(l.pins, ",")), changed
}
func (l *pinLayer) RestoreDurable(data []byte) error {
	l.restore = append(l.restore, string(data))
	if strings.HasPrefix(string(data), "!") {
		l.pins = nil
		return errors.New("unreadable pins")
	}
	l.pins = nil
	if len(data) > 0 {
		l.pins = strings.Split(string(data), ",")
	}
	return nil
}

var _ Durable = (*pinLayer)(nil)

// vault is a Durable service: "disk:X" notes go to Disk (kept by Recover),
// "mem:X" notes to Memory (lost); SawAtInit is Disk when Init ran; a "ack"
// note is answered, so a step that writes also sends.
type vault struct {
	Disk      []string
	Memory    []string
	SawAtInit []string
}

func (v *vault) Init(env node.Env) { v.SawAtInit = slices.Clone(v.Disk) }
func (v *vault) HandleMessage(env node.Env, from node.ID, m node.Message) {
	text := m.(note).Text
	switch {
	case strings.HasPrefix(text, "disk:"):
		v.Disk = append(v.Disk, strings.TrimPrefix(text, "disk:"))
		env.Send(from, note{Text: "ack"})
	case strings.HasPrefix(text, "mem:"):
		v.Memory = append(v.Memory, strings.TrimPrefix(text, "mem:"))
	}
}
func (v *vault) HandleTimer(node.Env, string)           {}
func (v *vault) HandleApp(node.Env, node.Message)       {}
func (v *vault) HandleTransportError(node.Env, node.ID) {}
func (v *vault) Recover(previous node.Service)          { v.Disk = slices.Clone(previous.(*vault).Disk) }

func newVaultPipeline(t *testing.T, persist bool, layers ...Layer) (*Pipeline, *node.Core) {
	t.Helper()
	core, err := node.NewCore(node.CoreConfig{ID: 1, Factory: func() node.Service { return &vault{} }})
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPipeline(PipelineConfig{Core: core, Layers: layers, Persist: persist})
	if err != nil {
		t.Fatal(err)
	}
	return p, core
}

func msgEvent(text string) (node.Event, *node.Envelope) {
	return node.Event{Kind: node.EventMessage, From: 2, Msg: note{Text: text}, At: t0}, &node.Envelope{From: 2, To: 1, Msg: note{Text: text}}
}

// writes renders an outcome's durable writes as "key=data" (the service's
// decoded Disk for its record), in order.
func writes(t *testing.T, c *node.Core, o Outcome) []string {
	t.Helper()
	var out []string
	for _, w := range o.Durable {
		if w.Key != node.ServiceDurableKey {
			out = append(out, w.Key+"="+string(w.Data))
			continue
		}
		svc, err := c.DecodeDurable(w.Data)
		if err != nil {
			t.Fatalf("the service record does not decode: %v", err)
		}
		v := svc.(*vault)
		if v.Memory != nil || v.SawAtInit != nil {
			t.Fatalf("the projection kept volatile fields: %+v", v)
		}
		out = append(out, "service="+strings.Join(v.Disk, ","))
	}
	return out
}

// TestPipelineEmitsDurableWrites: a step's outcome carries the records it
// changed — the service's projection when its bytes change (Persist), a
// durable layer's state when it reports a change — and nothing when
// nothing durable changed, whatever volatile state did.
func TestPipelineEmitsDurableWrites(t *testing.T) {
	l := &pinLayer{key: "pins"}
	p, c := newVaultPipeline(t, true, l)
	steps := []struct {
		text string
		want []string
	}{
		{"", []string{"service="}}, // init: the first projection
		{"mem:a", nil},
		{"disk:b", []string{"service=b"}},
		{"pin:x", []string{"pins=x"}},
		{"mem:c", nil},
	}
	for _, s := range steps {
		var o Outcome
		if s.text == "" {
			o = p.Step(node.Event{Kind: node.EventInit, At: t0}, nil)
		} else {
			ev, in := msgEvent(s.text)
			o = p.Step(ev, in)
		}
		if got := writes(t, c, o); !slices.Equal(got, s.want) {
			t.Errorf("after %q: writes %q, want %q", s.text, got, s.want)
		}
	}
	l.tickAt = t0
	if o := p.Tick(t0); !slices.Equal(writes(t, c, o), []string{"pins=x,tick"}) {
		t.Errorf("tick writes %q", writes(t, c, o))
	}
	if l.asked == 0 {
		t.Fatal("the layer was never asked")
	}
	// A step that writes and sends carries both: the shell syncs the
	// first before it sends the second.
	ev, in := msgEvent("disk:d")
	if o := p.Step(ev, in); len(o.Durable) != 1 || len(o.Sends) != 1 {
		t.Fatalf("write and send: %+v", o)
	}
}

// TestPipelineWithoutPersistEmitsNoServiceRecord: off (the emulator, the
// explorer), the service's projection is never computed; the layers'
// records still are (the Pipeline restores them on a reset).
func TestPipelineWithoutPersistEmitsNoServiceRecord(t *testing.T) {
	l := &pinLayer{key: "pins"}
	p, c := newVaultPipeline(t, false, l)
	p.Step(node.Event{Kind: node.EventInit, At: t0}, nil)
	for _, text := range []string{"disk:a", "pin:x"} {
		ev, in := msgEvent(text)
		o := p.Step(ev, in)
		for _, w := range o.Durable {
			if w.Key == node.ServiceDurableKey {
				t.Fatalf("%q: a service record without Persist", text)
			}
		}
		if text == "pin:x" && !slices.Equal(writes(t, c, o), []string{"pins=x"}) {
			t.Fatalf("layer record %q", writes(t, c, o))
		}
	}
}

// TestPipelineResetRestoresDurableLayer: on EventReset the layers see the
// reset first (the pin layer drops its pins), then the Pipeline gives each
// durable layer the last bytes it emitted; the emptied state is never
// emitted, and the core sees the restored layer.
func TestPipelineResetRestoresDurableLayer(t *testing.T) {
	l, other := &pinLayer{key: "pins"}, &pinLayer{key: "never", deaf: true}
	p, _ := newVaultPipeline(t, false, l, other)
	p.Step(node.Event{Kind: node.EventInit, At: t0}, nil)
	for _, text := range []string{"pin:x", "pin:y"} {
		ev, in := msgEvent(text)
		p.Step(ev, in)
	}
	o := p.Step(node.Event{Kind: node.EventReset, At: t0.Add(time.Second)}, nil)
	if !o.Handled || len(o.Errors) != 0 {
		t.Fatalf("reset outcome %+v", o)
	}
	for _, w := range o.Durable {
		if w.Key == "pins" {
			t.Errorf("the reset emitted %q: the restored state is what is on disk already", w.Data)
		}
	}
	if !slices.Equal(l.pins, []string{"x", "y"}) || !slices.Equal(l.restore, []string{"x,y"}) {
		t.Errorf("after reset: pins %q, restored from %q", l.pins, l.restore)
	}
	if other.restore != nil {
		t.Errorf("a layer that never made anything durable was restored from %q", other.restore)
	}
	if last := l.seen[len(l.seen)-1]; last != "reset:x,y" {
		t.Errorf("the layer saw the reset holding %q", last)
	}
	// The next change is emitted against the restored bytes.
	ev, in := msgEvent("pin:z")
	if o := p.Step(ev, in); len(o.Durable) != 1 || o.Durable[0].Key != "pins" || string(o.Durable[0].Data) != "x,y,z" {
		t.Errorf("after the reset: %+v", o.Durable)
	}
	// A restore that fails is the outcome's error; the layer starts empty.
	l.pins, l.dirty = []string{"!bad"}, true
	ev, in = msgEvent("mem:q")
	p.Step(ev, in)
	o = p.Step(node.Event{Kind: node.EventReset, At: t0.Add(2 * time.Second)}, nil)
	if len(o.Errors) != 1 || !strings.Contains(o.Errors[0].Error(), "unreadable pins") || l.pins != nil {
		t.Errorf("failed restore: errors %v, pins %q", o.Errors, l.pins)
	}
}

// store is a test store: the records of every outcome, last value wins.
type store map[string][]byte

func (s store) apply(o Outcome) {
	for _, w := range o.Durable {
		s[w.Key] = w.Data
	}
}

func (s store) recovered() node.Recovered {
	rec := node.Recovered{Service: s[node.ServiceDurableKey], Layers: map[string][]byte{}}
	for k, v := range s {
		if k != node.ServiceDurableKey {
			rec.Layers[k] = v
		}
	}
	return rec
}

// TestPipelineRestartRecovers: what a persisting Pipeline emitted restarts
// a new core and layer (a new process) through Pipeline.Restart as a reset
// restarts one in memory: the layer holds its pins before it sees the
// init, the service recovers its durable part before Init and loses the
// rest, and nothing is written again until something changes.
func TestPipelineRestartRecovers(t *testing.T) {
	disk := store{}
	p, _ := newVaultPipeline(t, true, &pinLayer{key: "pins"})
	disk.apply(p.Step(node.Event{Kind: node.EventInit, At: t0}, nil))
	disk.apply(p.Start(t0))
	for _, text := range []string{"disk:a", "mem:b", "pin:x", "disk:c"} {
		ev, in := msgEvent(text)
		disk.apply(p.Step(ev, in))
	}

	l := &pinLayer{key: "pins"}
	p2, c2 := newVaultPipeline(t, true, l)
	o, err := p2.Restart(node.Event{Kind: node.EventInit, At: t0.Add(time.Minute)}, disk.recovered())
	if err != nil || !o.Handled || len(o.Errors) != 0 {
		t.Fatalf("restart: %v, outcome %+v", err, o)
	}
	v := c2.Service().(*vault)
	if !slices.Equal(v.Disk, []string{"a", "c"}) || v.Memory != nil || !slices.Equal(v.SawAtInit, []string{"a", "c"}) {
		t.Fatalf("restarted service %+v: want disk [a c] seen by Init, no memory", v)
	}
	if !slices.Equal(l.seen, []string{"init:x"}) {
		t.Fatalf("the layer saw %q: it must hold its pins before the first event", l.seen)
	}
	if len(o.Durable) != 0 {
		t.Errorf("restart rewrote %+v", o.Durable)
	}
	if o := p2.Start(t0); len(o.Durable) != 0 {
		t.Errorf("start rewrote %+v", o.Durable)
	}
	// The same contract as a reset in memory.
	p3, c3 := newVaultPipeline(t, false)
	p3.Step(node.Event{Kind: node.EventInit, At: t0}, nil)
	for _, text := range []string{"disk:a", "mem:b", "disk:c"} {
		ev, in := msgEvent(text)
		p3.Step(ev, in)
	}
	p3.Step(node.Event{Kind: node.EventReset, At: t0.Add(time.Minute)}, nil)
	if h2, h3 := coreHash(t, c2), coreHash(t, c3); h2 != h3 {
		t.Errorf("a restart and a reset left different states: %+v vs %+v", c2.Service(), c3.Service())
	}
}

func coreHash(t *testing.T, c *node.Core) node.Hash {
	t.Helper()
	h, err := c.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// TestPipelineRestartRefusesBadRecords: a service record that does not
// decode fails Restart before anything runs (the node must not start
// empty); a layer record its layer refuses is an error of the outcome and
// the layer starts empty; Restart takes only an init event.
func TestPipelineRestartRefusesBadRecords(t *testing.T) {
	p, c := newVaultPipeline(t, true)
	for _, bad := range [][]byte{{0xc1}, {0x92, 0xa1}, []byte("not msgpack at all")} {
		_, err := p.Restart(node.Event{Kind: node.EventInit, At: t0}, node.Recovered{Service: bad})
		if !errors.Is(err, node.ErrBadDurable) {
			t.Errorf("record %x: %v, want ErrBadDurable", bad, err)
		}
	}
	if c.Started() {
		t.Fatal("a refused restart started the core")
	}
	if _, err := p.Restart(node.Event{Kind: node.EventReset, At: t0}, node.Recovered{}); !errors.Is(err, node.ErrInvalidEvent) {
		t.Errorf("restart with a reset: %v", err)
	}
	l := &pinLayer{key: "pins"}
	p2, _ := newVaultPipeline(t, true, l)
	o, err := p2.Restart(node.Event{Kind: node.EventInit, At: t0}, node.Recovered{Layers: map[string][]byte{"pins": []byte("!x")}})
	if err != nil || len(o.Errors) != 1 || l.pins != nil || !o.Handled {
		t.Fatalf("bad layer record: %v, outcome %+v, pins %q", err, o, l.pins)
	}
}

// TestNewPipelineChecksDurableKeys: keys are non-empty, unique, and not
// the service's.
func TestNewPipelineChecksDurableKeys(t *testing.T) {
	for _, layers := range [][]Layer{
		{&pinLayer{key: ""}},
		{&pinLayer{key: node.ServiceDurableKey}},
		{&pinLayer{key: "a"}, &pinLayer{key: "a"}},
	} {
		core := newRecorderCore(t, 1)
		if _, err := NewPipeline(PipelineConfig{Core: core, Layers: layers}); err == nil {
			t.Errorf("layers with keys %q, %q accepted", layers[0].(*pinLayer).key, layers[len(layers)-1].(*pinLayer).key)
		}
	}
}

// TestCoreRestartMatchesReset: Core.Restart from a decoded projection and
// EventReset from the value in memory give the same state; a service that
// is not Durable has no projection, and Restart then is an init.
func TestCoreRestartMatchesReset(t *testing.T) {
	c := newLedgerCore(t)
	c.Step(node.Event{Kind: node.EventInit, At: t0})
	c.Step(node.Event{Kind: node.EventMessage, At: t0, From: 1, Msg: note{"a"}})
	b, ok, err := c.AppendDurable(nil)
	if err != nil || !ok {
		t.Fatalf("projection: %v %v", ok, err)
	}
	prev, err := c.DecodeDurable(b)
	if err != nil {
		t.Fatal(err)
	}
	fresh := newLedgerCore(t)
	if _, err := fresh.Restart(node.Event{Kind: node.EventInit, At: t0}, prev); err != nil {
		t.Fatal(err)
	}
	c.Step(node.Event{Kind: node.EventReset, At: t0})
	got, want := fresh.Service().(*ledger), c.Service().(*ledger)
	if !slices.Equal(got.Disk, want.Disk) || !slices.Equal(got.SawAtInit, want.SawAtInit) || got.Memory != nil {
		t.Fatalf("restart %+v, reset %+v", got, want)
	}
	r := newRecorderCore(t, 1)
	r.Step(node.Event{Kind: node.EventInit, At: t0})
	if _, ok, _ := r.AppendDurable(nil); ok || r.IsDurable() {
		t.Fatal("a service without Recover has a durable projection")
	}
}

// FuzzDecodeDurable reads arbitrary bytes as a service's durable record,
// as a restart reads its store: every input is a clean error wrapping
// ErrBadDurable or a service value whose projection decodes again, never
// a panic.
func FuzzDecodeDurable(f *testing.F) {
	c, _ := node.NewCore(node.CoreConfig{ID: 1, Factory: func() node.Service { return &vault{} }})
	c.Step(node.Event{Kind: node.EventInit, At: t0})
	c.Step(node.Event{Kind: node.EventMessage, At: t0, From: 2, Msg: note{Text: "disk:a"}})
	good, _, _ := c.AppendDurable(nil)
	f.Add(good)
	f.Add([]byte{0x93, 0x91, 0xa1, 'a', 0xc0, 0xc0})
	f.Add([]byte{0xdd, 0xff, 0xff, 0xff, 0xff}) // an array32 header: no allocation from a length
	f.Fuzz(func(t *testing.T, b []byte) {
		svc, err := c.DecodeDurable(b)
		if err != nil {
			if !errors.Is(err, node.ErrBadDurable) {
				t.Fatalf("error %v does not wrap ErrBadDurable", err)
			}
			return
		}
		fresh, _ := node.NewCore(node.CoreConfig{ID: 1, Factory: func() node.Service { return &vault{} }})
		if _, err := fresh.Restart(node.Event{Kind: node.EventInit, At: t0}, svc); err != nil {
			t.Fatal(err)
		}
		again, ok, err := fresh.AppendDurable(nil)
		if err != nil || !ok {
			t.Fatalf("a recovered node has no projection: %v", err)
		}
		if _, err := fresh.DecodeDurable(again); err != nil {
			t.Fatalf("its projection does not decode: %v", err)
		}
	})
}
