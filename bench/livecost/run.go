package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Config is a measurement's shape.
type Config struct {
	// Nodes is the cluster's size.
	Nodes int
	// Rounds is how many phases each configuration runs; they rotate
	// (plain, immediate, steered, then immediate, steered, plain, ...) so
	// that a drift of the machine's load weighs on all alike.
	Rounds int
	// Warmup is how long a phase's cluster runs before it is measured
	// (membership, connections, the first checkpoints).
	Warmup time.Duration
	// Phase is the least measured time of a phase. A phase also lasts
	// until it has timed MinEvents events and holds what makes it a
	// measurement of its configuration (cluster.complete); MaxPhase
	// bounds it.
	Phase     time.Duration
	MinEvents uint64
	MaxPhase  time.Duration
	// Interval is each node's application send interval.
	Interval time.Duration
	// Snapshots is the steered nodes' checkpoint and gather interval;
	// SteerStates and SteerTime bound each steering search.
	Snapshots   time.Duration
	SteerStates int
	SteerTime   time.Duration
}

// defaultConfig returns what `make livecost` measures.
func defaultConfig() Config {
	return Config{Nodes: 5, Rounds: 3, Warmup: 3 * time.Second, Phase: 20 * time.Second, MinEvents: 1000,
		MaxPhase: 2 * time.Minute, Interval: 10 * time.Millisecond, Snapshots: 2 * time.Second,
		SteerStates: 20_000, SteerTime: 2 * time.Second}
}

// deadline bounds the whole measurement.
func (c Config) deadline() time.Duration {
	return time.Duration(2*c.Rounds)*(c.Warmup+c.MaxPhase+30*time.Second) + time.Minute
}

// Report is the measurement: the three configurations and their ratios
// to plain.
type Report struct {
	Service      string  `json:"service"`
	Nodes        int     `json:"nodes"`
	Rounds       int     `json:"rounds"`
	PhaseSeconds float64 `json:"phase_seconds"`
	LoadStart    string  `json:"load_start"`
	LoadEnd      string  `json:"load_end"`
	Plain        Summary `json:"plain"`
	Immediate    Summary `json:"immediate"`
	Steered      Summary `json:"steered"`
}

// Summary is one configuration over its phases. CPURatio is its CPU per
// event over plain's; P50AddedMicros and P99AddedMicros the latencies it
// adds to plain's; WireRatio its bytes on the wire per event over
// plain's.
type Summary struct {
	Config           string  `json:"config"`
	CPURatio         float64 `json:"cpu_ratio"`
	P50AddedMicros   float64 `json:"p50_added_us"`
	P99AddedMicros   float64 `json:"p99_added_us"`
	WireRatio        float64 `json:"wire_ratio"`
	Events           uint64  `json:"events"`
	Seconds          float64 `json:"seconds"`
	EventsPerSecond  float64 `json:"events_per_second"`
	CPUNanosPerEvent float64 `json:"cpu_ns_per_event"`
	// CPUShare is the CPU time per second of wall time (the whole
	// cluster's: 2 is both of a 2-core machine's cores).
	CPUShare           float64 `json:"cpu_share"`
	P50Micros          float64 `json:"p50_us"`
	P99Micros          float64 `json:"p99_us"`
	WireBytesPerEvent  float64 `json:"wire_bytes_per_event"`
	LayerBytesPerEvent float64 `json:"layer_bytes_per_event"`
	Rounds             uint64  `json:"rounds"`
	ImmediateChecks    uint64  `json:"immediate_checks"`
	Checkpoints        uint64  `json:"checkpoints"`
	// FiltersInstalled counts the rounds' filters; HeldBack the events
	// the filters or the immediate check held back (filter hits and
	// vetoes): a steered cluster that holds events back runs a lighter
	// workload than the plain one.
	FiltersInstalled uint64 `json:"filters_installed"`
	HeldBack         uint64 `json:"held_back"`
}

// phase is what one phase measured.
type phase struct {
	k    counts
	cpu  time.Duration
	wall time.Duration
	lat  []time.Duration
}

// run measures cfg's phases, reporting progress to log.
func run(ctx context.Context, cfg Config, log io.Writer) (*Report, error) {
	if cfg.Nodes < 2 || cfg.Rounds < 1 || cfg.Phase <= 0 || cfg.Interval <= 0 || cfg.Snapshots <= 0 {
		return nil, fmt.Errorf("livecost: want at least 2 nodes, 1 round, and positive durations: %+v", cfg)
	}
	rep := &Report{Service: "macetransport", Nodes: cfg.Nodes, Rounds: cfg.Rounds, PhaseSeconds: cfg.Phase.Seconds(), LoadStart: loadavg()}
	phases := make([][]phase, len(modes))
	for r := range cfg.Rounds {
		for k := range modes {
			m := modes[(k+r)%len(modes)]
			p, err := runPhase(ctx, cfg, m)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(log, "livecost: round %d, %v: %d events in %v, %v CPU, load %s\n",
				r+1, m, p.k.events, p.wall.Round(time.Millisecond), p.cpu.Round(time.Millisecond), loadavg())
			phases[m] = append(phases[m], p)
		}
	}
	rep.LoadEnd = loadavg()
	rep.Plain = summarize(plain.String(), phases[plain])
	rep.Immediate = summarize(immediate.String(), phases[immediate])
	rep.Steered = summarize(steered.String(), phases[steered])
	for _, s := range []*Summary{&rep.Plain, &rep.Immediate, &rep.Steered} {
		s.CPURatio = ratio(s.CPUNanosPerEvent, rep.Plain.CPUNanosPerEvent)
		s.WireRatio = ratio(s.WireBytesPerEvent, rep.Plain.WireBytesPerEvent)
		s.P50AddedMicros = s.P50Micros - rep.Plain.P50Micros
		s.P99AddedMicros = s.P99Micros - rep.Plain.P99Micros
	}
	return rep, nil
}

// runPhase starts a cluster, lets it warm up, measures it and stops it.
func runPhase(ctx context.Context, cfg Config, m mode) (phase, error) {
	c, err := startCluster(ctx, cfg, m)
	if err != nil {
		return phase{}, err
	}
	p, err := measure(ctx, c)
	if stopErr := c.stop(ctx); err == nil {
		err = stopErr
	}
	return p, err
}

// measure waits out the warm-up, then measures c until the phase is done.
func measure(ctx context.Context, c *cluster) (phase, error) {
	if err := sleep(ctx, c.cfg.Warmup); err != nil {
		return phase{}, err
	}
	for _, t := range c.timers {
		t.take()
	}
	t0, cpu0, k0 := time.Now(), cpuTime(), c.counters(time.Now())
	tick := min(c.cfg.Phase, 100*time.Millisecond)
	for {
		if err := sleep(ctx, tick); err != nil {
			return phase{}, err
		}
		now := time.Now()
		k := c.counters(now).minus(k0)
		wall := now.Sub(t0)
		done := wall >= c.cfg.Phase && k.events >= c.cfg.MinEvents && c.complete(k)
		if done {
			p := phase{k: k, cpu: cpuTime() - cpu0, wall: wall}
			for _, t := range c.timers {
				p.lat = append(p.lat, t.take()...)
			}
			return p, nil
		}
		if wall > c.cfg.MaxPhase {
			return phase{}, fmt.Errorf("livecost: a %s phase ran %v without reaching its minimum (%+v)", c.mode, wall, k)
		}
	}
}

// summarize adds up a configuration's phases.
func summarize(name string, ps []phase) Summary {
	s := Summary{Config: name}
	var k counts
	var cpu, wall time.Duration
	var lat []time.Duration
	for _, p := range ps {
		k = counts{k.events + p.k.events, k.wire + p.k.wire, k.layerWire + p.k.layerWire,
			k.rounds + p.k.rounds, k.checks + p.k.checks, k.checkpoints + p.k.checkpoints,
			k.filters + p.k.filters, k.held + p.k.held}
		cpu += p.cpu
		wall += p.wall
		lat = append(lat, p.lat...)
	}
	slices.Sort(lat)
	s.Events, s.Seconds = k.events, wall.Seconds()
	if wall > 0 {
		s.CPUShare = cpu.Seconds() / wall.Seconds()
	}
	s.Rounds, s.ImmediateChecks, s.Checkpoints = k.rounds, k.checks, k.checkpoints
	s.FiltersInstalled, s.HeldBack = k.filters, k.held
	if k.events > 0 {
		ev := float64(k.events)
		s.EventsPerSecond = ev / wall.Seconds()
		s.CPUNanosPerEvent = float64(cpu.Nanoseconds()) / ev
		s.WireBytesPerEvent = float64(k.wire) / ev
		s.LayerBytesPerEvent = float64(k.layerWire) / ev
	}
	s.P50Micros, s.P99Micros = quantile(lat, 0.50), quantile(lat, 0.99)
	return s
}

// quantile returns the q-quantile of sorted latencies in microseconds.
func quantile(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, int(q*float64(len(sorted))))
	return float64(sorted[i].Nanoseconds()) / 1e3
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// cpuTime returns the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loadavg returns the machine's load averages (Linux), or "-".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "-"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "-"
	}
	return strings.Join(f[:3], " ")
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("livecost: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}
