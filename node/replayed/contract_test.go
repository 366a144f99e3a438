package replayed_test

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/replayed"
	"github.com/vmihailenco/msgpack/v5"
)

var t0 = time.Unix(1_000_000, 0).UTC()

// twin drives the hand-written bank and the adapted one through the same
// events, as node 1 of a three-node system.
type twin struct {
	t       *testing.T
	seed    uint64
	ad      *replayed.Adapter[view]
	hand    *node.Core
	adapted *node.Core
	now     time.Time
}

func newTwin(t *testing.T, seed uint64, keepEvery bool, images ...bool) *twin {
	ad := bankAdapter(keepEvery, images...)
	hand, err := node.NewCore(node.CoreConfig{ID: 1, Factory: handSpec().New, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	adapted, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory(), Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	return &twin{t: t, seed: seed, ad: ad, hand: hand, adapted: adapted, now: t0}
}

// step steps both cores with ev and compares their effects and states.
func (w *twin) step(i int, ev node.Event) {
	w.t.Helper()
	w.now = w.now.Add(10 * time.Millisecond)
	ev.At = w.now
	fh, err := w.hand.Step(ev)
	if err != nil {
		w.t.Fatalf("seed %d, event %d (%v): hand-written: %v", w.seed, i, ev, err)
	}
	hs := fmt.Sprint(fh.Sends, fh.Timers, fh.Ignored)
	fa, err := w.adapted.Step(ev)
	if err != nil {
		w.t.Fatalf("seed %d, event %d (%v): adapted: %v", w.seed, i, ev, err)
	}
	if as := fmt.Sprint(fa.Sends, fa.Timers, fa.Ignored); as != hs {
		w.t.Fatalf("seed %d, event %d (%v): effects differ:\nhand-written %s\nadapted      %s", w.seed, i, ev, hs, as)
	}
	w.compare(i, ev)
}

// compare checks that the adapted state is the hand-written one: the same
// view, timers and random source, and that a checkpoint of it decodes
// (replays) to the same observation and fingerprint.
func (w *twin) compare(i int, ev node.Event) {
	w.t.Helper()
	want := w.hand.Service().(*handBank).view()
	got, ok := replayed.Observed[view](w.adapted.Service())
	if !ok || !reflect.DeepEqual(got, want) {
		w.t.Fatalf("seed %d, event %d (%v): observed %+v, hand-written %+v", w.seed, i, ev, got, want)
	}
	hst, ast := w.hand.State(), w.adapted.State()
	if !reflect.DeepEqual(hst.Timers, ast.Timers) || hst.Rand != ast.Rand {
		w.t.Fatalf("seed %d, event %d (%v): timers or random source differ: %v / %v", w.seed, i, ev, hst.Timers, ast.Timers)
	}
	cp, err := w.adapted.Checkpoint()
	if err != nil {
		w.t.Fatal(err)
	}
	back, err := node.DecodeCheckpoint(cp, w.ad.Factory())
	if err != nil {
		w.t.Fatalf("seed %d, event %d (%v): decoding the checkpoint: %v", w.seed, i, ev, err)
	}
	if o, _ := replayed.Observed[view](back.Service); !reflect.DeepEqual(o, want) {
		w.t.Fatalf("seed %d, event %d (%v): the replayed object observes %+v, the live one %+v", w.seed, i, ev, o, want)
	}
	h1, err1 := ast.Hash()
	h2, err2 := back.Hash()
	if err1 != nil || err2 != nil || h1 != h2 {
		w.t.Fatalf("seed %d, event %d: fingerprint %v live, %v replayed (%v, %v)", w.seed, i, h1, h2, err1, err2)
	}
	again, err := back.AppendCheckpoint(nil)
	if err != nil || !bytes.Equal(again, cp) {
		w.t.Fatalf("seed %d, event %d: the decoded checkpoint re-encodes differently (%v)", w.seed, i, err)
	}
}

// randomEvent draws the next event: calls, credits, due timers, broken
// connections and, rarely, a reset.
func (w *twin) randomEvent(r *node.Rand) node.Event {
	peer := node.ID(2 + r.IntN(2))
	switch k := r.IntN(20); {
	case k < 5:
		return node.Event{Kind: node.EventApp, Msg: Pay{To: peer, Amount: 1 + r.IntN(6)}}
	case k < 10:
		return node.Event{Kind: node.EventMessage, From: peer, Msg: Credit{Amount: 1 + r.IntN(3)}}
	case k < 17:
		if ts := w.hand.State().Timers; len(ts) > 0 {
			return node.Event{Kind: node.EventTimer, Timer: ts[r.IntN(len(ts))].Name}
		}
		return node.Event{Kind: node.EventTransportError, Peer: peer}
	case k < 19:
		return node.Event{Kind: node.EventTransportError, Peer: peer}
	default:
		return node.Event{Kind: node.EventReset}
	}
}

// TestAdapterBehavesLikeTheHandWrittenService: on random event sequences
// with resets, the adapted bank has the hand-written bank's effects,
// observation, timers and random source after every event; every
// checkpoint replays to the live observation and fingerprint and
// re-encodes to the same bytes; a core restored from a checkpoint goes on
// like the one it was taken from. The same holds of a bank that writes
// images of itself, which rebase its log.
func TestAdapterBehavesLikeTheHandWrittenService(t *testing.T) {
	for _, variant := range []struct{ keepEvery, images bool }{{false, false}, {true, false}, {false, true}} {
		keepEvery := variant.keepEvery
		for seed := uint64(1); seed <= 12; seed++ {
			w := newTwin(t, seed, keepEvery, variant.images)
			w.step(0, node.Event{Kind: node.EventInit})
			r := node.NewRand(seed, 99)
			for i := 1; i <= 120; i++ {
				w.step(i, w.randomEvent(&r))
				if i%25 == 0 { // go on from a checkpoint
					cp, err := w.adapted.Checkpoint()
					if err != nil {
						t.Fatal(err)
					}
					restored, err := node.NewCore(node.CoreConfig{ID: 1, Factory: w.ad.Factory()})
					if err != nil {
						t.Fatal(err)
					}
					if err := restored.Restore(cp); err != nil {
						t.Fatalf("seed %d: restore: %v", seed, err)
					}
					w.adapted = restored
				}
			}
			if st := w.ad.Stats(); variant.images && st.Rebases == 0 {
				t.Errorf("seed %d: %+v: no image became a base", seed, st)
			}
		}
	}
}

// TestResetRecoversTheDurablePart: a reset keeps what AppendDurable
// wrote (balance, payments sent), loses the rest (credits received), and
// starts the log again from the new durable point.
func TestResetRecoversTheDurablePart(t *testing.T) {
	w := newTwin(t, 1, false)
	w.step(0, node.Event{Kind: node.EventInit})
	w.step(1, node.Event{Kind: node.EventApp, Msg: Pay{To: 2, Amount: 4}})
	w.step(2, node.Event{Kind: node.EventMessage, From: 3, Msg: Credit{Amount: 1}})
	w.step(3, node.Event{Kind: node.EventReset})
	got, _ := replayed.Observed[view](w.adapted.Service())
	want := view{Balance: 7, Sent: map[node.ID]int{2: 4}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the reset: %+v, want %+v", got, want)
	}
	if n := w.adapted.Service().(*replayed.Service[view]).Inputs(); n != 1 {
		t.Errorf("the log holds %d inputs after the reset, want 1 (the new incarnation's init)", n)
	}
}

// TestUnobservableInputsAreNotLogged: ticks change neither the
// observation nor the timers' names, so the log keeps none of them
// (unless KeepEveryInput).
func TestUnobservableInputsAreNotLogged(t *testing.T) {
	for _, keepEvery := range []bool{false, true} {
		w := newTwin(t, 1, keepEvery)
		w.step(0, node.Event{Kind: node.EventInit})
		for i := 1; i <= 50; i++ {
			w.step(i, node.Event{Kind: node.EventTimer, Timer: "tick"})
		}
		want := 1
		if keepEvery {
			want = 51
		}
		if n := w.adapted.Service().(*replayed.Service[view]).Inputs(); n != want {
			t.Errorf("KeepEveryInput %v: %d inputs logged after 50 ticks, want %d", keepEvery, n, want)
		}
	}
}

// TestEqualObservationsHashEqual: two histories that leave the object in
// the same observable state give the same fingerprint (and different
// checkpoints); a different observation gives a different one.
func TestEqualObservationsHashEqual(t *testing.T) {
	ad := bankAdapter(false)
	run := func(credits ...int) *node.Core {
		c, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory(), Seed: 5})
		if err != nil {
			t.Fatal(err)
		}
		at := t0
		if _, err := c.Step(node.Event{Kind: node.EventInit, At: at}); err != nil {
			t.Fatal(err)
		}
		for _, a := range credits {
			at = at.Add(time.Millisecond)
			if _, err := c.Step(node.Event{Kind: node.EventMessage, At: at, From: 2, Msg: Credit{Amount: a}}); err != nil {
				t.Fatal(err)
			}
		}
		return c
	}
	hash := func(c *node.Core) node.Hash {
		h, err := c.Hash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	a, b, c := run(3, 4), run(4, 3), run(2, 5, 0)
	if hash(a) != hash(b) {
		t.Error("credits of 3 then 4 and of 4 then 3 hash differently")
	}
	if hash(a) == hash(c) {
		t.Error("two credits and three credits hash equal")
	}
	ca, _ := a.Checkpoint()
	cb, _ := b.Checkpoint()
	if bytes.Equal(ca, cb) {
		t.Error("two histories gave the same checkpoint: the log is not the state")
	}
}

// TestDecodeRejectsADivergentLog: a checkpoint whose replay does not give
// the logged observations is a bad checkpoint (node.ErrBadCheckpoint)
// that says the replay diverged, and so is one of an object that is not
// deterministic.
func TestDecodeRejectsADivergentLog(t *testing.T) {
	w := newTwin(t, 1, false)
	w.step(0, node.Event{Kind: node.EventInit})
	w.step(1, node.Event{Kind: node.EventMessage, From: 2, Msg: Credit{Amount: 3}})
	cp, err := w.adapted.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	// The logged credit's amount follows its field name.
	i := bytes.LastIndex(cp, []byte("Amount"))
	if i < 0 || cp[i+len("Amount")] != 3 {
		t.Fatal("no credit of 3 in the checkpoint")
	}
	forged := bytes.Clone(cp)
	forged[i+len("Amount")] = 2
	_, err = node.DecodeCheckpoint(forged, w.ad.Factory())
	if !diverged(err) {
		t.Errorf("a forged credit: %v, want a divergence and ErrBadCheckpoint", err)
	}

	flaky := 0
	ad, err := replayed.New(replayed.Config[view]{Name: "flaky", Messages: bankMessages,
		New: func(self node.ID, d []byte) (replayed.Object[view], error) {
			flaky++ // a global the object reads: not deterministic
			return objBank{&bank{Balance: flaky, Sent: map[node.ID]int{}}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	cp, err = c.Checkpoint()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := node.DecodeCheckpoint(cp, ad.Factory()); !diverged(err) {
		t.Errorf("an object that is not deterministic: %v, want a divergence and ErrBadCheckpoint", err)
	}
}

// diverged reports whether err is a bad checkpoint for a replay that
// diverged (node.DecodeCheckpoint keeps the service's error as text).
func diverged(err error) bool {
	return errors.Is(err, node.ErrBadCheckpoint) && strings.Contains(fmt.Sprint(err), replayed.ErrDiverged.Error())
}

func TestNewRejectsABadConfig(t *testing.T) {
	for name, cfg := range map[string]replayed.Config[view]{
		"no New":            {Messages: bankMessages},
		"negative inputs":   {New: newObjBank, Messages: bankMessages, MaxInputs: -1},
		"duplicate message": {New: newObjBank, Messages: []node.Message{Pay{}, Pay{}}},
	} {
		if _, err := replayed.New(cfg); !errors.Is(err, replayed.ErrConfig) {
			t.Errorf("%s: %v, want ErrConfig", name, err)
		}
	}
}

// restart restarts both cores as a live node restarts from its store:
// each core's durable projection (Core.AppendDurable, what the live
// runtime writes to its data directory) is decoded by a new core
// (Core.DecodeDurable, as from the store after a crash), which starts
// from it (Core.Restart: Recover, then Init). The adapted core's restart
// must observe what a reset of it would (the emulator's and the
// explorer's crash, which keep the previous value in memory), and both
// restarted cores go on as twins.
func (w *twin) restart(i int) {
	w.t.Helper()
	w.now = w.now.Add(10 * time.Millisecond)
	ev := node.Event{Kind: node.EventInit, At: w.now}
	again := func(c *node.Core, factory node.Factory) (*node.Core, string) {
		w.t.Helper()
		b, ok, err := c.AppendDurable(nil)
		if err != nil || !ok {
			w.t.Fatalf("seed %d, event %d: the durable projection: %v (ok %v)", w.seed, i, err, ok)
		}
		fresh, err := node.NewCore(node.CoreConfig{ID: 1, Factory: factory, Seed: w.seed})
		if err != nil {
			w.t.Fatal(err)
		}
		prev, err := fresh.DecodeDurable(b)
		if err != nil {
			w.t.Fatalf("seed %d, event %d: decoding the durable projection: %v", w.seed, i, err)
		}
		fx, err := fresh.Restart(ev, prev)
		if err != nil {
			w.t.Fatalf("seed %d, event %d: restart: %v", w.seed, i, err)
		}
		return fresh, fmt.Sprint(fx.Sends, fx.Timers, fx.Ignored)
	}
	reset, err := w.adapted.Copy()
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := reset.Step(node.Event{Kind: node.EventReset, At: w.now}); err != nil {
		w.t.Fatal(err)
	}
	hand, hs := again(w.hand, handSpec().New)
	adapted, as := again(w.adapted, w.ad.Factory())
	if hs != as {
		w.t.Fatalf("seed %d, event %d: restart effects differ:\nhand-written %s\nadapted      %s", w.seed, i, hs, as)
	}
	got, _ := replayed.Observed[view](adapted.Service())
	want, _ := replayed.Observed[view](reset.Service())
	if !reflect.DeepEqual(got, want) {
		w.t.Fatalf("seed %d, event %d: restarted from the store %+v, reset %+v", w.seed, i, got, want)
	}
	w.hand, w.adapted = hand, adapted
	w.compare(i, ev)
}

// TestRestartFromTheDurableProjection: the adapted service's durable
// projection round-trips through the encoding a live node's store keeps,
// and a node restarted from it behaves like the hand-written service
// restarted from its own, and like a reset of the node it was taken from
// (Recover of the projection keeps exactly what Recover of the live value
// does), with and without images rebasing the log.
func TestRestartFromTheDurableProjection(t *testing.T) {
	for _, images := range []bool{false, true} {
		for seed := uint64(1); seed <= 8; seed++ {
			w := newTwin(t, seed, false, images)
			w.step(0, node.Event{Kind: node.EventInit})
			r := node.NewRand(seed, 7)
			for i := 1; i <= 100; i++ {
				if i%20 == 0 {
					w.restart(i)
					continue
				}
				w.step(i, w.randomEvent(&r))
			}
		}
	}
}

// TestDecodeDurableRejectsBadBytes: a durable record is a file on disk;
// one that is not a projection, or whose durable bytes Config.New
// rejects, is node.ErrBadDurable, not a node started empty.
func TestDecodeDurableRejectsBadBytes(t *testing.T) {
	ad := bankAdapter(false)
	c, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Step(node.Event{Kind: node.EventInit, At: t0}); err != nil {
		t.Fatal(err)
	}
	good, ok, err := c.AppendDurable(nil)
	if err != nil || !ok {
		t.Fatalf("projection: %v (ok %v)", err, ok)
	}
	if _, err := c.DecodeDurable(good); err != nil {
		t.Fatalf("the node's own projection: %v", err)
	}
	notBytes, err := msgpack.Marshal([]any{1, 1, []byte("not the bank's durable bytes")})
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"truncated":             good[:len(good)-2],
		"durable bytes refused": notBytes,
		"node 0":                append([]byte{0x93, 0x01, 0x00}, good[3:]...),
		"a checkpoint's arity":  append([]byte{0x94}, good[1:]...),
	} {
		if _, err := c.DecodeDurable(b); !errors.Is(err, node.ErrBadDurable) {
			t.Errorf("%s: %v, want ErrBadDurable", name, err)
		}
	}
}
