package macetransport

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// benchState is a node with conns outgoing connections, each with a window
// of 8 unacknowledged messages, and as many incoming ones, each with a full
// delivery log: the shape whose encoding and hash the explorer pays for on
// every state it visits, and whose checkpoint the snapshot layer ships.
func benchState(conns int) node.State {
	s := newState(AllFixes().withDefaults())
	var timers []node.Timer
	at := time.Unix(100, 0).UTC()
	for p := node.ID(2); p < node.ID(conns+2); p++ {
		isn := FirstISN + s.Opened*ISNSpacing
		s.Opened++
		c := OutConn{Peer: p, ISN: isn, Conn: uint64(at.UnixNano()) + s.Opened, Established: true, Base: isn + 100, Sent: isn + 108}
		for m := range uint64(8) {
			c.Queue = append(c.Queue, s.NextMsg+m+1)
		}
		s.NextMsg += 108
		s.Out = append(s.Out, c)
		in := InConn{Peer: p, ISN: isn, Conn: c.Conn, Next: isn + 200, Total: 200}
		for m := range uint64(s.opts.DeliveredLog) {
			in.Delivered = append(in.Delivered, 185+m)
		}
		s.In = append(s.In, in)
		timers = append(timers, node.Timer{Name: retransmitTimer(p), At: at})
	}
	s.LastConn = uint64(at.UnixNano()) + s.Opened
	return node.State{Service: s, Timers: timers, Rand: node.NewRand(1, 2)}
}

var benchConns = []int{1, 4, 16}

func BenchmarkEncodeHash(b *testing.B) {
	for _, n := range benchConns {
		st := benchState(n)
		b.Run(fmt.Sprintf("Hash/conns=%d", n), func(b *testing.B) { servicetest.BenchHash(b, st) })
		b.Run(fmt.Sprintf("AppendCheckpoint/conns=%d", n), func(b *testing.B) { servicetest.BenchAppendCheckpoint(b, st, 4096) })
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range benchConns {
		st := benchState(n)
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) { servicetest.BenchClone(b, st) })
	}
}
