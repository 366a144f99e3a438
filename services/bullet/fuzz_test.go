package bullet

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// FuzzHostilePeer feeds a downloading node (n2, source n1, a file of 16
// blocks) a sequence of messages a hostile or broken peer could send —
// any type, any sender, block indices and ID lists out of range, diffs
// from strangers, refusals of messages never sent — interleaved with its
// timers. The node must never panic, never hold a block index past the
// file, never keep more peers than its bounds, and its state must survive
// a checkpoint round trip.
func FuzzHostilePeer(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11})
	f.Add([]byte{5, 1, 0, 7, 3, 200, 9, 2, 255, 255, 8, 3, 3, 3, 3})
	f.Add([]byte{2, 1, 9, 9, 9, 9, 9, 9, 9, 9, 10, 4, 10, 2, 11, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := DefaultOptions()
		opts.Blocks, opts.BlockSize = 16, 8
		opts.MaxSenders, opts.MaxReceivers = 2, 2
		spec := NewSpec(opts)
		core, err := node.NewCore(node.CoreConfig{ID: 2, Factory: spec.New, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		now := time.Unix(0, 0).UTC()
		step := func(ev node.Event) {
			now = now.Add(time.Millisecond)
			ev.At = now
			if _, err := core.Step(ev); err != nil {
				t.Fatalf("step %v: %v", ev, err)
			}
		}
		step(node.Event{Kind: node.EventInit})
		step(node.Event{Kind: node.EventApp, Msg: Download{Source: 1}})
		for len(data) >= 3 {
			kind, from, arg := data[0], node.ID(data[1]%6+1), data[2]
			data = data[3:]
			if ev, ok := hostileEvent(kind, from, arg, &data); ok {
				step(ev)
			}
			checkBounded(t, core.Service().(*State), opts)
		}
		cp, err := core.Checkpoint()
		if err != nil {
			t.Fatal(err)
		}
		if err := core.Restore(cp); err != nil {
			t.Fatalf("the state does not survive a checkpoint: %v", err)
		}
	})
}

// hostileEvent turns three fuzz bytes (and, for lists, more of rest) into
// an event for n2; ok is false for a kind that maps to nothing.
func hostileEvent(kind byte, from node.ID, arg byte, rest *[]byte) (node.Event, bool) {
	list := func() []uint32 {
		n := min(int(arg%8), len(*rest))
		out := make([]uint32, n)
		for i := range out {
			out[i] = uint32((*rest)[i]) * 3 // past 16 half the time
		}
		*rest = (*rest)[n:]
		return out
	}
	msg := func(m node.Message) (node.Event, bool) {
		return node.Event{Kind: node.EventMessage, From: from, Msg: m}, true
	}
	switch kind % 14 {
	case 0:
		return msg(Join{})
	case 1:
		ids := list()
		peers := make([]node.ID, len(ids))
		for i, v := range ids {
			peers[i] = node.ID(v % 9)
		}
		return msg(Sample{Peers: peers})
	case 2:
		return msg(PeerRequest{})
	case 3:
		return msg(PeerAccept{})
	case 4:
		return msg(PeerReject{})
	case 5:
		return msg(Unpeer{})
	case 6:
		return msg(Disown{})
	case 7:
		return msg(Diff{Blocks: list()})
	case 8:
		return msg(Request{Block: uint32(arg)})
	case 9:
		return msg(Block{Index: uint32(arg % 20)})
	case 10:
		timers := []string{TimerDiscover, TimerPeer, TimerDiff, TimerPush}
		return node.Event{Kind: node.EventTimer, Timer: timers[int(arg)%len(timers)]}, true
	case 11:
		return node.Event{Kind: node.EventSendRefused, Peer: from, Msg: Diff{Blocks: list()}}, true
	case 12:
		return node.Event{Kind: node.EventSendRefused, Peer: from, Msg: Block{Index: uint32(arg)}}, true
	case 13:
		return node.Event{Kind: node.EventTransportError, Peer: from}, true
	}
	return node.Event{}, false
}

// checkBounded fails t when s holds a block past the file or more peers
// than its options allow.
func checkBounded(t *testing.T, s *State, opts Options) {
	t.Helper()
	if s.Blocks() > opts.Blocks {
		t.Fatalf("the node holds %d blocks of a %d-block file", s.Blocks(), opts.Blocks)
	}
	if len(s.Senders) > opts.MaxSenders || len(s.Receivers) > opts.MaxReceivers {
		t.Fatalf("%d senders, %d receivers: past the bounds %d, %d", len(s.Senders), len(s.Receivers), opts.MaxSenders, opts.MaxReceivers)
	}
	if len(s.Known) > 7 {
		// The source n1 and the sampled IDs 3..8 (0 is None, 2 is self).
		t.Fatalf("Known grew to %v from 7 possible peers", s.Known)
	}
	for _, words := range [][]uint64{s.Have} {
		if len(words) != (opts.Blocks+63)/64 {
			t.Fatalf("a file map of %d words for %d blocks", len(words), opts.Blocks)
		}
	}
}
