package consequence

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/chord"
)

// chordBaseline is Chord as 'crystalball experiment macemc-baseline
// --service chord' configures its search (experiments.MaceMCBaseline: 5
// nodes, seed 1, every node joining through node 1, one silent reset, one
// break and one refused send per path).
func chordBaseline(tb testing.TB) *ActorModel {
	tb.Helper()
	m, err := NewActorModel(chord.NewSpec(chord.DefaultOptions()), ActorOptions{
		N: 5, Seed: 1,
		Workload: func(node.ID, bool) []node.Message { return []node.Message{chord.JoinOverlay{Bootstrap: 1}} },
		Faults:   Faults{Resets: 1, SilentResets: true, Breaks: 1, Refusals: 1},
	})
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestPackSurveyChord measures packed levels on chordBaseline: words per
// entry, the intern tables' sizes and Bytes, and the live heap, level by
// level until CB_STATES unique states (default 1,000,000). It runs only
// when CB_PACKSURVEY is set:
//
//	CB_PACKSURVEY=1 go test ./consequence -run PackSurveyChord -v -count=1 -timeout 30m
func TestPackSurveyChord(t *testing.T) {
	if os.Getenv("CB_PACKSURVEY") == "" {
		t.Skip("set CB_PACKSURVEY=1 to run the packing survey")
	}
	states := 1_000_000
	if v := os.Getenv("CB_STATES"); v != "" {
		states, _ = strconv.Atoi(v)
	}
	m := chordBaseline(t)
	p := m.NewPacker().(*actorPacker)
	start := time.Now()
	res := packedBFSFunc(t, m, p, 1<<30, states, 2, false, func(depth int, cur, next *packedLevel, unique uint64) {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		in := p.in
		t.Logf("depth %d: %d unique, level %d entries (%.2f words/entry), previous %d; intern: %d nodes, %d channels, %d datagram sets, %d connection sets, %d crashes, Bytes %d; live heap %d B (%.0f B/unique; visited map included); %v",
			depth, unique, next.len(), float64(len(next.words))/float64(max(next.len(), 1)), cur.len(),
			in.nodeTab.len(), in.chanTab.len(), in.dgramTab.len(), in.pairTab.len(), in.crashTab.len(), in.Bytes(),
			ms.HeapAlloc, float64(ms.HeapAlloc)/float64(unique), time.Since(start).Round(time.Millisecond))
	})
	t.Logf("%d unique, depth counts %v, %.2f words per entry over all levels", res.unique, res.depthCounts, float64(res.entryWords)/float64(res.unique))
}

// benchFrontier returns the states of chordBaseline's BFS level at depth
// 5 (2,539 unique states to that depth), unpacked by p so that they carry
// its interner, as a packed search's frontier states do.
func benchFrontier(b *testing.B, m *ActorModel, p Packer[*GlobalState]) []*GlobalState {
	b.Helper()
	var last *packedLevel
	packedBFSFunc(b, m, p, 5, 1<<30, 1, false, func(_ int, _, next *packedLevel, _ uint64) { last = next })
	out := make([]*GlobalState, last.len())
	for i := range out {
		out[i] = p.Unpack(last.entry(i), last.fps[i])
	}
	return out
}

// BenchmarkPackChord packs Chord frontier states (per state; their parts
// are interned already, as in a search after the first levels).
//
//	go test ./consequence -run '^$' -bench 'PackChord|UnpackChord|NextChord' -benchmem
func BenchmarkPackChord(b *testing.B) {
	m := chordBaseline(b)
	p := m.NewPacker()
	gs := benchFrontier(b, m, p)
	var buf []uint32
	b.ResetTimer()
	for i := range b.N {
		buf = p.Pack(buf[:0], gs[i%len(gs)])
	}
}

// BenchmarkUnpackChord unpacks Chord frontier entries (per state).
func BenchmarkUnpackChord(b *testing.B) {
	m := chordBaseline(b)
	p := m.NewPacker()
	gs := benchFrontier(b, m, p)
	words := make([][]uint32, len(gs))
	for i, g := range gs {
		words[i] = p.Pack(nil, g)
	}
	b.ResetTimer()
	for i := range b.N {
		k := i % len(gs)
		p.Unpack(words[k], gs[k].fp)
	}
}

// BenchmarkNextChord computes successors of Chord frontier states (per
// successor), with interning (the states carry the packer's interner) and
// without (the same states, their interner removed).
func BenchmarkNextChord(b *testing.B) {
	m := chordBaseline(b)
	p := m.NewPacker()
	gs := benchFrontier(b, m, p)
	type job struct {
		g *GlobalState
		a ActorAction
	}
	var jobs []job
	for _, g := range gs {
		for _, a := range m.Actions(g, nil) {
			jobs = append(jobs, job{g, a.Act})
		}
	}
	for _, interned := range []bool{true, false} {
		name := "interned"
		if !interned {
			name = "plain"
			for i := range jobs {
				g := *jobs[i].g
				g.in = nil
				jobs[i].g = &g
			}
		}
		b.Run(name, func(b *testing.B) {
			for i := range b.N {
				j := jobs[i%len(jobs)]
				m.Next(j.g, j.a)
			}
		})
	}
}

// BenchmarkInternHit measures the interner's hot path: interning a content
// already in the table (a shard lock and a map lookup), from GOMAXPROCS
// goroutines at once over 600 keys (about Chord's node states at 1M
// states), so that workers meet on shards as they do in a search.
//
//	go test ./consequence -run '^$' -bench InternHit -cpu 1,2
func BenchmarkInternHit(b *testing.B) {
	const keys = 600
	var tab internTable[*int]
	ks := make([]node.Hash, keys)
	for k := range ks {
		ks[k] = node.Hash{Hi: uint64(k+1) * 0x9E3779B97F4A7C15, Lo: uint64(k)}
		v := k
		tab.intern(ks[k], &v, nil)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		k := 0
		for pb.Next() {
			tab.intern(ks[k], nil, nil)
			if k++; k == keys {
				k = 0
			}
		}
	})
}
