package steering

import (
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
)

// BenchmarkLivenessBudget measures what the liveness budget adds to an
// event at a node: n1 of a 25-node RandTree (five liveness properties)
// just started, its layer holding the snapshot of all 25, gates and
// finishes one timer event a millisecond apart (Gate and After; the
// handler itself is not run). Idle, nothing charged the budget: the cost
// of the check that it is inactive. Active, an intervention charged the
// obligations open in n1's view (no node has joined yet): the five
// properties judged before the gate and after the handler on the 25
// nodes' states with n1's overlaid.
//
//	go test ./steering -run '^$' -bench LivenessBudget -benchmem
func BenchmarkLivenessBudget(b *testing.B) {
	spec := randtree.NewSpec(randtree.DefaultOptions())
	for _, c := range []struct {
		name   string
		active bool
	}{{"idle", false}, {"active", true}} {
		b.Run(c.name, func(b *testing.B) {
			ids := make([]node.ID, 25)
			for i := range ids {
				ids[i] = node.ID(i + 1)
			}
			snap := StartSnapshot(b, spec, ids, 1)
			core := initedCore(b, spec, 1, snap.At)
			l, _ := newTestLive(b, LayerConfig{Controller: Config{Spec: spec, Liveness: LivenessBudget{DefaultBound: time.Hour}}}, core)
			l.Gathered(snap)
			now := snap.At
			if c.active {
				l.chargeLiveness(now)
				if !l.budget.active {
					b.Fatal("no obligation open in n1's view")
				}
			}
			ev := node.Event{Kind: node.EventTimer, Timer: "recovery"}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now = now.Add(time.Millisecond)
				ev.At = now
				if _, _, err := l.Gate(now, ev, nil, false); err != nil {
					b.Fatal(err)
				}
				l.After(now)
			}
			b.StopTimer()
			if l.budget.active != c.active || l.budget.lifted {
				b.Fatalf("budget active %v lifted %v at the end", l.budget.active, l.budget.lifted)
			}
		})
	}
}
