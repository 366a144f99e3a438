package replayed_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// FuzzDecodeCheckpoint: a checkpoint of an adapted service is untrusted
// bytes (a peer sends it in a snapshot). Decoding any input gives a state
// or an error, never a panic; a state it gives re-encodes and decodes
// again to the same fingerprint.
func FuzzDecodeCheckpoint(f *testing.F) {
	ad := bankAdapter(false, true)
	c, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory(), Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	at := t0
	events := []node.Event{{Kind: node.EventInit}, {Kind: node.EventApp, Msg: Pay{To: 2, Amount: 3}},
		{Kind: node.EventMessage, From: 3, Msg: Credit{Amount: 2}}, {Kind: node.EventTimer, Timer: "audit"},
		{Kind: node.EventTransportError, Peer: 2}, {Kind: node.EventReset}, {Kind: node.EventTimer, Timer: "tick"}}
	for _, ev := range events {
		at = at.Add(time.Millisecond)
		ev.At = at
		if _, err := c.Step(ev); err != nil {
			f.Fatal(err)
		}
		cp, err := c.Checkpoint()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(cp)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := node.DecodeCheckpoint(b, ad.Factory())
		if err != nil {
			return
		}
		h, err := st.Hash()
		if err != nil {
			t.Fatalf("a decoded state does not hash: %v", err)
		}
		again, err := st.AppendCheckpoint(nil)
		if err != nil {
			t.Fatalf("a decoded state does not encode: %v", err)
		}
		back, err := node.DecodeCheckpoint(again, ad.Factory())
		if err != nil {
			t.Fatalf("a re-encoded state does not decode: %v", err)
		}
		if h2, _ := back.Hash(); h2 != h {
			t.Fatalf("fingerprint %v after a round trip, %v before", h2, h)
		}
	})
}

// FuzzDecodeDurable: a durable projection is read back from a file on
// disk at a restart (Core.DecodeDurable). Any input gives a projection or
// an error wrapping node.ErrBadDurable, never a panic; a projection it
// gives restarts a node (Core.Restart) without an error, and the
// restarted node projects its durable state again.
func FuzzDecodeDurable(f *testing.F) {
	ad := bankAdapter(false)
	c, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory(), Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	at := t0
	for _, ev := range []node.Event{{Kind: node.EventInit}, {Kind: node.EventApp, Msg: Pay{To: 2, Amount: 3}},
		{Kind: node.EventMessage, From: 3, Msg: Credit{Amount: 2}}, {Kind: node.EventReset}} {
		at = at.Add(time.Millisecond)
		ev.At = at
		if _, err := c.Step(ev); err != nil {
			f.Fatal(err)
		}
		b, _, err := c.AppendDurable(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fresh, err := node.NewCore(node.CoreConfig{ID: 1, Factory: ad.Factory(), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		prev, err := fresh.DecodeDurable(b)
		if err != nil {
			if !errors.Is(err, node.ErrBadDurable) {
				t.Fatalf("error %v does not wrap ErrBadDurable", err)
			}
			return
		}
		if _, err := fresh.Restart(node.Event{Kind: node.EventInit, At: t0}, prev); err != nil {
			t.Fatalf("restart from a projection that decoded: %v", err)
		}
		if _, _, err := fresh.AppendDurable(nil); err != nil {
			t.Fatalf("the restarted node does not project: %v", err)
		}
	})
}
