package chord

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// benchState is a joined node of a hashed ring of n nodes with IDs 1..n,
// whose table knows every node (as after stabilization and fix-fingers have
// run long enough): the shape whose encoding and hash the explorer pays
// for on every state it visits, and whose checkpoint the snapshot layer
// ships.
func benchState(n int) node.State {
	const self node.ID = 1
	s := newState(DefaultOptions())
	s.Status = StatusJoined
	s.Bootstrap = self
	s.initFingers(self)
	for id := node.ID(2); id <= node.ID(n); id++ {
		s.learn(self, id)
	}
	// The predecessor: the nearest node before self.
	r := s.ring
	best := uint64(0)
	for id := node.ID(2); id <= node.ID(n); id++ {
		if d := r.dist(r.pos(id), r.pos(self)); s.Pred == node.None || d < best {
			s.Pred, best = id, d
		}
	}
	at := time.Unix(100, 0).UTC()
	return node.State{
		Service: s,
		Timers: []node.Timer{
			{Name: TimerFixFingers, At: at}, {Name: TimerRecovery, At: at}, {Name: TimerStabilize, At: at},
		},
		Rand: node.NewRand(1, 2),
	}
}

var benchRingSizes = []int{5, 25, 100, 1000}

func BenchmarkEncodeHash(b *testing.B) {
	for _, n := range benchRingSizes {
		st := benchState(n)
		b.Run(fmt.Sprintf("Hash/ring=%d", n), func(b *testing.B) { servicetest.BenchHash(b, st) })
		b.Run(fmt.Sprintf("AppendCheckpoint/ring=%d", n), func(b *testing.B) { servicetest.BenchAppendCheckpoint(b, st, 1024) })
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range benchRingSizes {
		st := benchState(n)
		b.Run(fmt.Sprintf("ring=%d", n), func(b *testing.B) { servicetest.BenchClone(b, st) })
	}
}
