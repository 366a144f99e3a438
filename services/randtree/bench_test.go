package randtree

import (
	"fmt"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/internal/servicetest"
)

// benchState is a joined node with n children and n peers (and a couple of
// siblings), the shape whose encoding and hash the explorer pays for on
// every state it visits.
func benchState(n int) node.State {
	s := newState(DefaultOptions())
	s.Status = StatusJoined
	s.Root, s.Parent = 1, 2
	s.Siblings = ids(3, 4)
	for i := range n {
		s.Children = append(s.Children, node.ID(1000+i))
		s.Peers = append(s.Peers, node.ID(5000+i))
	}
	s.Targets = ids(1, 2)
	return node.State{
		Service: s,
		Timers:  []node.Timer{{Name: TimerRecovery, At: time.Unix(100, 0).UTC()}},
		Rand:    node.NewRand(1, 2),
	}
}

var benchSizes = []int{2, 8, 32}

func BenchmarkEncodeHash(b *testing.B) {
	for _, n := range benchSizes {
		st := benchState(n)
		b.Run(fmt.Sprintf("Hash/n=%d", n), func(b *testing.B) { servicetest.BenchHash(b, st) })
		b.Run(fmt.Sprintf("AppendCheckpoint/n=%d", n), func(b *testing.B) { servicetest.BenchAppendCheckpoint(b, st, 1024) })
	}
}

func BenchmarkClone(b *testing.B) {
	for _, n := range benchSizes {
		st := benchState(n)
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { servicetest.BenchClone(b, st) })
	}
}
