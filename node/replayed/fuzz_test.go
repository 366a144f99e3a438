package replayed_test

import (
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
