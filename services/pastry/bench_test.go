package pastry

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// benchState is a joined node of a hashed overlay of n nodes with IDs
// 1..n that has heard from every node (a full leaf set, every table slot
// it can fill) and has a probe outstanding to each: the shape whose
// encoding and hash the explorer pays for on every state it visits, and
// whose checkpoint the snapshot layer ships.
func benchState(n int) node.State {
	const self node.ID = 1
	s := newState(DefaultOptions().withDefaults())
	s.Status = StatusJoined
	s.Bootstrap = self
	s.Table = make([]node.ID, s.sp.digits*s.sp.cols())
	for id := node.ID(2); id <= node.ID(n); id++ {
		s.learn(self, id)
	}
	for _, x := range s.known() {
		s.missed(x)
	}
	at := time.Unix(100, 0).UTC()
	return node.State{
		Service: s,
		Timers:  []node.Timer{{Name: TimerProbe, At: at}},
		Rand:    node.NewRand(1, 2),
	}
}

var benchSizes = []int{5, 25, 100, 1000}

func BenchmarkEncodeHash(b *testing.B) {
	for _, n := range benchSizes {
		st := benchState(n)
		b.Run(fmt.Sprintf("Hash/nodes=%d", n), func(b *testing.B) { servicetest.BenchHash(b, st) })
		b.Run(fmt.Sprintf("AppendCheckpoint/nodes=%d", n), func(b *testing.B) { servicetest.BenchAppendCheckpoint(b, st, 1024) })
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range benchSizes {
		st := benchState(n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { servicetest.BenchClone(b, st) })
	}
}
