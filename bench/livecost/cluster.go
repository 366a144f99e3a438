package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/services/macetransport"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// cluster is one phase's live nodes, with their layers.
type cluster struct {
	nodes   []*live.Runtime
	timers  []*timing
	steers  []*steering.Layer // nil entries: plain
	snaps   []*snapshot.Layer // nil entries: plain
	started []*live.Runtime   // those to stop
	spec    node.Spec
	cfg     Config
	mode    mode
}

// mode is a configuration of the nodes' layers.
type mode int

const (
	// plain: the service alone (with the timing layers).
	plain mode = iota
	// immediate: snapshots and the immediate safety check, no rounds
	// (`--snapshots D --immediate`, mode off: the paper's "immediate
	// safety check only").
	immediate
	// steered: snapshots, rounds and filters in mode steer, and the
	// immediate check (`--mode steer --immediate`).
	steered
)

// modes are the configurations a measurement runs, in order.
var modes = []mode{plain, immediate, steered}

func (m mode) String() string {
	switch m {
	case immediate:
		return "immediate"
	case steered:
		return "steered"
	}
	return "plain"
}

// newSpec returns the workload's service: MaceTransport with its periodic
// application send every interval, and its corrections (AllFixes): with
// MaceMC's bug the rounds predict violations and install filters that
// hold events back, and the steered cluster then handles a fraction of
// the others' events (measured: 3,000-6,000 in 20 s against 25,000), a
// different workload, not a cost.
func newSpec(interval time.Duration) (node.Spec, error) {
	opts := macetransport.AllFixes()
	opts.AppInterval = interval
	return macetransport.NewSpec(opts)
}

// startCluster starts cfg.Nodes nodes on loopback, the first as the
// cluster's seed, the others joining it, each with the timing layers
// around (when steered) a snapshot manager and a steering layer in mode
// Steer with the immediate check, or mode Off with it; then it gives each node's application
// its peer (the next node).
func startCluster(ctx context.Context, cfg Config, m mode) (*cluster, error) {
	spec, err := newSpec(cfg.Interval)
	if err != nil {
		return nil, fmt.Errorf("livecost: %w", err)
	}
	c := &cluster{spec: spec, cfg: cfg, mode: m}
	var join []string
	for i := range cfg.Nodes {
		id := node.ID(i + 1)
		rt, err := c.newNode(id, join)
		if err != nil {
			c.stop(ctx)
			return nil, err
		}
		if err := rt.Start(ctx); err != nil {
			c.stop(ctx)
			return nil, fmt.Errorf("livecost: starting %v: %w", id, err)
		}
		c.started = append(c.started, rt)
		if i == 0 {
			join = []string{rt.Addr()}
		}
	}
	for i, rt := range c.nodes {
		peer := c.nodes[(i+1)%len(c.nodes)].ID()
		if err := rt.Submit(macetransport.SendMessages{To: peer, Count: 1}); err != nil {
			c.stop(ctx)
			return nil, fmt.Errorf("livecost: workload of %v: %w", rt.ID(), err)
		}
	}
	return c, nil
}

// newNode builds node id's runtime and layers.
func (c *cluster) newNode(id node.ID, join []string) (*live.Runtime, error) {
	rcfg := live.RuntimeConfig{ID: id, Join: join, Seed: uint64(id), JoinTimeout: 30 * time.Second}
	t := &timing{}
	rcfg.Layers = []layer.Layer{t.first()}
	var sl *snapshot.Layer
	var st *steering.Layer
	if c.mode != plain {
		var err error
		if sl, st, err = c.steering(); err != nil {
			return nil, err
		}
		rcfg.Layers = append(rcfg.Layers, sl, st)
	}
	rcfg.Layers = append(rcfg.Layers, t.last())
	rt, err := live.NewRuntime(rcfg, c.spec)
	if err != nil {
		return nil, fmt.Errorf("livecost: node %v: %w", id, err)
	}
	c.nodes, c.timers = append(c.nodes, rt), append(c.timers, t)
	c.snaps, c.steers = append(c.snaps, sl), append(c.steers, st)
	return rt, nil
}

// steering returns a snapshot manager and a steering layer as `crystalball
// node --mode steer --immediate` (or `--immediate` alone) builds them
// (cli/internal/tool/node.go), with the phase's intervals and budgets.
func (c *cluster) steering() (*snapshot.Layer, *steering.Layer, error) {
	reg, err := c.spec.Registry()
	if err != nil {
		return nil, nil, fmt.Errorf("livecost: %w", err)
	}
	quiet := slog.New(slog.DiscardHandler)
	sl, err := snapshot.NewLayer(snapshot.Config{Registry: reg, Interval: c.cfg.Snapshots, GatherConfig: snapshot.GatherConfig{GatherInterval: c.cfg.Snapshots}}, quiet)
	if err != nil {
		return nil, nil, fmt.Errorf("livecost: %w", err)
	}
	sm := steering.Off
	if c.mode == steered {
		sm = steering.Steer
	}
	ccfg := steering.Config{Mode: sm, Spec: c.spec, Workload: func(node.ID, bool) []node.Message { return nil },
		Faults:       consequence.Faults{Resets: 1, SilentResets: true},
		SearchBudget: steering.SearchBudget{MaxStates: c.cfg.SteerStates, MaxTime: c.cfg.SteerTime}}
	st, err := steering.NewLayer(steering.LayerConfig{Controller: ccfg, Immediate: true, Logger: quiet,
		Runner: live.NewRoundRunner(), Clock: time.Now}, sl)
	if err != nil {
		return nil, nil, fmt.Errorf("livecost: %w", err)
	}
	return sl, st, nil
}

// counters sums the nodes' counters: events handled, bytes written (all,
// and the layers'), rounds, immediate checks, checkpoints taken, filters
// installed and events the filters or the check held back.
func (c *cluster) counters(now time.Time) counts {
	var k counts
	for i, rt := range c.nodes {
		st := rt.Status()
		k.events += c.timers[i].count()
		k.wire += st.Counters.BytesOut
		k.layerWire += st.Counters.LayerBytesOut
		if c.steers[i] != nil {
			s := c.steers[i].Stats()
			k.rounds += s.Rounds
			k.checks += s.ImmediateChecks
			k.filters += s.FiltersInstalled
			k.held += s.FilterHits + s.Vetoes
		}
		if c.snaps[i] != nil {
			k.checkpoints += uint64(c.snaps[i].Status(now).Stats.Periodic)
		}
	}
	return k
}

// complete reports whether a phase that counted k is one of c's
// configuration: with layers, its nodes took checkpoints, sent layer
// traffic (gathers) and ran immediate checks; steered, they also
// finished a round.
func (c *cluster) complete(k counts) bool {
	switch c.mode {
	case plain:
		return true
	case immediate:
		return k.checks > 0 && k.checkpoints > 0 && k.layerWire > 0
	}
	return k.checks > 0 && k.checkpoints > 0 && k.layerWire > 0 && k.rounds > 0
}

// stop stops every started node.
func (c *cluster) stop(ctx context.Context) error {
	var first error
	for _, rt := range c.started {
		if err := rt.Stop(ctx); err != nil && first == nil {
			first = fmt.Errorf("livecost: stopping %v: %w", rt.ID(), err)
		}
	}
	c.started = nil
	return first
}

// counts are a cluster's counters at one moment.
type counts struct {
	events, wire, layerWire, rounds, checks, checkpoints, filters, held uint64
}

// minus returns k - o, counter by counter.
func (k counts) minus(o counts) counts {
	return counts{k.events - o.events, k.wire - o.wire, k.layerWire - o.layerWire,
		k.rounds - o.rounds, k.checks - o.checks, k.checkpoints - o.checkpoints, k.filters - o.filters, k.held - o.held}
}
