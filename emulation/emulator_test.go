package emulation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
)

// gossipConfig is a randomized run: gossip, default topology, churn.
func gossipConfig(seed uint64, nodes int, churn float64, trace *bytes.Buffer) emulation.Config {
	cfg := emulation.Config{
		Spec:     testSpec(tcfg{nodes: nodes, period: 500 * time.Millisecond, jitter: true, fanout: 2}),
		Nodes:    nodes,
		Seed:     seed,
		Duration: 2 * time.Minute,
		Churn:    emulation.ChurnConfig{Rate: churn, Downtime: 10 * time.Second, After: 20 * time.Second},
		Workload: func(id node.ID, restart bool) []node.Message {
			return []node.Message{SendTo{To: 1, N: 1}}
		},
	}
	if trace != nil {
		cfg.Trace = trace
	}
	return cfg
}

func runTrace(t *testing.T, cfg emulation.Config) (string, emulation.Result) {
	t.Helper()
	var buf bytes.Buffer
	cfg.Trace = &buf
	e := mustNew(t, cfg)
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatalf("seed=%d: %v", cfg.Seed, err)
	}
	return buf.String(), r
}

// baseSeed is the seed of baseRun.
const baseSeed = 20240611

var (
	baseMu     sync.Mutex
	baseTrace  string
	baseResult *emulation.Result
)

// baseRun is runTrace of gossipConfig(baseSeed, 12, 4, nil): 12 gossiping
// nodes with churn for two virtual minutes. TestSameSeedSameTrace,
// TestNoBreaksTraceUnchanged, TestBreaksSameSeedSameTrace and
// TestLinksSameSeedSameResult all need this run, and a run is a pure
// function of its configuration (which TestSameSeedSameTrace checks by
// running it again), so it is emulated once per test binary. Callers must
// not modify the result's maps.
func baseRun(t *testing.T) (string, emulation.Result) {
	t.Helper()
	baseMu.Lock()
	defer baseMu.Unlock()
	if baseResult == nil {
		tr, r := runTrace(t, gossipConfig(baseSeed, 12, 4, nil))
		baseTrace, baseResult = tr, &r
	}
	return baseTrace, *baseResult
}

// TestSameSeedSameTrace: two runs of the same configuration and seed give
// the same trace and result (the first is baseRun's); a seed one apart
// gives another trace.
func TestSameSeedSameTrace(t *testing.T) {
	const seed = baseSeed
	logSeedOnFailure(t, seed)
	a, ra := baseRun(t)
	b, rb := runTrace(t, gossipConfig(seed, 12, 4, nil))
	if a != b {
		t.Fatalf("two runs with seed %d gave different traces (%d vs %d bytes)", seed, len(a), len(b))
	}
	ra.WallTime, rb.WallTime = 0, 0
	ja, _ := json.Marshal(ra)
	jb, _ := json.Marshal(rb)
	if !bytes.Equal(ja, jb) {
		t.Fatalf("results differ:\n%s\n%s", ja, jb)
	}
	if ra.Churn.Leaves == 0 || ra.TransportErrors == 0 || ra.Messages.Delivered == 0 {
		t.Fatalf("the run exercised too little: %s", ja)
	}
	c, _ := runTrace(t, gossipConfig(seed+1, 12, 4, nil))
	if a == c {
		t.Fatal("seeds differing by one gave identical traces")
	}
}

// Changing one subsystem's draws (here, switching churn on) must not shift
// another's: the traces agree up to the first churn event. The runs are 40
// virtual seconds (churn starts at 20 s; the common prefix is about 100 KB).
func TestSubsystemStreamsAreIndependent(t *testing.T) {
	const seed = 99
	logSeedOnFailure(t, seed)
	quietCfg, churnyCfg := gossipConfig(seed, 10, 0, nil), gossipConfig(seed, 10, 6, nil)
	quietCfg.Duration, churnyCfg.Duration = 40*time.Second, 40*time.Second
	quiet, _ := runTrace(t, quietCfg)
	churny, _ := runTrace(t, churnyCfg)
	cut := strings.Index(churny, " down ")
	if cut < 0 {
		t.Fatal("no churn event in the churn run")
	}
	cut = strings.LastIndexByte(churny[:cut], '\n') + 1
	if cut < 1000 || !strings.HasPrefix(quiet, churny[:cut]) {
		t.Fatalf("traces diverge before the first churn event (prefix of %d bytes)", cut)
	}
}

func TestStartTimesAndWorkload(t *testing.T) {
	var buf bytes.Buffer
	cfg := gossipConfig(5, 20, 0, &buf)
	cfg.Duration = 15 * time.Second
	e := mustNew(t, cfg)
	if _, err := e.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	inits := 0
	for i, l := range lines {
		if !strings.Contains(l, " init -> ") {
			continue
		}
		inits++
		ts := l[:strings.IndexByte(l, ' ')]
		if ts > "00:00:10.000000000" {
			t.Errorf("node started at %s, after the 10s spread: %s", ts, l)
		}
		id := strings.Fields(l)[1]
		// The workload call follows at the same instant.
		found := false
		for _, m := range lines[i+1:] {
			if strings.HasPrefix(m, ts+" "+id+" app test.send") {
				found = true
				break
			}
			if !strings.HasPrefix(m, ts) {
				break
			}
		}
		if !found {
			t.Errorf("no workload call right after %q", l)
		}
	}
	if inits != 20 {
		t.Fatalf("%d init events, want 20", inits)
	}
}

// FIFO per channel under heavy jitter (10× the send period) and loss.
func TestFIFOUnderJitterAndLoss(t *testing.T) {
	const seed = 7
	logSeedOnFailure(t, seed)
	const nodes = 8
	e := mustNew(t, emulation.Config{
		Spec:        testSpec(tcfg{nodes: nodes, period: 10 * time.Millisecond, jitter: true, fanout: 3}),
		Nodes:       nodes,
		Seed:        seed,
		Duration:    20 * time.Second,
		StartSpread: time.Nanosecond, // no refused connections to unstarted nodes
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: 5 * time.Millisecond, Jitter: 100 * time.Millisecond, Loss: 0.2}},
	})
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := 0
	for id := node.ID(1); id <= nodes; id++ {
		s := svc(t, e, id)
		if s.Disorder != 0 {
			t.Errorf("n%d saw %d out-of-order messages", id, s.Disorder)
		}
		got += s.Got
	}
	m := r.Messages
	if m.Dropped != 0 || m.Sent != m.Delivered+m.InFlight || int64(got) != m.Delivered {
		t.Fatalf("messages lost on live connections: %+v (services got %d)", m, got)
	}
	if m.Delivered < 10000 || m.Retransmissions < m.Delivered/10 {
		t.Fatalf("too little traffic or loss to test FIFO: %+v", m)
	}
}

func TestLossAddsRetransmissionDelay(t *testing.T) {
	// Loss 0.3, no jitter: every delivery takes 10ms plus a sum of RTOs
	// (200ms, 400ms, ...), and about 30% of them take at least one.
	e := mustNew(t, emulation.Config{
		Spec:        testSpec(tcfg{nodes: 2}),
		Nodes:       2,
		Seed:        3,
		StartSpread: time.Nanosecond,
		Topology:    emulation.UniformTopology{L: emulation.Link{Latency: lat, Loss: 0.3}},
	})
	run(t, e, time.Second)
	delays := map[time.Duration]int{}
	for i := 0; i < 400; i++ {
		sent := e.Elapsed()
		app(t, e, 1, SendTo{To: 2, N: 1})
		run(t, e, sent+2*time.Minute)
		rec := svc(t, e, 2).RecvAt
		delays[time.Duration(rec[len(rec)-1])-sent]++
	}
	valid := map[time.Duration]bool{}
	for k, rto := 0, time.Duration(0); k < 10; k++ {
		valid[lat+rto] = true
		rto = 2*rto + 200*time.Millisecond // 0, 200ms, 600ms, 1.4s, ...
	}
	for d, n := range delays {
		if !valid[d] {
			t.Errorf("%d deliveries took %v: not latency + doubling RTOs", n, d)
		}
	}
	if n := delays[lat]; n < 240 || n > 320 {
		t.Errorf("%d of 400 deliveries without loss, want about 280", n)
	}
}

func TestChurnRateAndDowntime(t *testing.T) {
	const seed = 4242
	logSeedOnFailure(t, seed)
	var buf bytes.Buffer
	e := mustNew(t, emulation.Config{
		Spec:      testSpec(tcfg{nodes: 20}),
		Nodes:     20,
		Seed:      seed,
		Duration:  2 * time.Hour,
		Churn:     emulation.ChurnConfig{Rate: 6},
		Observers: emulation.Observers{Trace: &buf}, // 720 expected

	})
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const want = 720.0
	sd := math.Sqrt(want)
	if d := math.Abs(float64(r.Churn.Leaves) - want); d > 4*sd {
		t.Fatalf("%d leaves in 2h at 6/min, want %v ± %.0f", r.Churn.Leaves, want, 4*sd)
	}
	frac := float64(r.Churn.SilentLeaves) / float64(r.Churn.Leaves)
	if math.Abs(frac-0.5) > 4*math.Sqrt(0.25/want) {
		t.Fatalf("silent fraction %.3f, want 0.5", frac)
	}
	// Downtimes: exponential with mean 30s.
	downAt := map[string]time.Duration{}
	var total time.Duration
	var n int
	for _, l := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(l)
		if len(f) < 3 {
			continue
		}
		ts := parseClock(t, f[0])
		switch f[2] {
		case "down":
			downAt[f[1]] = ts
		case "up":
			total += ts - downAt[f[1]]
			n++
		}
	}
	if int64(n) != r.Churn.Rejoins || n < 600 {
		t.Fatalf("%d rejoins in the trace, result says %d", n, r.Churn.Rejoins)
	}
	mean := total / time.Duration(n)
	if d := mean - emulation.DefaultDowntime; d.Abs() > 4*emulation.DefaultDowntime/time.Duration(math.Sqrt(float64(n))) {
		t.Fatalf("mean downtime %v over %d rejoins, want about 30s", mean, n)
	}
	if r.Resets != r.Churn.Leaves || r.EventsByKind["down"] != r.Churn.Leaves || r.EventsByKind["up"] != r.Churn.Rejoins {
		t.Fatalf("inconsistent counts: %+v", r)
	}
}

func parseClock(t *testing.T, s string) time.Duration {
	var h, m, sec, frac int64
	if _, err := fmt.Sscanf(s, "%d:%d:%d.%d", &h, &m, &sec, &frac); err != nil {
		t.Fatalf("bad clock %q: %v", s, err)
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second + time.Duration(frac)
}

// The planted property "n1's app count is not 3 or 4 (mod 5)" is violated
// for an exactly known number of post-event states.
func TestObserverCountsPlantedViolations(t *testing.T) {
	planted := node.Always("apps-not-3-or-4", func(v node.View) error {
		s, ok := v.Service(1).(*tsvc)
		if !ok {
			return nil
		}
		if k := s.Apps % 5; k == 3 || k == 4 {
			return fmt.Errorf("n1 has %d apps", s.Apps)
		}
		return nil
	})
	never := node.Always("never-violated", func(node.View) error { return nil })
	reached := node.Eventually("n1-reached-10", func(v node.View) error {
		if s, ok := v.Service(1).(*tsvc); ok && s.Apps >= 10 {
			return nil
		}
		return errors.New("n1 has fewer than 10 apps")
	})
	unreached := node.Eventually("n2-reached-11", func(v node.View) error {
		if s, ok := v.Service(2).(*tsvc); ok && s.Apps >= 11 {
			return nil
		}
		return errors.New("n2 has fewer than 11 apps")
	})
	var seen []emulation.Violation
	e := mustNew(t, emulation.Config{
		Spec:        testSpec(tcfg{nodes: 2}, planted, reached, never, unreached),
		Nodes:       2,
		Seed:        1,
		StartSpread: time.Nanosecond,
		Duration:    10 * time.Second,
		Observers:   emulation.Observers{OnViolation: func(v emulation.Violation) { seen = append(seen, v) }},
	})
	run(t, e, time.Second)
	for i := 1; i <= 10; i++ {
		run(t, e, time.Second+time.Duration(i)*100*time.Millisecond)
		app(t, e, 1, Inc{}) // n1.Apps = i
		app(t, e, 2, Inc{}) // another state with the same n1
	}
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// Violated after both events of rounds 3, 4, 8, 9: 8 states, 2 episodes.
	want := emulation.SafetyResult{Name: "apps-not-3-or-4", ViolatedStates: 8, Episodes: 2,
		FirstViolation: 1300 * time.Millisecond, FirstEvent: "n1 app test.inc", FirstError: "n1 has 3 apps"}
	if len(r.Safety) != 2 || r.Safety[0] != want || r.Safety[1] != (emulation.SafetyResult{Name: "never-violated"}) {
		t.Fatalf("safety results %+v, want [%+v never-violated]", r.Safety, want)
	}
	if len(seen) != 8 || !seen[0].New || seen[1].New || !seen[4].New || seen[0].Node != 1 || seen[1].Node != 2 ||
		!seen[0].At.Equal(at(1300*time.Millisecond)) || seen[0].Err.Error() != "n1 has 3 apps" {
		t.Fatalf("OnViolation saw %+v", seen)
	}
	wantLive := []emulation.LivenessResult{{Name: "n1-reached-10", Holds: true}, {Name: "n2-reached-11", Error: "n2 has fewer than 11 apps"}}
	if len(r.Liveness) != 2 || r.Liveness[0] != wantLive[0] || r.Liveness[1] != wantLive[1] {
		t.Fatalf("liveness %+v, want %+v", r.Liveness, wantLive)
	}
	if r.VirtualDuration != 10*time.Second || r.Events != 2+20 || r.EventsByKind["app"] != 20 {
		t.Fatalf("result %+v", r)
	}
}

func TestHandlerPanicReportsSeed(t *testing.T) {
	const seed = 31337
	e := mustNew(t, emulation.Config{
		Spec:     testSpec(tcfg{nodes: 4, period: time.Second, fanout: 1}),
		Nodes:    4,
		Seed:     seed,
		Duration: time.Minute,
		Workload: func(id node.ID, restart bool) []node.Message {
			if id == 3 {
				return []node.Message{Boom{}}
			}
			return nil
		},
	})
	r, err := e.Run(context.Background())
	var pe *emulation.PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("Run returned %v, want a *PanicError", err)
	}
	msg := err.Error()
	for _, want := range []string{"node n3", "app test.boom", "boom", "(virtual)", fmt.Sprintf("rerun with seed=%d", seed)} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if pe.Node != 3 || pe.Seed != seed || pe.At <= 0 || pe.At > 10*time.Second || len(pe.Stack) == 0 {
		t.Errorf("panic error %+v", pe)
	}
	if e.Err() != err || e.Step() || r.Seed != seed {
		t.Error("the emulator is not stuck on its failure")
	}
}

func TestPropertyPanicReportsSeed(t *testing.T) {
	bad := node.Always("bad", func(v node.View) error {
		if len(v.Nodes()) == 3 {
			panic("index out of range")
		}
		return nil
	})
	e := mustNew(t, emulation.Config{Spec: testSpec(tcfg{nodes: 3}, bad), Nodes: 3, Seed: 8, Duration: time.Minute})
	_, err := e.Run(context.Background())
	var pe *emulation.PanicError
	if !errors.As(err, &pe) || pe.Property != "bad" || !strings.Contains(err.Error(), `property "bad" panicked handling init`) ||
		!strings.Contains(err.Error(), "seed=8") {
		t.Fatalf("Run returned %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	good := func() emulation.Config {
		return emulation.Config{Spec: testSpec(tcfg{nodes: 3}), Nodes: 3, Duration: time.Second}
	}
	neg := -time.Second
	cases := []struct {
		name string
		mod  func(*emulation.Config)
		want string
	}{
		{"no nodes", func(c *emulation.Config) { c.Nodes = 0 }, "Config.Nodes must be positive"},
		{"negative nodes", func(c *emulation.Config) { c.Nodes = -2 }, "Config.Nodes must be positive"},
		{"too many nodes", func(c *emulation.Config) { c.Nodes = emulation.MaxNodes + 1 }, "Config.Nodes must be at most"},
		{"nil factory", func(c *emulation.Config) { c.Spec.New = nil }, "Config.Spec.New"},
		{"bad spec", func(c *emulation.Config) { c.Spec.Name = "" }, "invalid Config.Spec"},
		{"negative duration", func(c *emulation.Config) { c.Duration = neg }, "Config.Duration must not be negative"},
		{"negative spread", func(c *emulation.Config) { c.StartSpread = neg }, "Config.StartSpread"},
		{"negative rto", func(c *emulation.Config) { c.Network.MinRTO = neg }, "Config.Network.MinRTO"},
		{"negative self delay", func(c *emulation.Config) { c.Network.SelfDelay = neg }, "Config.Network.SelfDelay"},
		{"negative downtime", func(c *emulation.Config) { c.Churn.Downtime = neg }, "Config.Churn.Downtime"},
		{"negative churn start", func(c *emulation.Config) { c.Churn.After = neg }, "Config.Churn.After"},
		{"negative rate", func(c *emulation.Config) { c.Churn.Rate = -1 }, "Config.Churn.Rate"},
		{"NaN rate", func(c *emulation.Config) { c.Churn.Rate = math.NaN() }, "Config.Churn.Rate"},
		{"silent fraction", func(c *emulation.Config) { c.Churn.SilentFraction = emulation.Fraction(1.5) }, "Config.Churn.SilentFraction"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.mod(&c)
			_, err := emulation.New(c)
			if err == nil || !strings.HasPrefix(err.Error(), "emulation: ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := emulation.New(good()); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	c := good()
	c.Duration = 0
	e, err := emulation.New(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "Duration") {
		t.Fatalf("Run without a duration: %v", err)
	}
}

func TestRunStopsOnCancel(t *testing.T) {
	cfg := gossipConfig(1, 10, 0, nil)
	cfg.Duration = 1000 * time.Hour
	e := mustNew(t, cfg)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := e.Run(ctx)
	if !errors.Is(err, context.Canceled) || r.VirtualDuration > time.Hour {
		t.Fatalf("Run on a cancelled context: %v after %v", err, r.VirtualDuration)
	}
}

func TestNoGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	cfg := gossipConfig(2, 10, 3, nil)
	e := mustNew(t, cfg)
	for i := 0; i < 5000 && e.Step(); i++ {
		if n := runtime.NumGoroutine(); n > before {
			t.Fatalf("the emulator started goroutines: %d > %d", n, before)
		}
	}
}

func TestResultJSONShape(t *testing.T) {
	_, r := runTrace(t, gossipConfig(11, 5, 2, nil))
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seed", "nodes", "virtual_duration_ns", "wall_time_ns", "events", "events_by_kind",
		"messages", "transport_errors", "resets", "churn", "safety", "liveness"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if m["safety"] == nil || m["liveness"] == nil {
		t.Errorf("empty property lists must be [] not null: %s", b)
	}
	if r.Seed != 11 || r.VirtualDuration != 2*time.Minute || r.WallTime <= 0 {
		t.Errorf("result %+v", r)
	}
}

// Churn.Until ends the churn phase: no leave at or after it, and every node
// that was down comes back, so the run ends with all nodes live.
func TestChurnUntilEndsLeavesAndNodesComeBack(t *testing.T) {
	const seed = 77
	logSeedOnFailure(t, seed)
	var buf bytes.Buffer
	until := 20 * time.Minute
	e := mustNew(t, emulation.Config{
		Spec:      testSpec(tcfg{nodes: 10}),
		Nodes:     10,
		Seed:      seed,
		Duration:  40 * time.Minute,
		Churn:     emulation.ChurnConfig{Rate: 3, Until: until},
		Observers: emulation.Observers{Trace: &buf},
	})
	r, err := e.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if r.Churn.Leaves < 30 {
		t.Fatalf("only %d leaves in 20 minutes at 3/min", r.Churn.Leaves)
	}
	if r.Churn.Rejoins != r.Churn.Leaves {
		t.Fatalf("%d leaves but %d rejoins: some node never came back", r.Churn.Leaves, r.Churn.Rejoins)
	}
	for _, l := range strings.Split(buf.String(), "\n") {
		f := strings.Fields(l)
		if len(f) >= 3 && f[2] == "down" && parseClock(t, f[0]) >= until {
			t.Fatalf("leave after Churn.Until: %s", l)
		}
	}
	for id := node.ID(1); id <= 10; id++ {
		if !e.Live(id) {
			t.Fatalf("%v is down at the end", id)
		}
	}
	if _, err := emulation.New(emulation.Config{
		Spec: testSpec(tcfg{nodes: 2}), Nodes: 2,
		Churn: emulation.ChurnConfig{Rate: 1, After: time.Minute, Until: time.Minute},
	}); err == nil || !strings.Contains(err.Error(), "Churn.Until") {
		t.Fatalf("Until <= After accepted: %v", err)
	}
}
