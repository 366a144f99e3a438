// Package livenode runs one live node of a service with the layers that
// make it a CrystalBall node: a snapshot manager (snapshot.Layer), which
// checkpoints the node and gathers consistent snapshots of its
// neighbourhood, and a steering layer (steering.Layer), which predicts
// violations from those snapshots and steers the node away from them, both
// hosted by a live.Runtime (framed TCP, memberlist, wall-clock timers).
// It is what 'crystalball node' runs, as a library: a program that embeds
// the runtime in its own binary builds the same node with New.
//
//	n, err := livenode.New(spec, livenode.Config{
//		Runtime:   live.RuntimeConfig{ID: 1, Join: peers},
//		Snapshots: &snapshot.Config{GatherInterval: 10 * time.Second},
//		Steering: &steering.LayerConfig{Controller: steering.Config{
//			Mode: steering.Steer, SearchBudget: steering.SearchBudget{MaxTime: 2 * time.Second}}},
//	})
//
// The node's status over HTTP (package status) is built from its parts:
// Runtime, Snapshots and Steering.
package livenode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// ErrInvalidConfig is wrapped by New's errors about its Config: the
// runtime's configuration (live.RuntimeConfig.Validate), the snapshot
// manager's, the steering layer's, or a combination they do not allow.
var ErrInvalidConfig = errors.New("livenode: invalid configuration")

// Config configures a Node. Its zero value but for Runtime.ID is a
// complete configuration: a plain live node, with no snapshot manager and
// no steering.
type Config struct {
	// Runtime configures the live runtime (every zero field is its
	// documented default; ID is required). Its Layers are the caller's own
	// and run after the snapshot manager and the steering layer, which
	// New puts first.
	Runtime live.RuntimeConfig
	// Snapshots, when set, runs a snapshot manager with this
	// configuration as the node's first layer. A nil Registry means the
	// service's (node.Spec.Registry). Nil: no snapshot manager, so no
	// steering either.
	Snapshots *snapshot.Config
	// Steering, when set, runs a steering layer with this configuration
	// after the snapshot manager, which it needs (its rounds start from
	// the snapshots the manager gathers; the immediate check reads the
	// newest). Its zero fields that a live node fills: Controller.Spec
	// (the node's spec), Runner (live.NewRoundRunner: rounds on a
	// goroutine of their own), Logger (the runtime's Logger) and Clock
	// (time.Now, which times the immediate check for OnImmediateCheck).
	// Nil: no steering layer.
	Steering *steering.LayerConfig
	// Calls, when set, returns the application calls the node submits,
	// in order, once it has started: self is the node's ID and bootstrap
	// the IDs of the nodes behind Runtime.Join (learned in the transport's
	// handshake; empty for the first node of a cluster), so a service
	// that joins an overlay through a known member can be told which. Nil:
	// none.
	Calls func(self node.ID, bootstrap []node.ID) []node.Message
}

// DefaultConfig returns the configuration a zero field stands for, with
// Runtime.ID unset: the runtime's defaults (live.DefaultRuntimeConfig), no
// snapshot manager, no steering layer and no calls.
func DefaultConfig() Config { return Config{Runtime: live.DefaultRuntimeConfig()} }

// Node is a live node with its layers: New builds it, Start runs it, Stop
// stops it. Its methods are safe for concurrent use.
type Node struct {
	rt    *live.Runtime
	snaps *snapshot.Layer
	steer *steering.Layer
	calls func(self node.ID, bootstrap []node.ID) []node.Message
	log   *zap.Logger
}

// New validates cfg and builds the node of spec: its snapshot manager and
// steering layer as cfg asks, then the runtime that hosts them before the
// caller's own layers. The node is not started. An error about cfg wraps
// ErrInvalidConfig; a durable service without a store (neither
// Runtime.Durability.DataDir nor Ephemeral) is live.ErrDurableRequired.
func New(spec node.Spec, cfg Config) (*Node, error) {
	logger := cfg.Runtime.Logger
	if logger == nil {
		logger = zap.NewNop()
	}
	n := &Node{calls: cfg.Calls, log: logger}
	slogger := slog.New(zapslog.NewHandler(logger.Core()))
	var err error
	if n.snaps, err = newSnapshots(spec, cfg.Snapshots, slogger); err != nil {
		return nil, err
	}
	if n.steer, err = newSteering(spec, cfg.Steering, n.snaps, slogger); err != nil {
		return nil, err
	}
	warnRoundsOutlastGathers(logger, cfg.Snapshots, cfg.Steering)
	rcfg := cfg.Runtime
	rcfg.Layers = slices.Concat(n.layers(), cfg.Runtime.Layers)
	if err := rcfg.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	if n.rt, err = live.NewRuntime(rcfg, spec); err != nil {
		return nil, err
	}
	return n, nil
}

// newSnapshots builds the snapshot manager cfg asks for (nil: none).
func newSnapshots(spec node.Spec, cfg *snapshot.Config, logger *slog.Logger) (*snapshot.Layer, error) {
	if cfg == nil {
		return nil, nil
	}
	c := *cfg
	if c.Registry == nil {
		reg, err := spec.Registry()
		if err != nil {
			return nil, err
		}
		c.Registry = reg
	}
	l, err := snapshot.NewLayer(c, logger)
	if err != nil {
		return nil, fmt.Errorf("%w: Snapshots: %w", ErrInvalidConfig, err)
	}
	return l, nil
}

// newSteering builds the steering layer cfg asks for (nil: none) over the
// snapshot manager snaps, filling the fields a live node fills.
func newSteering(spec node.Spec, cfg *steering.LayerConfig, snaps *snapshot.Layer, logger *slog.Logger) (*steering.Layer, error) {
	if cfg == nil {
		return nil, nil
	}
	if snaps == nil {
		return nil, fmt.Errorf("%w: Steering needs Snapshots: rounds start from gathered snapshots, and the immediate check reads the newest", ErrInvalidConfig)
	}
	c := *cfg
	if c.Controller.Spec.Name == "" && c.Controller.Spec.New == nil {
		c.Controller.Spec = spec
	}
	if c.Runner == nil {
		c.Runner = live.NewRoundRunner()
	}
	if c.Logger == nil {
		c.Logger = logger
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	l, err := steering.NewLayer(c, snaps)
	if err != nil {
		return nil, fmt.Errorf("%w: Steering: %w", ErrInvalidConfig, err)
	}
	return l, nil
}

// warnRoundsOutlastGathers warns when steering rounds may run longer than
// the gather interval: a round runs the prediction and then the checks of
// the filters it suggests, each up to MaxTime, and a newer snapshot
// cancels it.
func warnRoundsOutlastGathers(log *zap.Logger, snaps *snapshot.Config, steer *steering.LayerConfig) {
	if snaps == nil || steer == nil || steer.Controller.Mode == steering.Off {
		return
	}
	gather, steerTime := snaps.GatherInterval, steer.Controller.MaxTime
	if gather > 0 && gather < 3*steerTime {
		log.Warn("steering rounds may outlast the gather interval; a newer snapshot cancels a running round",
			zap.Duration("gather", gather), zap.Duration("steer_time", steerTime))
	}
}

// layers returns the node's own layers, in pipeline order.
func (n *Node) layers() []layer.Layer {
	var ls []layer.Layer
	if n.snaps != nil {
		ls = append(ls, n.snaps)
	}
	if n.steer != nil {
		ls = append(ls, n.steer)
	}
	return ls
}

// Start starts the runtime (listening, joining the cluster through
// Runtime.Join: live.Runtime.Start) and then submits Config.Calls' calls
// in order. If a call is refused, Start stops the node and returns the
// error.
func (n *Node) Start(ctx context.Context) error {
	if err := n.rt.Start(ctx); err != nil {
		return err
	}
	if n.calls == nil {
		return nil
	}
	for _, call := range n.calls(n.rt.ID(), n.rt.Bootstrap()) {
		if err := n.rt.Submit(call); err != nil {
			return errors.Join(fmt.Errorf("livenode: application call %v: %w", call, err), n.rt.Stop(context.WithoutCancel(ctx)))
		}
		n.log.Info("application call", zap.String("call", fmt.Sprint(call)))
	}
	return nil
}

// Stop stops the node: it leaves the cluster, stops the layers and the
// runtime's goroutines, and closes its store (live.Runtime.Stop). If ctx
// ends first, Stop returns its error.
func (n *Node) Stop(ctx context.Context) error { return n.rt.Stop(ctx) }

// Runtime returns the node's runtime: its addresses, status, counters,
// Submit for application calls, and Done and Err for a node that stopped
// on its own (a failed store write).
func (n *Node) Runtime() *live.Runtime { return n.rt }

// Snapshots returns the node's snapshot manager (its status, Gather on
// demand); nil without Config.Snapshots.
func (n *Node) Snapshots() *snapshot.Layer { return n.snaps }

// Steering returns the node's steering layer (its status and counters);
// nil without Config.Steering.
func (n *Node) Steering() *steering.Layer { return n.steer }
