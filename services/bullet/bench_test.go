package bullet

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// midDownload is a node halfway through a download of blocks blocks with
// peers senders and peers receivers (each sender's view a different
// three-quarters of the file, each shadow a few recent blocks, two
// requests outstanding per sender): the shape whose encoding, hash and
// copy the snapshots and the explorer pay for.
func midDownload(blocks, peers int) *State {
	o := DefaultOptions()
	o.Blocks = blocks
	s := newState(o, nil)
	s.Source, s.Started = 1, time.Unix(100, 0).UnixNano()
	s.Have = newMap(blocks)
	for b := 0; b < blocks; b += 2 {
		set(s.Have, uint32(b))
	}
	for i := range 2 * peers {
		s.Known = append(s.Known, node.ID(10+i))
	}
	for i := range peers {
		view := newMap(blocks)
		for b := range blocks {
			if (b+i)%4 != 0 {
				set(view, uint32(b))
			}
		}
		s.Senders = append(s.Senders, SenderLink{ID: node.ID(10 + i), Accepted: true, View: view,
			Received: uint32(40 + i), Asked: []uint32{uint32(2*i + 1), uint32(2*i + 3)}})
		shadow, told := newMap(blocks), cloneMap(s.Have)
		set(shadow, uint32(2*i))
		told[i/64] &^= 1 << (i % 64)
		s.Receivers = append(s.Receivers, ReceiverLink{ID: node.ID(10 + peers + i), Shadow: shadow, Told: told, Sent: uint32(30 + i)})
	}
	return s
}

func benchState(blocks, peers int) node.State {
	return node.State{
		Service: midDownload(blocks, peers),
		Timers: []node.Timer{
			{Name: TimerDiff, At: time.Unix(101, 0).UTC()},
			{Name: TimerDiscover, At: time.Unix(104, 0).UTC()},
			{Name: TimerPeer, At: time.Unix(102, 0).UTC()},
		},
		Rand: node.NewRand(1, 2),
	}
}

var benchShapes = []struct{ blocks, peers int }{{64, 2}, {1280, 6}}

func BenchmarkEncodeHash(b *testing.B) {
	for _, sh := range benchShapes {
		st := benchState(sh.blocks, sh.peers)
		name := fmt.Sprintf("blocks=%d/peers=%d", sh.blocks, sh.peers)
		b.Run("Hash/"+name, func(b *testing.B) { servicetest.BenchHash(b, st) })
		b.Run("AppendCheckpoint/"+name, func(b *testing.B) { servicetest.BenchAppendCheckpoint(b, st, 8192) })
	}
}

func BenchmarkClone(b *testing.B) {
	for _, sh := range benchShapes {
		st := benchState(sh.blocks, sh.peers)
		b.Run(fmt.Sprintf("blocks=%d/peers=%d", sh.blocks, sh.peers), func(b *testing.B) { servicetest.BenchClone(b, st) })
	}
}
