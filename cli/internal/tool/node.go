package tool

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

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/livenode"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/status"
	"github.com/seed6eee2ec7/crystalball/steering"
)

func runNode(cat *catalog, args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runNodeUntil(ctx, cat, args, stdout, stderr)
}

// runNodeUntil is runNode until ctx ends (SIGINT or SIGTERM for the CLI;
// the in-process tests cancel it).
func runNodeUntil(ctx context.Context, cat *catalog, args []string, stdout, stderr io.Writer) error {
	f, err := parseNodeFlags(cat, args, stderr)
	if err != nil {
		return err
	}
	svc, err := cat.lookup(f.service, SplitList(f.fix), f.nodes)
	if err != nil {
		return err
	}
	logger, err := newNodeLogger(f, stderr)
	if err != nil {
		return err
	}
	defer logger.Sync()
	n, err := newLiveNode(f, svc, logger)
	if err != nil {
		return err
	}
	return n.serve(ctx, stdout)
}

// newNodeLogger builds the node's logger of --log and --log-level,
// writing to stderr.
func newNodeLogger(f *nodeFlags, stderr io.Writer) (*zap.Logger, error) {
	var level zapcore.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, usagef("--log-level: want debug, info, warn or error, got %q", f.logLevel)
	}
	return newCLILogger(f.logFormat, level, stderr)
}

// nodeFlags are the flags of 'crystalball node'.
type nodeFlags struct {
	service, idFlag, listen, advertise, join, gossip, httpAddr, label string
	tlsCert, tlsKey, tlsCA, gossipKeyFile                             string
	logFormat, logLevel, fix, reports                                 string
	dataDir                                                           string
	ephemeral, forgetLost                                             bool
	joinTimeout                                                       time.Duration
	nodes                                                             int
	seed                                                              uint64
	snapEvery, gatherEvery, steerTime                                 time.Duration
	steer                                                             steerFlags
	httpTokenFile, httpHosts                                          string
	trySendQueue                                                      int

	// Resolved by check.
	id node.ID
}

// register defines f's flags on fs.
func (f *nodeFlags) register(fs *flag.FlagSet, cat *catalog) {
	fs.StringVar(&f.service, "service", cat.defaultName(), "service to run ("+cat.list()+")")
	fs.StringVar(&f.idFlag, "id", "", "this node's ID: a positive integer such as 3 or n3 (required, unique in the cluster)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:7000", "host:port of the service transport (framed TCP)")
	fs.StringVar(&f.advertise, "advertise", "", "host:port peers dial for the service transport (default: the --listen address)")
	fs.StringVar(&f.join, "join", "", "comma-separated service addresses (--listen of running nodes) to join through; empty starts a new cluster")
	fs.StringVar(&f.gossip, "gossip", "", "host:port memberlist binds for membership and failure detection (default: --listen's host and port + 10000, or - 10000 above 55535, so a restarted node keeps its gossip address; port 0 with --listen's 0)")
	fs.StringVar(&f.httpAddr, "http", "", "host:port serving GET /status (JSON), GET /metrics (Prometheus text), /snapshot and GET /ui (a live web page of the node) (default: no status server)")
	fs.Var(durationValue{&f.joinTimeout}, "join-timeout", "how long the node tries to reach --join before it gives up (0: until it is stopped; a peer at its connection limit or still starting is retried every 200ms, with a warning every 5s)")
	fs.StringVar(&f.httpHosts, "http-host", "", "host names, comma-separated, the --http server answers to besides IP addresses and localhost (a request with another Host is refused, which defeats DNS rebinding)")
	fs.StringVar(&f.httpTokenFile, "http-token-file", "", "file holding the bearer token POST requests to --http must carry (default: POST from loopback clients only)")
	fs.StringVar(&f.label, "label", "", "cluster label: peers with another label are refused")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) of this node for mutual TLS on the service transport, naming the node as URI SAN crystalball://node/<id>; with --tls-key and --tls-ca (default: plaintext, unauthenticated)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM certificate(s) of the cluster CA: peers must present a certificate it signed")
	fs.StringVar(&f.gossipKeyFile, "gossip-key-file", "", "file of gossip encryption keys, one a line in base64 or hex, 16, 24 or 32 bytes each; the first encrypts, all decrypt (default: gossip unencrypted)")
	fs.StringVar(&f.logFormat, "log", "console", "log format: json or console")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.fix, "fix", "", cat.fixHelp())
	fs.IntVar(&f.nodes, "nodes", 0, "size of the cluster, for services configured with every member (paxos: members 1..N; 0: the service's default, paxos 1..3)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the node's random source")
	fs.IntVar(&f.trySendQueue, "try-send-queue", 0, "bytes waiting in a peer's write queue past which the service's TrySends to it are refused (0: live.DefaultTrySendQueueBytes, 64 KiB)")
	f.snapEvery, f.gatherEvery, f.steerTime = snapshot.DefaultInterval, -1, 2*time.Second
	fs.Var(durationValue{&f.snapEvery}, "snapshots", "checkpoint interval of the node's snapshot manager (0: no snapshot manager, no snapshot endpoints)")
	fs.Var(durationValue{&f.gatherEvery}, "gather", "interval of automatic neighbourhood snapshots (auto: the --snapshots interval; 0: only on POST /snapshot)")
	f.steer.register(fs)
	fs.Var(durationValue{&f.steerTime}, "steer-time", "wall-time budget of each steering search of a live node (a round runs several)")
	fs.StringVar(&f.reports, "reports", "", "directory to write a JSON report per predicted violation into (--mode debug or steer; default: none)")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory of the node's store (created if need be): the service's durable state (paxos: promises, accepted and learned values) and steering's installed filters are synced there before the messages that depend on them are sent, and recovered when the node starts again; one node per directory")
	fs.BoolVar(&f.forgetLost, "forget-lost-store", false, "start with a new, empty store when --data-dir was initialised for this node but its store is missing, empty or another's (refused otherwise): the node forgets what it promised")
	fs.BoolVar(&f.ephemeral, "ephemeral", false, "run a service with durable state (paxos) without --data-dir: a restarted node forgets what it promised (tests and experiments only)")
}

// parseNodeFlags parses and checks the flags of 'crystalball node'.
func parseNodeFlags(cat *catalog, args []string, stderr io.Writer) (*nodeFlags, error) {
	fs := newFlagSet("node", stderr)
	f := &nodeFlags{}
	f.register(fs, cat)
	setUsage(fs, "node --id N [flags]", "Runs one live node of a service in the foreground until SIGINT or SIGTERM.")
	if err := parseFlags(fs, args); err != nil {
		return nil, err
	}
	if err := rejectNegativeAuto(fs); err != nil {
		return nil, err
	}
	gatherSet := false
	fs.Visit(func(fl *flag.Flag) { gatherSet = gatherSet || fl.Name == "gather" })
	return f, f.check(cat, gatherSet)
}

// check validates f and resolves id, mode and the --gather default,
// group by group in the order the errors are reported.
func (f *nodeFlags) check(cat *catalog, gatherSet bool) error {
	return firstFailingStep(
		f.resolveID,
		func() error { return f.checkServiceFlags(cat) },
		func() error { return f.checkSnapshotFlags(gatherSet) },
		f.steer.resolve,
		func() error { return f.steer.checkSnapshots(f.snapEvery) },
		f.checkRunFlags,
	)
}

// resolveID checks the required --id and sets f.id from it.
func (f *nodeFlags) resolveID() error {
	if f.idFlag == "" {
		return usagef("--id is required")
	}
	id, err := node.ParseID(f.idFlag)
	if err != nil {
		return usagef("--id: %v", err)
	}
	f.id = id
	return nil
}

// checkServiceFlags checks that the TLS files come together and that
// --service names a service of cat.
func (f *nodeFlags) checkServiceFlags(cat *catalog) error {
	set := countSet(f.tlsCert, f.tlsKey, f.tlsCA)
	return FirstBrokenRule(
		UsageRule{set != 0 && set != 3, usagef("--tls-cert, --tls-key and --tls-ca go together: give all three or none")},
		UsageRule{!cat.has(f.service), usagef("unknown service %q (known: %s)", f.service, cat.list())},
	)
}

// checkSnapshotFlags checks --nodes, --snapshots and --gather, and
// defaults --gather (not given) to the --snapshots interval.
func (f *nodeFlags) checkSnapshotFlags(gatherSet bool) error {
	if err := FirstBrokenRule(
		UsageRule{outsideClosedRange(f.nodes, 0, 1<<16), usagef("--nodes must be in 0..65536, got %d", f.nodes)},
		UsageRule{f.snapEvery < 0, usagef("--snapshots must not be negative, got %v", f.snapEvery)},
		UsageRule{gatherSet && f.gatherEvery < 0, usagef("--gather must not be negative, got %v", f.gatherEvery)},
		UsageRule{gatherSet && f.gatherEvery > 0 && f.snapEvery == 0, usagef("--gather %v needs a snapshot manager (--snapshots is 0)", f.gatherEvery)},
	); err != nil {
		return err
	}
	if f.gatherEvery < 0 {
		f.gatherEvery = f.snapEvery
	}
	return FirstNonNilError(checkInterval("snapshots", f.snapEvery), checkInterval("gather", f.gatherEvery))
}

// checkRunFlags checks the flags of the running node: the join timeout,
// the steering time, and which flags need or exclude others.
func (f *nodeFlags) checkRunFlags() error {
	return FirstBrokenRule(
		UsageRule{f.joinTimeout < 0, usagef("--join-timeout must not be negative, got %v", f.joinTimeout)},
		UsageRule{f.steerTime <= 0, usagef("--steer-time must be positive, got %v", f.steerTime)},
		UsageRule{f.reports != "" && f.steer.mode == steering.Off, usagef("--reports needs --mode debug or steer")},
		UsageRule{f.forgetLost && f.dataDir == "", usagef("--forget-lost-store needs --data-dir")},
		UsageRule{f.ephemeral && f.dataDir != "", usagef("--ephemeral and --data-dir contradict each other: a node with a data directory keeps its durable state")},
	)
}

// countSet counts the non-empty strings among flags.
func countSet(flags ...string) int {
	n := 0
	for _, f := range flags {
		if f != "" {
			n++
		}
	}
	return n
}

// secure loads the TLS and gossip key files the flags name into cfg.
func (f *nodeFlags) secure(cfg *live.RuntimeConfig) error {
	if f.tlsCert != "" {
		tc, err := live.LoadTLSConfig(f.tlsCert, f.tlsKey, f.tlsCA)
		if err != nil {
			return usagef("--tls-cert, --tls-key, --tls-ca: %w", err)
		}
		cfg.TLS = tc
	}
	if f.gossipKeyFile != "" {
		ring, err := live.LoadGossipKeyring(f.gossipKeyFile)
		if err != nil {
			return usagef("--gossip-key-file: %w", err)
		}
		cfg.Gossip.Keyring = ring
	}
	return nil
}

// steers reports whether the node runs a steering layer.
func (f *nodeFlags) steers() bool { return f.steer.steers() }

// steeringConfig is the steering controller's configuration the flags
// give, for the service spec.
func (f *nodeFlags) steeringConfig(spec node.Spec) steering.Config {
	ccfg := steering.Config{Spec: spec, SearchBudget: steering.SearchBudget{MaxTime: f.steerTime}}
	f.steer.apply(&ccfg)
	return ccfg
}

// liveNode is a configured live node (livenode.Node: its runtime and
// layers) with the status listener, ready to serve.
type liveNode struct {
	f        *nodeFlags
	svc      serviceRun
	log      *zap.Logger
	node     *livenode.Node
	reports  *report.Writer  // nil without --reports
	timings  *status.Timings // the status server's round and check histograms
	statusLn net.Listener    // nil without --http
	httpTok  string          // --http-token-file's token
}

// joinUntilStopped is --join-timeout 0's RuntimeConfig.JoinTimeout: the
// join is retried until the node is stopped (its context ends), so a
// cluster busy for a while (the audit's peer held at its connection
// limit) delays a start rather than fails it.
const joinUntilStopped = 100 * 365 * 24 * time.Hour

// newLiveNode builds the node f describes for svc (package livenode) and
// binds the status listener (so a busy port fails before the node joins
// anyone).
func newLiveNode(f *nodeFlags, svc serviceRun, logger *zap.Logger) (*liveNode, error) {
	n := &liveNode{f: f, svc: svc, log: logger, timings: status.NewTimings()}
	cfg, err := n.nodeConfig()
	if err != nil {
		return nil, err
	}
	n.node, err = livenode.New(svc.spec, cfg)
	if err != nil {
		return nil, nodeBuildError(f.service, err)
	}
	if err := n.openOutputs(); err != nil {
		return nil, err
	}
	return n, nil
}

// nodeBuildError is the error livenode.New's err is reported as: a
// missing --data-dir and an invalid configuration are usage errors.
func nodeBuildError(service string, err error) error {
	switch {
	case errors.Is(err, live.ErrDurableRequired):
		return usagef("--service %s keeps durable state that must survive a crash (%v): give --data-dir DIR, or --ephemeral to run without it", service, err)
	case errors.Is(err, livenode.ErrInvalidConfig):
		return usageError{err}
	}
	return err
}

// nodeConfig is the node's configuration the flags give: the runtime's,
// the snapshot manager's (--snapshots 0: none) and the steering layer's
// (none without a mode or the immediate check).
func (n *liveNode) nodeConfig() (livenode.Config, error) {
	f := n.f
	cfg := livenode.DefaultConfig()
	cfg.Calls = n.svc.join
	rc := &cfg.Runtime
	rc.ID, rc.Listen, rc.Advertise, rc.Gossip.Bind = f.id, f.listen, f.advertise, f.gossip
	rc.Join, rc.Label, rc.Seed, rc.Logger = SplitList(f.join), f.label, f.seed, n.log
	rc.Transport.TrySendQueueBytes = f.trySendQueue
	rc.JoinTimeout = f.joinTimeout
	if rc.JoinTimeout == 0 {
		rc.JoinTimeout = joinUntilStopped
	}
	rc.Durability = live.DurabilityConfig{DataDir: f.dataDir, Ephemeral: f.ephemeral, ForgetLostStore: f.forgetLost}
	if err := f.secure(rc); err != nil {
		return cfg, err
	}
	if f.snapEvery > 0 {
		cfg.Snapshots = &snapshot.Config{Interval: f.snapEvery, GatherConfig: snapshot.GatherConfig{GatherInterval: f.gatherEvery, SecondHop: f.steer.secondHop}}
	}
	if f.steers() {
		cfg.Steering = n.steeringLayerConfig()
	}
	return cfg, nil
}

// steeringLayerConfig is the steering layer's configuration the flags
// give, with the status server's timings and, with --reports, the report
// writer as its hooks.
func (n *liveNode) steeringLayerConfig() *steering.LayerConfig {
	f := n.f
	ccfg := f.steeringConfig(n.svc.spec)
	lcfg := &steering.LayerConfig{Controller: ccfg, Immediate: f.steer.immediate,
		OnRoundTime: n.timings.ObserveRound, OnImmediateCheck: n.timings.ObserveImmediateCheck,
		Shipped: f.steer.shippedFilters}
	if f.reports != "" {
		src := report.Source{Node: f.id, Service: f.service, Fix: f.fix, Nodes: f.nodes, Options: n.svc.options,
			Spec: n.svc.spec, Mode: f.steer.mode, Workload: ccfg.Workload, Faults: ccfg.Faults}
		n.reports = &report.Writer{Dir: f.reports, Logger: slog.New(zapslog.NewHandler(n.log.Core())), Source: src}
		lcfg.OnRound = n.reports.Round
	}
	return lcfg
}

// openOutputs creates the --reports directory, reads --http-token-file
// and binds the --http listener.
func (n *liveNode) openOutputs() error {
	return firstFailingStep(n.makeReportsDir, n.readHTTPToken, n.listenHTTP)
}

// makeReportsDir creates the --reports directory (none without it).
func (n *liveNode) makeReportsDir() error {
	if n.f.reports == "" {
		return nil
	}
	if err := os.MkdirAll(n.f.reports, 0o755); err != nil {
		return fmt.Errorf("--reports: %w", err)
	}
	return nil
}

// readHTTPToken reads the bearer token of --http-token-file (none
// without it).
func (n *liveNode) readHTTPToken() error {
	if n.f.httpTokenFile == "" {
		return nil
	}
	tok, err := status.ReadTokenFile(n.f.httpTokenFile)
	if err != nil {
		return usagef("--http-token-file: %v", err)
	}
	n.httpTok = tok
	return nil
}

// listenHTTP binds the --http listener (none without it).
func (n *liveNode) listenHTTP() error {
	if n.f.httpAddr == "" {
		return nil
	}
	var err error
	if n.statusLn, err = net.Listen("tcp", n.f.httpAddr); err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	return nil
}

// serve starts the node (which issues the service's join calls), serves
// the status endpoints and runs until ctx ends or the status server
// fails; then it stops the node.
func (n *liveNode) serve(ctx context.Context, stdout io.Writer) error {
	if n.statusLn != nil {
		defer n.statusLn.Close()
	}
	started := time.Now()
	if err := n.node.Start(ctx); err != nil {
		return err
	}
	srv, srvDone, err := n.startStatusServer(started)
	if err != nil {
		n.stop()
		return err
	}
	n.printStarted(stdout)
	serveErr := n.awaitEnd(ctx, srvDone)
	shutdownStatusServer(srv)
	if err := n.stop(); err != nil {
		return errors.Join(serveErr, err)
	}
	n.log.Info("stopped")
	return serveErr
}

// startStatusServer starts the --http status server on its listener;
// srvDone receives the error it stops with. Without --http, srv is nil
// and srvDone never receives.
func (n *liveNode) startStatusServer(started time.Time) (srv *status.Server, srvDone chan error, err error) {
	srvDone = make(chan error, 1)
	if n.statusLn == nil {
		return nil, srvDone, nil
	}
	if srv, err = newStatusServer(n.node, n.reports, n.timings, n.svc, started, n.httpTok, SplitList(n.f.httpHosts)...); err != nil {
		return nil, nil, err
	}
	go func() { srvDone <- srv.Serve(n.statusLn) }()
	return srv, srvDone, nil
}

// awaitEnd waits until ctx ends (nil), the status server fails or the
// runtime stops (their error).
func (n *liveNode) awaitEnd(ctx context.Context, srvDone <-chan error) error {
	rt := n.node.Runtime()
	select {
	case <-ctx.Done():
		n.log.Info("signal received, stopping")
		return nil
	case err := <-srvDone:
		return err
	case <-rt.Done():
		return rt.Err()
	}
}

// shutdownStatusServer shuts srv (nil: none) down, waiting at most 2s.
func shutdownStatusServer(srv *status.Server) {
	if srv == nil {
		return
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	srv.Shutdown(sctx)
	cancel()
}

// stop stops the node, waiting at most 10s.
func (n *liveNode) stop() error {
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return n.node.Stop(sctx)
}

// printStarted prints the line that says the node runs, and where.
func (n *liveNode) printStarted(stdout io.Writer) {
	rt := n.node.Runtime()
	fmt.Fprintf(stdout, "node %v: %s on %s, gossip %s", n.f.id, n.f.service, rt.Addr(), rt.GossipAddr())
	if n.statusLn != nil {
		fmt.Fprintf(stdout, ", status http://%s/status", n.statusLn.Addr())
	}
	if n.node.Snapshots() != nil {
		fmt.Fprintf(stdout, ", checkpoints every %v", n.f.snapEvery)
	}
	if n.node.Steering() != nil {
		fmt.Fprintf(stdout, ", steering %v", n.f.steer.mode)
		if n.f.steer.immediate {
			fmt.Fprint(stdout, " with the immediate check")
		}
	}
	fmt.Fprintln(stdout)
}

// newStatusServer builds the --http status server (package status) over
// the node's runtime and layers and the report writer (nil without
// --reports); GET /snapshot serves the report.Snapshot document.
func newStatusServer(n *livenode.Node, reports *report.Writer, timings *status.Timings, svc serviceRun, started time.Time, token string, hosts ...string) (*status.Server, error) {
	cfg := status.Config{Runtime: n.Runtime(), Steering: n.Steering(), Timings: timings, Options: svc.options, Spec: svc.spec, Started: started, Access: status.Access{Token: token, AllowedHosts: hosts}}
	if reports != nil {
		cfg.Reports = reports
	}
	if sl := n.Snapshots(); sl != nil {
		cfg.Snapshots = sl
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
