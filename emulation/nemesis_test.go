package emulation_test

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/emulation"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// nemPing pings every other node of a cluster of nemNodes every second and
// keeps what it got and heard of: the lasting faults' tests watch it.
type nemPing struct {
	node.NopHandlers
	Got, Errors []node.ID
	Ticks       int
	// Clock is Env.Now at the last tick, since Epoch.
	Clock time.Duration
}

type nemMsg struct{ node.Named[nemMsg] }

const nemNodes = 3

var nemSpec = node.Spec{Name: "nem-ping", New: func() node.Service { return &nemPing{} }, Messages: []node.Message{nemMsg{}}}

func (p *nemPing) Init(env node.Env) { env.SetTimer("tick", time.Second) }
func (p *nemPing) HandleTimer(env node.Env, _ string) {
	p.Ticks++
	p.Clock = env.Now().Sub(emulation.Epoch)
	for id := node.ID(1); id <= nemNodes; id++ {
		if id != env.Self() {
			env.Send(id, nemMsg{})
		}
	}
	env.SetTimer("tick", time.Second)
}
func (p *nemPing) HandleMessage(_ node.Env, from node.ID, _ node.Message) {
	p.Got = append(p.Got, from)
}
func (p *nemPing) HandleTransportError(_ node.Env, peer node.ID) { p.Errors = append(p.Errors, peer) }

// nemRun is an emulator of nemNodes pingers started at once, with every
// delivery recorded as "from->to@second".
func nemRun(t *testing.T, cfg emulation.Config) (*emulation.Emulator, *[]string) {
	t.Helper()
	var log []string
	cfg.Spec, cfg.Nodes, cfg.StartSpread = nemSpec, nemNodes, time.Nanosecond
	cfg.OnNetwork = func(ev emulation.NetworkEvent) {
		if ev.Kind == emulation.NetDeliver {
			log = append(log, fmt.Sprintf("%v->%v@%d", ev.From, ev.To, ev.At/time.Second))
		}
	}
	e, err := emulation.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e, &log
}

func until(t *testing.T, e *emulation.Emulator, d time.Duration) {
	t.Helper()
	if err := e.RunUntil(emulation.Epoch.Add(d)); err != nil {
		t.Fatal(err)
	}
}

func pinger(e *emulation.Emulator, id node.ID) *nemPing { return e.Core(id).Service().(*nemPing) }

// deliveredTo lists the deliveries to node to in the log, from second lo
// to second hi (inclusive).
func delivered(log []string, from, to node.ID, lo, hi int) int {
	n := 0
	for s := lo; s <= hi; s++ {
		n += countOf(log, fmt.Sprintf("%v->%v@%d", from, to, s))
	}
	return n
}

func countOf(log []string, s string) int {
	n := 0
	for _, l := range log {
		if l == s {
			n++
		}
	}
	return n
}

// TestCrashStop: a crashed node is down — out of the view, nothing
// delivered to it, every write to it answered by a transport error —
// until it restarts after its downtime (a fresh incarnation), or for
// good.
func TestCrashStop(t *testing.T) {
	for _, down := range []time.Duration{0, 5 * time.Second} {
		e, log := nemRun(t, emulation.Config{Seed: 1})
		until(t, e, 3500*time.Millisecond)
		if err := e.Crash(2, down); err != nil {
			t.Fatal(err)
		}
		if e.Live(2) || slices.Contains(e.View().Nodes(), 2) {
			t.Fatalf("downtime %v: n2 live after its crash", down)
		}
		errs := len(pinger(e, 1).Errors)
		until(t, e, 7500*time.Millisecond)
		if n := delivered(*log, 1, 2, 4, 7); n != 0 {
			t.Errorf("downtime %v: %d pings delivered to the down n2", down, n)
		}
		if got := len(pinger(e, 1).Errors) - errs; got < 3 {
			t.Errorf("downtime %v: n1 got %d transport errors about the down n2 in 4s of pings, want one a ping", down, got)
		}
		until(t, e, 12*time.Second)
		r := e.Result()
		if want := down > 0; e.Live(2) != want || (r.Nemesis.Restarts == 1) != want || r.Nemesis.Crashes != 1 {
			t.Errorf("downtime %v: live %v at 12s, %+v", down, e.Live(2), r.Nemesis)
		}
		if down > 0 && (e.Incarnation(2) != 1 || delivered(*log, 1, 2, 10, 12) == 0) {
			t.Errorf("restarted n2: incarnation %d, pings delivered after the restart %d", e.Incarnation(2), delivered(*log, 1, 2, 10, 12))
		}
	}
}

// TestCutOneWay: what n1 sends n2 is lost while the cut lasts (n1 is
// told), what n2 sends n1 arrives — but for the pings n2 sends on a
// connection n1's write has just broken (one direction alone cannot carry
// a connection: the write breaks it, and n2 reconnects); after the heal
// n1's pings arrive again.
func TestCutOneWay(t *testing.T) {
	e, log := nemRun(t, emulation.Config{Seed: 1})
	until(t, e, 2500*time.Millisecond)
	if err := e.CutOneWay(1, 2); err != nil {
		t.Fatal(err)
	}
	until(t, e, 8500*time.Millisecond)
	if err := e.HealOneWay(1, 2); err != nil {
		t.Fatal(err)
	}
	until(t, e, 12500*time.Millisecond)
	switch {
	case delivered(*log, 1, 2, 3, 8) != 0:
		t.Errorf("n1's pings reached n2 across the cut: %v", *log)
	case delivered(*log, 2, 1, 4, 8) < 2:
		t.Errorf("n2's pings did not reach n1 while only n1 -> n2 was cut: %v", *log)
	case delivered(*log, 1, 3, 3, 8) < 5:
		t.Errorf("n1's pings to n3 were lost: %v", *log)
	case delivered(*log, 1, 2, 10, 12) == 0:
		t.Errorf("n1's pings did not reach n2 after the heal: %v", *log)
	case !slices.Contains(pinger(e, 1).Errors, 2):
		t.Errorf("n1 was not told of its lost pings: %v", pinger(e, 1).Errors)
	}
	if e.Result().Nemesis != nil {
		t.Errorf("a scenario cut counted as a nemesis partition: %+v", e.Result().Nemesis)
	}
}

// TestPartitionGroupsHealAll: nodes of different groups are cut apart,
// a node of no group reaches both; HealAll heals every cut.
func TestPartitionGroupsHealAll(t *testing.T) {
	e, log := nemRun(t, emulation.Config{Seed: 1})
	until(t, e, 2500*time.Millisecond)
	if err := e.PartitionGroups([]node.ID{1}, []node.ID{2}); err != nil {
		t.Fatal(err)
	}
	if !e.Partitioned(1, 2) || e.Partitioned(1, 3) || e.Partitioned(2, 3) {
		t.Fatal("partition {1} | {2} cut the wrong links")
	}
	until(t, e, 6500*time.Millisecond)
	if err := e.HealAll(); err != nil {
		t.Fatal(err)
	}
	until(t, e, 10500*time.Millisecond)
	if delivered(*log, 1, 2, 4, 6)+delivered(*log, 2, 1, 4, 6) != 0 || delivered(*log, 1, 3, 4, 6) == 0 || delivered(*log, 2, 1, 8, 10) == 0 {
		t.Errorf("deliveries across the partition and after HealAll: %v", *log)
	}
	if err := e.PartitionGroups([]node.ID{1, 2}, []node.ID{2}); err == nil {
		t.Error("PartitionGroups with n2 in two groups did not fail")
	}
}

// TestJumpClock: a jump moves what Env.Now reads, forward or back, for
// good; the node's timers keep their virtual period.
func TestJumpClock(t *testing.T) {
	e, _ := nemRun(t, emulation.Config{Seed: 1})
	until(t, e, 2500*time.Millisecond)
	if err := e.JumpClock(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := e.JumpClock(2, -2*time.Second); err != nil {
		t.Fatal(err)
	}
	until(t, e, 5500*time.Millisecond)
	p1, p2, p3 := pinger(e, 1), pinger(e, 2), pinger(e, 3)
	if p1.Ticks != p3.Ticks || p2.Ticks != p3.Ticks {
		t.Errorf("ticks %d, %d, %d: a jump changed a timer's period", p1.Ticks, p2.Ticks, p3.Ticks)
	}
	if p1.Clock-p3.Clock != 10*time.Second || p3.Clock-p2.Clock != 2*time.Second {
		t.Errorf("clocks at the last tick: %v, %v, %v", p1.Clock, p2.Clock, p3.Clock)
	}
	if e.ClockOffset(1) != 10*time.Second || e.Result().Nemesis.ClockJumps != 2 {
		t.Errorf("offset %v, %+v", e.ClockOffset(1), e.Result().Nemesis)
	}
}

// TestTimerSkew: every node's skew is within the bound, a pure function of
// the seed, and its timers fire that much late (early when negative).
func TestTimerSkew(t *testing.T) {
	const bound = 300 * time.Millisecond
	skews := func(seed uint64) []time.Duration {
		e, _ := nemRun(t, emulation.Config{Seed: seed, Nemesis: emulation.NemesisConfig{TimerSkew: bound}})
		var out []time.Duration
		for id := node.ID(1); id <= nemNodes; id++ {
			out = append(out, e.TimerSkew(id))
		}
		return out
	}
	a := skews(7)
	if !slices.Equal(a, skews(7)) || slices.Equal(a, skews(8)) {
		t.Fatalf("skews %v (seed 7 twice), %v (seed 8)", a, skews(8))
	}
	e, _ := nemRun(t, emulation.Config{Seed: 7, Nemesis: emulation.NemesisConfig{TimerSkew: bound}})
	until(t, e, 3500*time.Millisecond)
	for i, s := range a {
		if s < -bound || s > bound {
			t.Errorf("n%d: skew %v outside ±%v", i+1, s, bound)
		}
		p := pinger(e, node.ID(i+1))
		if want := 3*time.Second + 3*s; p.Ticks != 3 || p.Clock != want {
			t.Errorf("n%d (skew %v): tick %d at %v, want the third at %v", i+1, s, p.Ticks, p.Clock, want)
		}
	}
}

// TestNemesisRates: the rate processes crash, partition and jump, each
// from its own stream (a run is a pure function of its seed), the
// layers' rates account them, and a run without them has no nemesis
// result.
func TestNemesisRates(t *testing.T) {
	cfg := emulation.Config{Seed: 3, Duration: 3 * time.Minute, Nemesis: emulation.NemesisConfig{
		Crashes:    emulation.CrashConfig{Rate: 2, Downtime: 10 * time.Second},
		Partitions: emulation.PartitionConfig{Rate: 2, Length: 10 * time.Second, Kinds: consequence.CutIsolate | consequence.CutOneWay},
		ClockJumps: emulation.JumpConfig{Rate: 2},
	}}
	run := func() (emulation.Result, consequence.CutKinds) {
		e, _ := nemRun(t, cfg)
		r, err := e.Run(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r, e.Rates().Lasting.Kinds
	}
	r, kinds := run()
	n := r.Nemesis
	if n == nil || n.Crashes == 0 || n.Restarts == 0 || n.Partitions == 0 || n.Heals == 0 || n.ClockJumps == 0 || kinds&^(consequence.CutIsolate|consequence.CutOneWay) != 0 {
		t.Fatalf("nemesis %+v, partition kinds %v", n, kinds)
	}
	again, _ := run()
	r.WallTime, again.WallTime = 0, 0
	if !reflect.DeepEqual(r, again) {
		t.Errorf("two runs of seed 3 differ:\n%+v\n%+v", r, again)
	}
	e, _ := nemRun(t, emulation.Config{Seed: 3, Duration: time.Minute})
	if r, _ := e.Run(context.Background()); r.Nemesis != nil {
		t.Errorf("a run without lasting faults: nemesis %+v", r.Nemesis)
	}
}

// TestScheduleRuns: a schedule's statements happen at their times, with
// their durations; one whose node is not live is skipped.
func TestScheduleRuns(t *testing.T) {
	s, err := emulation.ParseSchedule(`
at 2s crash 2 for 3s
at 3s crash 2          # down already: skipped
at 6s isolate 3 for 2s
at 9s cut 1->2; at 11s heal
at 12s jump 1 +1s`)
	if err != nil {
		t.Fatal(err)
	}
	e, log := nemRun(t, emulation.Config{Seed: 1, Nemesis: emulation.NemesisConfig{Schedule: s}})
	until(t, e, 4*time.Second)
	if e.Live(2) {
		t.Fatal("n2 live at 4s")
	}
	until(t, e, 7*time.Second)
	if !e.Live(2) || !e.Partitioned(1, 3) || !e.Partitioned(2, 3) {
		t.Fatalf("at 7s: n2 live %v, n3 isolated %v", e.Live(2), e.Partitioned(1, 3))
	}
	until(t, e, 10*time.Second)
	if e.Partitioned(1, 3) || !e.CutFrom(1, 2) || e.CutFrom(2, 1) {
		t.Fatal("at 10s: the isolation did not heal, or the one-way cut is not in place")
	}
	until(t, e, 13*time.Second)
	r := e.Result().Nemesis
	if e.CutFrom(1, 2) || e.ClockOffset(1) != time.Second || r.Crashes != 1 || r.Restarts != 1 || r.Skipped != 1 || r.Partitions != 2 || r.Heals != 2 || r.ClockJumps != 1 {
		t.Errorf("at 13s: cut %v, offset %v, %+v", e.CutFrom(1, 2), e.ClockOffset(1), r)
	}
	if delivered(*log, 1, 3, 7, 7) != 0 || delivered(*log, 1, 3, 9, 10) == 0 {
		t.Errorf("deliveries to the isolated n3: %v", *log)
	}
	if _, err := emulation.New(emulation.Config{Spec: nemSpec, Nodes: 2, Nemesis: emulation.NemesisConfig{Schedule: s}}); err == nil {
		t.Error("a schedule naming n3 ran on 2 nodes")
	}
}

// TestLayersObserveLastingFaults: every node's steering layer is told of
// a lasting fault the nemesis injects (the rounds explore the kinds seen:
// steering.RoundFaults), with its duration; a scenario method's fault is
// not reported.
func TestLayersObserveLastingFaults(t *testing.T) {
	snaps, steer := emulation.ModeConfig(steering.Debug, nemNodes, false)
	s, err := emulation.ParseSchedule("at 2s crash 2 for 5s")
	if err != nil {
		t.Fatal(err)
	}
	e, _ := nemRun(t, emulation.Config{Seed: 1, Snapshots: snaps, Steering: steer, Nemesis: emulation.NemesisConfig{Schedule: s}})
	until(t, e, 3*time.Second)
	if err := e.CutOneWay(1, 3); err != nil { // a scenario method's cut: not observed
		t.Fatal(err)
	}
	for id := node.ID(1); id <= nemNodes; id++ {
		l := e.Steering(id).Rates().Lasting
		if l.Crashes != 1 || l.Restarting != 1 || l.Downtime != 5*time.Second || l.Partitions != 0 {
			t.Errorf("n%d observed %+v", id, l)
		}
	}
	if r := e.Rates().Lasting; r.Crashes != 1 {
		t.Errorf("the emulator's rates: %+v", r)
	}
}
