package twophase_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/consequence/twophase"
)

// BenchmarkExhaustive measures exhaustive BFS of two-phase commit, swept
// over the number of RMs and of workers, with TCConsistent checked on every
// state. states/s counts unique states; B/state is the visited set's memory
// per unique state.
//
//	go test ./consequence/twophase -run '^$' -bench Exhaustive -benchtime 5x
//	go test ./consequence/twophase -run '^$' -bench 'Exhaustive/rms=10/workers=1$' -benchtime 1x -args -rms 10
//
// -rms chooses the sizes (bench/spin/run.sh sweeps 6 to 10 beside SPIN).
func BenchmarkExhaustive(b *testing.B) {
	sizes, err := benchSizes(*benchRMs)
	if err != nil {
		b.Fatal(err)
	}
	for _, rms := range sizes {
		for _, workers := range workerCounts() {
			b.Run(fmt.Sprintf("rms=%d/workers=%d", rms, workers), func(b *testing.B) {
				m, err := twophase.New(twophase.Options{RMs: rms})
				if err != nil {
					b.Fatal(err)
				}
				c := consequence.NewChecker(m).Properties(m.Properties()...).Workers(workers)
				var res *consequence.Result[twophase.State, twophase.Action]
				for b.Loop() {
					if res, err = c.Run(context.Background()); err != nil {
						b.Fatal(err)
					}
				}
				if res.Unique != twophase.StateCount(rms) {
					b.Fatalf("unique = %d, want %d", res.Unique, twophase.StateCount(rms))
				}
				b.ReportMetric(float64(res.Unique)*float64(b.N)/b.Elapsed().Seconds(), "states/s")
				b.ReportMetric(res.BytesPerState(), "B/state")
				b.ReportMetric(float64(res.Generated)/float64(res.Unique), "gen/state")
			})
		}
	}
}

var benchRMs = flag.String("rms", "5,6,7,8", "BenchmarkExhaustive: the numbers of RMs, comma-separated")

// benchSizes parses -rms.
func benchSizes(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > twophase.MaxRMs {
			return nil, fmt.Errorf("twophase: -rms %q: want numbers of RMs from 1 to %d", list, twophase.MaxRMs)
		}
		out = append(out, n)
	}
	return out, nil
}

// BenchmarkConsequence measures consequence prediction on the same models.
func BenchmarkConsequence(b *testing.B) {
	for _, rms := range []int{5, 8, 12} {
		b.Run(fmt.Sprintf("rms=%d", rms), func(b *testing.B) {
			m, err := twophase.New(twophase.Options{RMs: rms})
			if err != nil {
				b.Fatal(err)
			}
			c := consequence.NewChecker(m).Properties(m.Properties()...).Strategy(consequence.Consequence)
			var res *consequence.Result[twophase.State, twophase.Action]
			for b.Loop() {
				if res, err = c.Run(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Unique), "states")
			b.ReportMetric(float64(res.Depth), "depth")
		})
	}
}

func workerCounts() []int {
	if p := runtime.GOMAXPROCS(0); p > 1 {
		return []int{1, p}
	}
	return []int{1}
}

// BenchmarkFingerprint measures the cost of symmetry reduction per state:
// Fingerprint with and without Options.Symmetry (which first sorts the RMs,
// Canonical) over the reachable states of 6 RMs.
//
//	go test ./consequence/twophase -run '^$' -bench Fingerprint
func BenchmarkFingerprint(b *testing.B) {
	for _, sym := range []bool{false, true} {
		b.Run(fmt.Sprintf("symmetry=%v", sym), func(b *testing.B) {
			m, err := twophase.New(twophase.Options{RMs: 6, Symmetry: sym})
			if err != nil {
				b.Fatal(err)
			}
			var states []twophase.State
			for s := range reachable(newModel(b, twophase.Options{RMs: 6})) {
				states = append(states, s)
			}
			var sink uint64
			i := 0
			for b.Loop() {
				sink += m.Fingerprint(states[i%len(states)]).Lo
				i++
			}
			if sink == 1 {
				b.Log(sink)
			}
		})
	}
}
