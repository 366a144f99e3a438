package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"github.com/seed6eee2ec7/crystalball/consequence"
	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/services/randtree"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/status"
	"github.com/seed6eee2ec7/crystalball/steering"
)

// liveJoin returns, per service, the application calls a live node issues
// once it has started: bootstrap holds the node IDs behind --join (learned
// from their handshakes), empty for the first node of a cluster.
var liveJoin = map[string]func(self node.ID, bootstrap []node.ID) []node.Message{
	randtree.Name: func(self node.ID, bootstrap []node.ID) []node.Message {
		if len(bootstrap) == 0 {
			bootstrap = []node.ID{self} // the first node roots its own tree
		}
		return []node.Message{randtree.JoinOverlay{Targets: bootstrap}}
	},
}

func runNode(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runNodeUntil(ctx, args, stdout, stderr)
}

// runNodeUntil is runNode until ctx ends (SIGINT or SIGTERM for the CLI;
// the in-process tests cancel it).
func runNodeUntil(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("node", stderr)
	service := fs.String("service", "randtree", "service to run ("+serviceNames()+")")
	idFlag := fs.String("id", "", "this node's ID: a positive integer such as 3 or n3 (required, unique in the cluster)")
	listen := fs.String("listen", "127.0.0.1:7000", "host:port of the service transport (framed TCP)")
	advertise := fs.String("advertise", "", "host:port peers dial for the service transport (default: the --listen address)")
	join := fs.String("join", "", "comma-separated service addresses (--listen of running nodes) to join through; empty starts a new cluster")
	gossip := fs.String("gossip", "", "host:port memberlist binds for membership and failure detection (default: --listen's host, a free port)")
	httpAddr := fs.String("http", "", "host:port serving GET /status (JSON), GET /metrics (Prometheus text) and /snapshot (default: no status server)")
	label := fs.String("label", "", "cluster label: peers with another label are refused")
	logFormat := fs.String("log", "console", "log format: json or console")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fix := fs.String("fix", "", "service corrections to apply: all, or a comma-separated list")
	seed := fs.Uint64("seed", 1, "seed of the node's random source")
	snapEvery := durationFlag(fs, "snapshots", snapshot.DefaultInterval, "checkpoint interval of the node's snapshot manager (0: no snapshot manager, no snapshot endpoints)")
	gatherEvery := durationFlag(fs, "gather", -1, "interval of automatic neighbourhood snapshots (auto: the --snapshots interval; 0: only on POST /snapshot)")
	modeFlag := fs.String("mode", "off", "execution steering: off, debug (predict from every gathered snapshot and report) or steer (also install event filters); needs --snapshots")
	immediate := fs.Bool("immediate", false, "run the immediate safety check before every event the node handles (in any --mode; needs --snapshots)")
	steerStates := fs.Int("steer-states", 20000, "budget of unique states of each steering search")
	steerTime := durationFlag(fs, "steer-time", 2*time.Second, "wall-time budget of each steering search (a round runs several)")
	steerResets := fs.Int("steer-resets", 1, "node resets (silent: the RST is lost) explored along a predicted path")
	steerBreak := fs.Bool("steer-break", false, "a filtered or vetoed message also breaks the connection to its sender (the paper's TCP reset)")
	lastKnown := durationFlag(fs, "steer-last-known", 0, "a member a gather cannot reach enters steering rounds and the immediate check at its last checkpoint seen at most this long before (0: left out, as in the paper; suits services whose state survives partitions and resets, such as paxos)")
	reports := fs.String("reports", "", "directory to write a JSON report per predicted violation into (--mode debug or steer; default: none)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: crystalball node --id N [flags]")
		fmt.Fprintln(fs.Output(), "Runs one live node of a service in the foreground until SIGINT or SIGTERM.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *idFlag == "" {
		return usagef("--id is required")
	}
	id, err := node.ParseID(*idFlag)
	if err != nil {
		return usagef("--id: %v", err)
	}
	joinCalls, ok := liveJoin[*service]
	if !ok {
		return usagef("unknown service %q (known: %s)", *service, serviceNames())
	}
	if *snapEvery < 0 {
		return usagef("--snapshots must not be negative, got %v", *snapEvery)
	}
	gatherSet := false
	fs.Visit(func(f *flag.Flag) { gatherSet = gatherSet || f.Name == "gather" })
	switch {
	case gatherSet && *gatherEvery < 0:
		return usagef("--gather must not be negative, got %v", *gatherEvery)
	case gatherSet && *gatherEvery > 0 && *snapEvery == 0:
		return usagef("--gather %v needs a snapshot manager (--snapshots is 0)", *gatherEvery)
	case *gatherEvery < 0:
		*gatherEvery = *snapEvery
	}
	mode, err := steering.ParseMode(*modeFlag)
	if err != nil {
		return usagef("--mode: want off, debug or steer, got %q", *modeFlag)
	}
	steer := mode != steering.Off || *immediate
	switch {
	case *steerStates <= 0:
		return usagef("--steer-states must be positive, got %d", *steerStates)
	case *steerTime <= 0:
		return usagef("--steer-time must be positive, got %v", *steerTime)
	case *steerResets < 0:
		return usagef("--steer-resets must not be negative, got %d", *steerResets)
	case *lastKnown < 0:
		return usagef("--steer-last-known must not be negative, got %v", *lastKnown)
	case mode != steering.Off && *snapEvery == 0:
		return usagef("--mode %v needs a snapshot manager (--snapshots is 0): rounds start from gathered snapshots", mode)
	case *immediate && *snapEvery == 0:
		return usagef("--immediate needs a snapshot manager (--snapshots is 0): the check reads the last gathered snapshot")
	case *reports != "" && mode == steering.Off:
		return usagef("--reports needs --mode debug or steer")
	}
	svc, err := lookupService(*service, splitList(*fix), 0)
	if err != nil {
		return err
	}
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level: want debug, info, warn or error, got %q", *logLevel)
	}
	logger, err := newCLILogger(*logFormat, level, stderr)
	if err != nil {
		return err
	}
	defer logger.Sync()

	cfg := live.DefaultRuntimeConfig()
	cfg.ID = id
	cfg.Listen = *listen
	cfg.Advertise = *advertise
	cfg.GossipBind = *gossip
	cfg.Join = splitList(*join)
	cfg.Label = *label
	cfg.Seed = *seed
	cfg.Logger = logger
	slogger := slog.New(zapslog.NewHandler(logger.Core()))
	var snapLive *snapshot.Live
	if *snapEvery > 0 {
		reg, err := svc.spec.Registry()
		if err != nil {
			return err
		}
		snapLive, err = snapshot.NewLive(snapshot.Config{Registry: reg, Interval: *snapEvery, GatherInterval: *gatherEvery}, slogger)
		if err != nil {
			return usageError{err}
		}
		cfg.Layers = []node.Layer{snapLive}
	}
	var steerer *steering.Live
	timings := status.NewTimings()
	if steer {
		ccfg := steering.Config{
			Mode:            mode,
			Spec:            svc.spec,
			Faults:          consequence.Faults{Resets: *steerResets, SilentResets: true},
			MaxStates:       *steerStates,
			MaxTime:         *steerTime,
			BreakConnection: *steerBreak,
			LastKnownFor:    *lastKnown,
		}
		lcfg := steering.LiveConfig{Controller: ccfg, Immediate: *immediate, Logger: slogger,
			OnRoundTime: timings.ObserveRound, OnImmediateCheck: timings.ObserveImmediateCheck}
		if *reports != "" {
			lcfg.OnRound = (&reportWriter{dir: *reports, log: logger, src: predictionSource{node: id, service: *service,
				fix: *fix, options: svc.options, spec: svc.spec, mode: mode, faults: ccfg.Faults}}).write
		}
		if steerer, err = steering.NewLive(lcfg, snapLive); err != nil {
			return usageError{err}
		}
		cfg.Layers = append(cfg.Layers, steerer)
		// A round runs the prediction and then the checks of the filters
		// it suggests; a newer snapshot cancels it.
		if mode != steering.Off && *gatherEvery > 0 && *gatherEvery < 3**steerTime {
			logger.Warn("steering rounds may outlast the gather interval; a newer snapshot cancels a running round",
				zap.Duration("gather", *gatherEvery), zap.Duration("steer_time", *steerTime))
		}
	}
	if err := cfg.Validate(); err != nil {
		return usageError{err}
	}
	if *reports != "" {
		if err := os.MkdirAll(*reports, 0o755); err != nil {
			return fmt.Errorf("--reports: %w", err)
		}
	}
	rt, err := live.NewRuntime(cfg, svc.spec)
	if err != nil {
		return err
	}

	// Bind the status listener first, so a busy port fails before the
	// node joins anyone.
	var statusLn net.Listener
	if *httpAddr != "" {
		if statusLn, err = net.Listen("tcp", *httpAddr); err != nil {
			return fmt.Errorf("--http: %w", err)
		}
		defer statusLn.Close()
	}

	started := time.Now()
	if err := rt.Start(ctx); err != nil {
		return err
	}
	stopNode := func() error {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return rt.Stop(sctx)
	}
	for _, call := range joinCalls(id, rt.Bootstrap()) {
		if err := rt.Submit(call); err != nil {
			stopNode()
			return err
		}
		logger.Info("application call", zap.String("call", fmt.Sprint(call)))
	}

	var srv *status.Server
	srvDone := make(chan error, 1)
	if statusLn != nil {
		if srv, err = newStatusServer(rt, snapLive, steerer, timings, svc, started); err != nil {
			stopNode()
			return err
		}
		go func() { srvDone <- srv.Serve(statusLn) }()
	}
	fmt.Fprintf(stdout, "node %v: %s on %s, gossip %s", id, *service, rt.Addr(), rt.GossipAddr())
	if statusLn != nil {
		fmt.Fprintf(stdout, ", status http://%s/status", statusLn.Addr())
	}
	if snapLive != nil {
		fmt.Fprintf(stdout, ", checkpoints every %v", *snapEvery)
	}
	if steerer != nil {
		fmt.Fprintf(stdout, ", steering %v", mode)
		if *immediate {
			fmt.Fprint(stdout, " with the immediate check")
		}
	}
	fmt.Fprintln(stdout)

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("signal received, stopping")
	case serveErr = <-srvDone:
	}
	if srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		srv.Shutdown(sctx)
		cancel()
	}
	if err := stopNode(); err != nil {
		return errors.Join(serveErr, err)
	}
	logger.Info("stopped")
	return serveErr
}

// newStatusServer builds the --http status server (package status) over
// the node's runtime and layers (snapLive and steer may be nil); GET
// /snapshot serves the snapshot document of node_snapshot.go.
func newStatusServer(rt *live.Runtime, snapLive *snapshot.Live, steer *steering.Live, timings *status.Timings, svc serviceRun, started time.Time) (*status.Server, error) {
	cfg := status.Config{Runtime: rt, Steering: steer, Timings: timings, Options: svc.options,
		Properties: svc.spec.Properties, Started: started}
	if snapLive != nil {
		cfg.Snapshots = snapLive
		cfg.SnapshotDoc = func(s *snapshot.Snapshot, now time.Time) (any, error) { return newSnapshotDoc(s, svc.spec, now) }
	}
	return status.New(cfg)
}

// newCLILogger builds the node's zap logger writing to w.
func newCLILogger(format string, level zapcore.Level, w io.Writer) (*zap.Logger, error) {
	var enc zapcore.Encoder
	switch format {
	case "json":
		ec := zap.NewProductionEncoderConfig()
		ec.EncodeTime = zapcore.RFC3339NanoTimeEncoder
		enc = zapcore.NewJSONEncoder(ec)
	case "console":
		ec := zap.NewDevelopmentEncoderConfig()
		ec.EncodeTime = zapcore.RFC3339TimeEncoder
		enc = zapcore.NewConsoleEncoder(ec)
	default:
		return nil, usagef("--log: want json or console, got %q", format)
	}
	return zap.New(zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), level)), nil
}
