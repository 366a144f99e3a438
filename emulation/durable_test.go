package emulation_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Keep is the keeper's application call: remember V.
type Keep struct{ V string }

func (Keep) MessageType() string { return "test.keep" }

// keeper is a Durable service: Kept survives a reset (Recover copies it),
// Volatile does not; SawAtInit is what Init found kept.
type keeper struct {
	Kept      []string
	Volatile  []string
	SawAtInit []string
}

func (k *keeper) Init(node.Env)                                 { k.SawAtInit = append([]string(nil), k.Kept...) }
func (k *keeper) HandleMessage(node.Env, node.ID, node.Message) {}
func (k *keeper) HandleTimer(node.Env, string)                  {}
func (k *keeper) HandleApp(_ node.Env, call node.Message) {
	k.Kept = append(k.Kept, call.(Keep).V)
	k.Volatile = append(k.Volatile, call.(Keep).V)
}
func (k *keeper) HandleTransportError(node.Env, node.ID) {}
func (k *keeper) Recover(previous node.Service) {
	k.Kept = append([]string(nil), previous.(*keeper).Kept...)
}

// tally is a layer.Durable counting the application calls it let
// through; a reset zeroes it (the process died), and the Pipeline gives the
// last count it made durable back.
type tally struct {
	n, atReset int
	dirty      bool
	restored   []string
}

func (l *tally) Messages() []node.Message                { return nil }
func (l *tally) Attach(layer.Host) error                 { return nil }
func (l *tally) Start(time.Time) []node.Envelope         { return nil }
func (l *tally) Sending(time.Time, *node.Envelope)       {}
func (l *tally) After(time.Time) []node.Envelope         { return nil }
func (l *tally) Tick(time.Time) ([]node.Envelope, error) { return nil, nil }
func (l *tally) NextTick() time.Time                     { return time.Time{} }
func (l *tally) Before(_ time.Time, ev node.Event, _ *node.Envelope) (bool, []node.Envelope, error) {
	switch ev.Kind {
	case node.EventApp:
		l.n, l.dirty = l.n+1, true
	case node.EventReset:
		l.atReset, l.n, l.dirty = l.n, 0, true
	}
	return true, nil, nil
}
func (l *tally) DurableKey() string { return "tally" }
func (l *tally) DurableState() ([]byte, bool) {
	changed := l.dirty
	l.dirty = false
	return []byte(strconv.Itoa(l.n)), changed
}
func (l *tally) RestoreDurable(data []byte) error {
	l.restored = append(l.restored, string(data))
	n, err := strconv.Atoi(string(data))
	l.n = n
	return err
}

// TestResetRestoresDurableState: in the emulator a reset is the restart
// of the durability contract (node.Core.Restart's twin): the Durable
// service recovers its kept part before Init, and a durable layer of
// Config.Layers, which survives the reset as an object, gets the last
// state it made durable back once the reset went through the layers.
func TestResetRestoresDurableState(t *testing.T) {
	layers := map[node.ID]*tally{}
	spec := node.Spec{Name: "keeper", New: func() node.Service { return &keeper{} }, Messages: []node.Message{Keep{}}}
	e, err := emulation.New(emulation.Config{Spec: spec, Nodes: 2, Seed: 1, StartSpread: time.Millisecond,
		Layers: func(id node.ID) []layer.Layer {
			layers[id] = &tally{}
			return []layer.Layer{layers[id]}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.RunUntil(emulation.Epoch.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		if err := e.Submit(1, Keep{V: v}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.RunUntil(emulation.Epoch.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := e.Reset(1, false); err != nil {
		t.Fatal(err)
	}
	k := e.Core(1).Service().(*keeper)
	if len(k.Kept) != 3 || k.Volatile != nil || len(k.SawAtInit) != 3 {
		t.Fatalf("after the reset: %+v, want 3 kept (seen by Init), none volatile", k)
	}
	l := layers[1]
	if l.atReset != 3 || l.n != 3 || len(l.restored) != 1 || l.restored[0] != "3" {
		t.Fatalf("layer after the reset: held %d at the reset, now %d, restored from %q", l.atReset, l.n, l.restored)
	}
	if layers[2].restored != nil {
		t.Fatalf("node 2's layer was restored: %q", layers[2].restored)
	}
	// Down and Up is the same reset.
	e.Submit(1, Keep{V: "d"})
	if err := e.RunUntil(emulation.Epoch.Add(3 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := e.Down(1, true); err != nil {
		t.Fatal(err)
	}
	if err := e.Up(1); err != nil {
		t.Fatal(err)
	}
	if k := e.Core(1).Service().(*keeper); len(k.Kept) != 4 || l.n != 4 {
		t.Fatalf("after down and up: kept %q, layer %d", k.Kept, l.n)
	}
}
