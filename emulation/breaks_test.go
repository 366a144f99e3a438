package emulation_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// A run without a break schedule traces byte for byte as it did before
// breaks existed: the hash, size and event count below are those of this
// run at the commit that introduced BreakConfig, taken before the change.
// A zero Rate with the other fields set is no schedule either. (The run
// without a schedule is baseRun's.)
func TestNoBreaksTraceUnchanged(t *testing.T) {
	const seed = baseSeed
	logSeedOnFailure(t, seed)
	const (
		wantHash   = "f0b48d41a24772954f6577c969dfc59e66ea21d816e641e08661e1494adb7069"
		wantBytes  = 703685
		wantEvents = 7659
	)
	for _, b := range []emulation.BreakConfig{{}, {After: 5 * time.Second, Until: time.Minute}} {
		var tr string
		var r emulation.Result
		if b == (emulation.BreakConfig{}) {
			tr, r = baseRun(t)
		} else {
			cfg := gossipConfig(seed, 12, 4, nil)
			cfg.Breaks = b
			tr, r = runTrace(t, cfg)
		}
		sum := sha256.Sum256([]byte(tr))
		if got := hex.EncodeToString(sum[:]); got != wantHash || len(tr) != wantBytes || r.Events != wantEvents {
			t.Fatalf("Breaks %+v: trace %s (%d bytes, %d events), want %s (%d bytes, %d events)",
				b, got, len(tr), r.Events, wantHash, wantBytes, wantEvents)
		}
		if r.Breaks != (emulation.BreakStats{}) || strings.Contains(r.String(), "connection breaks") {
			t.Fatalf("a run without breaks reports some: %+v\n%s", r.Breaks, r)
		}
	}
}

// breakConfig is gossipConfig with a break schedule, for one virtual
// minute instead of two.
func breakConfig(seed uint64, rate float64) emulation.Config {
	cfg := gossipConfig(seed, 12, 4, nil)
	cfg.Duration = time.Minute
	cfg.Breaks = emulation.BreakConfig{Rate: rate, After: 10 * time.Second}
	return cfg
}

// The same seed gives the same breaks; the break stream is a subsystem of
// its own, so the trace is the unbroken run's (baseRun's) up to the first
// break.
func TestBreaksSameSeedSameTrace(t *testing.T) {
	const seed = baseSeed
	logSeedOnFailure(t, seed)
	a, ra := runTrace(t, breakConfig(seed, 6))
	b, rb := runTrace(t, breakConfig(seed, 6))
	if a != b {
		t.Fatalf("two runs with seed %d gave different traces (%d vs %d bytes)", seed, len(a), len(b))
	}
	ra.WallTime, rb.WallTime = 0, 0
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("results differ:\n%s\n%s", ja, jb)
	}
	lines := strings.Count(a, " network\n")
	if ra.Breaks.Broken == 0 || int64(lines) != ra.Breaks.Broken || ra.EventsByKind["break"] != ra.Breaks.Broken {
		t.Fatalf("%d breaks in the result, %d break events, %d in the trace", ra.Breaks.Broken, ra.EventsByKind["break"], lines)
	}
	if !strings.Contains(ra.String(), "connection breaks ") {
		t.Fatalf("String lacks the breaks:\n%s", ra)
	}
	plain, _ := baseRun(t)
	cut := strings.Index(a, " network\n")
	cut = strings.LastIndexByte(a[:cut], '\n') + 1
	if cut < 1000 || !strings.HasPrefix(plain, a[:cut]) {
		t.Fatalf("traces diverge before the first break (prefix of %d bytes)", cut)
	}
	if strings.Contains(a[:cut], " network\n") {
		t.Fatal("a break before 10s (Breaks.After)")
	}
}

// Over 10 minutes at 10 per minute about 100 breaks are drawn (the exact
// counts are this seed's); none before After or from Until on. (The
// schedule is a Poisson process of its own stream: 10 minutes show the
// rate, the window and the transport errors as 30 did, at a third of the
// cost.)
func TestBreakRate(t *testing.T) {
	const seed = 4242
	logSeedOnFailure(t, seed)
	var buf bytes.Buffer
	after, until := time.Minute, 11*time.Minute
	e := mustNew(t, emulation.Config{
		Spec:      testSpec(tcfg{nodes: 6, period: 2 * time.Second, fanout: 1}),
		Nodes:     6,
		Seed:      seed,
		Duration:  13 * time.Minute,
		Breaks:    emulation.BreakConfig{Rate: 10, After: after, Until: until},
		Observers: emulation.Observers{Trace: &buf}, // 100 expected

	})
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const want = 100.0
	drawn := float64(r.Breaks.Broken + r.Breaks.Skipped)
	if d := math.Abs(drawn - want); d > 4*math.Sqrt(want) {
		t.Fatalf("%v breaks drawn in 10 minutes at 10/min, want %v ± %.0f", drawn, want, 4*math.Sqrt(want))
	}
	if r.Breaks != (emulation.BreakStats{Broken: 97}) {
		t.Fatalf("breaks %+v, want the seed's {Broken:97 Skipped:0}", r.Breaks)
	}
	errs := int64(0)
	for _, l := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		ts := parseClock(t, f[0])
		if len(f) == 5 && f[2] == "break" && f[4] == "network" && (ts < after || ts >= until) {
			t.Fatalf("break outside [After, Until): %s", l)
		}
		if f[2] == "transport-error" && ts >= after {
			errs++
		}
	}
	// Every break tells both ends, once; nothing else fails once every
	// node has started (before, connections to nodes not up yet are
	// refused).
	if errs != 2*r.Breaks.Broken {
		t.Fatalf("%d transport errors for %d breaks", errs, r.Breaks.Broken)
	}
}

// A scheduled break loses what is in flight both ways, and each end's
// service gets a transport error: the end that notices first at the
// break, the other one one-way latency later.
func TestScheduledBreakTellsBothEnds(t *testing.T) {
	const seed = 3
	logSeedOnFailure(t, seed)
	var trace bytes.Buffer
	e := mustNew(t, emulation.Config{
		// Two nodes sending to each other every 2-6 ms over a 10 ms link:
		// the connection always carries data both ways.
		Spec:        testSpec(tcfg{nodes: 2, period: 4 * time.Millisecond, jitter: true, fanout: 2}),
		Nodes:       2,
		Seed:        seed,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: lat}},
		Breaks:      emulation.BreakConfig{Rate: 60, After: 100 * time.Millisecond, Until: 3 * time.Second},
		Observers:   emulation.Observers{Trace: &trace},
	})
	run(t, e, 4*time.Second)
	r := e.Result()
	if r.Breaks.Broken < 2 {
		t.Fatalf("only %d breaks in 3s at 1/s", r.Breaks.Broken)
	}
	want := map[node.ID][]int64{}
	for _, l := range strings.Split(trace.String(), "\n") {
		f := strings.Fields(l)
		if len(f) != 5 || f[2] != "break" || f[4] != "network" {
			continue
		}
		ts := parseClock(t, f[0])
		first, other := parseID(t, f[1]), parseID(t, f[3])
		want[first] = append(want[first], ns(ts))
		want[other] = append(want[other], ns(ts+lat))
	}
	for id := node.ID(1); id <= 2; id++ {
		s := svc(t, e, id)
		if len(s.ErrorAt) != int(r.Breaks.Broken) || !sameTimes(s.ErrorAt, want[id]) {
			t.Fatalf("n%d: transport errors at %v, want one per break at %v", id, s.ErrorAt, want[id])
		}
		if s.Disorder == 0 {
			t.Fatalf("n%d saw every message in sequence: nothing in flight was lost", id)
		}
	}
	if !strings.Contains(trace.String(), "drop message test.data from n1 (connection broken)") ||
		!strings.Contains(trace.String(), "drop message test.data from n2 (connection broken)") {
		t.Fatal("no message was lost in flight both ways")
	}
}

// sameTimes reports whether a and b hold the same times in any order (two
// breaks can tell the ends in interleaved order).
func sameTimes(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	count := map[int64]int{}
	for _, x := range a {
		count[x]++
	}
	for _, x := range b {
		count[x]--
	}
	for _, c := range count {
		if c != 0 {
			return false
		}
	}
	return true
}

func parseID(t *testing.T, s string) node.ID {
	t.Helper()
	var id uint64
	if len(s) < 2 || s[0] != 'n' {
		t.Fatalf("bad node %q", s)
	}
	for _, c := range s[1:] {
		id = id*10 + uint64(c-'0')
	}
	return node.ID(id)
}

func TestBreakConfigValidation(t *testing.T) {
	for _, b := range []emulation.BreakConfig{
		{Rate: -1},
		{Rate: math.NaN()},
		{Rate: math.Inf(1)},
		{Rate: 1, After: -time.Second},
		{Rate: 1, Until: -time.Second},
		{Rate: 1, After: time.Minute, Until: time.Minute},
	} {
		_, err := emulation.New(emulation.Config{Spec: testSpec(tcfg{nodes: 2}), Nodes: 2, Breaks: b})
		if err == nil || !strings.HasPrefix(err.Error(), "emulation: Config.Breaks.") {
			t.Errorf("Breaks %+v: %v", b, err)
		}
	}
}
