package status

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/seed6eee2ec7/crystalball/live"
	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/report"
	"github.com/seed6eee2ec7/crystalball/snapshot"
	"github.com/seed6eee2ec7/crystalball/steering"
	"github.com/seed6eee2ec7/crystalball/webview"
)

// The formats of the JSON documents the server writes, in their "format"
// field. The number is bumped when a field changes meaning or goes away.
const (
	StatusFormat = "crystalball-status/1"
	GatherFormat = "crystalball-gather/1"
	ErrorFormat  = "crystalball-error/1"
)

// Defaults of the Config fields left zero.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
)

// Runtime is the live node the server reports on and acts through; a
// *live.Runtime is one.
type Runtime interface {
	// Status is the runtime's state and counters.
	Status() live.Status
	// Do runs fn on the node's core goroutine and sends what it returns;
	// it fails if the runtime is not running.
	Do(ctx context.Context, fn func(now time.Time) []node.Envelope) error
}

// Snapshots is the node's snapshot manager; a *snapshot.Layer is one.
type Snapshots interface {
	// Status is the manager's state and counters at now.
	Status(now time.Time) snapshot.LayerStatus
	// Last is the last snapshot gathered, nil before the first.
	Last() *snapshot.Snapshot
	// Gather starts a neighbourhood snapshot at now and returns the
	// messages to send; the server calls it on the core goroutine
	// (Runtime.Do). It fails with snapshot.ErrGatherInProgress while
	// another runs.
	Gather(now time.Time) ([]node.Envelope, error)
}

// Steering is the node's steering layer; a *steering.Layer is one.
type Steering interface {
	// Status is the layer's mode and counters.
	Status() steering.LayerStatus
}

// Reports is the node's report writer; a *report.Writer is one.
type Reports interface {
	// Stats returns its counters; safe from any goroutine.
	Stats() report.WriterStats
}

// Config configures a Server. Runtime is required; a nil Snapshots or
// Steering (a nil pointer too) means the node runs without that layer.
type Config struct {
	Runtime   Runtime
	Snapshots Snapshots
	Steering  Steering
	// Timings, when non-nil, adds the steering histograms to /metrics.
	Timings *Timings
	// Options describes the service's configuration in /status.
	Options string
	// Properties are the service's properties: with Steering, every
	// property has a crystalball_steering_predicted_total sample labelled
	// with its kind, 0 until a violation (safety) or a dead end
	// (liveness) of it is predicted.
	Properties []node.Property
	// Spec is the node's service. With Snapshots and no SnapshotDoc, GET
	// /snapshot renders the snapshot as a report.Snapshot for it; nil
	// Properties are its properties.
	Spec node.Spec
	// SnapshotDoc, when set, renders a gathered snapshot as GET
	// /snapshot's JSON body instead of report.NewSnapshot. With Snapshots,
	// Spec or SnapshotDoc is required.
	SnapshotDoc func(s *snapshot.Snapshot, now time.Time) (any, error)
	// Started is when the node started, for uptime (zero: when New runs).
	Started time.Time
	// Reports, when set, adds the report writer's counters to /metrics
	// (crystalball_reports_*); a *report.Writer is one.
	Reports Reports
	// Limits bound what a client may cost the server.
	Limits
	// Access is who may call the server.
	Access
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Limits bound what one client, and all of them, may cost a Server: its
// requests' time and size and its connections. Zero fields take the
// defaults documented on each; negative is an error.
type Limits struct {
	// ReadHeaderTimeout and IdleTimeout bound a client's request headers
	// and its idle keep-alive connections (zero: the defaults above).
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	// MaxHeaderBytes bounds a request's headers, in bytes (zero:
	// DefaultMaxHeaderBytes; negative is an error).
	MaxHeaderBytes int
	// ReadTimeout bounds the reading of a whole request, body included,
	// and WriteTimeout the writing of a response (zero:
	// DefaultReadTimeout, DefaultWriteTimeout).
	ReadTimeout, WriteTimeout time.Duration
	// MaxBodyBytes bounds a request's body: a larger one is answered 413
	// (zero: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxConns bounds the connections open at once; Serve closes one
	// accepted beyond it at once (zero: DefaultMaxConns).
	MaxConns int
	// MaxConnsPerClient bounds the connections open at once from one
	// client address (zero: DefaultMaxConnsPerClient).
	MaxConnsPerClient int
}

// Access is who may call a Server and by which names.
type Access struct {
	// Token, when set, is the bearer token POST requests must carry
	// ("Authorization: Bearer <token>"); at most MaxTokenLen bytes. Zero
	// ("") allows POST from loopback clients only. GET needs neither.
	Token string
	// AllowedHosts are the host names (without port) the server answers
	// to besides IP literals and localhost: a request with another Host
	// is refused (421), which defeats DNS rebinding (see hosts.go). Zero
	// (empty) means none: name the node by its address.
	AllowedHosts []string
}

// StatusDoc is the JSON body of GET /status.
type StatusDoc struct {
	// Format is StatusFormat.
	Format string `json:"format"`
	live.Status
	Options       string  `json:"options"`
	UptimeSeconds float64 `json:"uptime_seconds"`
	// Snapshots is the snapshot manager's status (absent without one).
	Snapshots *snapshot.LayerStatus `json:"snapshots,omitempty"`
	// Steering is the steering layer's mode and counters (absent without
	// one).
	Steering *steering.LayerStatus `json:"steering,omitempty"`
	// Reports is the report writer's (absent without --reports).
	Reports *ReportsDoc `json:"reports,omitempty"`
}

// GatherStarted is the JSON body of a successful POST /snapshot.
type GatherStarted struct {
	// Format is GatherFormat.
	Format string `json:"format"`
	// Started is the gather's start time: the snapshot it produces has
	// this start time in GET /snapshot.
	Started time.Time `json:"started"`
}

// ErrorDoc is the JSON body of a failed request.
type ErrorDoc struct {
	// Format is ErrorFormat.
	Format string `json:"format"`
	Error  string `json:"error"`
}

// Server serves a node's status endpoints (see the package comment).
type Server struct {
	cfg   Config
	reg   *prometheus.Registry
	srv   *http.Server
	http  httpCounters
	conns *connTable
}

// New checks cfg, fills its defaults and builds the server and its metrics
// registry. It does not listen: call Serve, or mount Handler elsewhere.
func New(cfg Config) (*Server, error) {
	if isNil(cfg.Runtime) {
		return nil, errors.New("status: Config.Runtime is required")
	}
	if isNil(cfg.Snapshots) {
		cfg.Snapshots = nil
	}
	if isNil(cfg.Steering) {
		cfg.Steering = nil
	}
	if cfg.Properties == nil {
		cfg.Properties = cfg.Spec.Properties
	}
	if cfg.Snapshots != nil && cfg.SnapshotDoc == nil {
		if cfg.Spec.New == nil {
			return nil, errors.New("status: Config.Spec (or Config.SnapshotDoc) is required with Config.Snapshots: GET /snapshot decodes the checkpoints with it")
		}
		spec := cfg.Spec
		cfg.SnapshotDoc = func(s *snapshot.Snapshot, now time.Time) (any, error) { return report.NewSnapshot(s, spec, now) }
	}
	if cfg.MaxHeaderBytes < 0 {
		return nil, fmt.Errorf("status: Config.MaxHeaderBytes is %d; want a positive size or 0 for the default", cfg.MaxHeaderBytes)
	}
	if len(cfg.Token) > MaxTokenLen || strings.ContainsAny(cfg.Token, " \t\r\n") {
		return nil, fmt.Errorf("status: Config.Token must be at most %d bytes without whitespace", MaxTokenLen)
	}
	if cfg.ReadHeaderTimeout < 0 || cfg.IdleTimeout < 0 || cfg.ReadTimeout < 0 || cfg.WriteTimeout < 0 {
		return nil, fmt.Errorf("status: negative timeout (read header %v, read %v, write %v, idle %v)", cfg.ReadHeaderTimeout, cfg.ReadTimeout, cfg.WriteTimeout, cfg.IdleTimeout)
	}
	if cfg.MaxBodyBytes < 0 || cfg.MaxConns < 0 || cfg.MaxConnsPerClient < 0 {
		return nil, fmt.Errorf("status: negative bound (body %d bytes, %d connections, %d per client)", cfg.MaxBodyBytes, cfg.MaxConns, cfg.MaxConnsPerClient)
	}
	if err := checkAllowedHosts(cfg.AllowedHosts); err != nil {
		return nil, err
	}
	if isNil(cfg.Reports) {
		cfg.Reports = nil
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Started.IsZero() {
		cfg.Started = cfg.Now()
	}
	if cfg.ReadHeaderTimeout == 0 {
		cfg.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxHeaderBytes == 0 {
		cfg.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	cfg.ReadTimeout = cmp.Or(cfg.ReadTimeout, DefaultReadTimeout)
	cfg.WriteTimeout = cmp.Or(cfg.WriteTimeout, DefaultWriteTimeout)
	cfg.MaxBodyBytes = cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes)
	cfg.MaxConns = cmp.Or(cfg.MaxConns, DefaultMaxConns)
	cfg.MaxConnsPerClient = cmp.Or(cfg.MaxConnsPerClient, min(DefaultMaxConnsPerClient, cfg.MaxConns))
	s := &Server{cfg: cfg, reg: prometheus.NewRegistry()}
	cs := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		newNodeCollector(cfg),
		newHTTPCollector(&s.http),
	}
	if cfg.Reports != nil {
		cs = append(cs, newReportsCollector(cfg.Reports))
	}
	if cfg.Snapshots != nil {
		cs = append(cs, newSnapshotCollector(cfg))
	}
	if cfg.Steering != nil {
		cs = append(cs, newSteeringCollector(cfg))
	}
	if cfg.Timings != nil {
		cs = append(cs, cfg.Timings.collectors()...)
	}
	for _, c := range cs {
		if err := s.reg.Register(c); err != nil {
			return nil, fmt.Errorf("status: registering metrics: %w", err)
		}
	}
	s.conns = newConnTable(cfg.MaxConns, cfg.MaxConnsPerClient, &s.http)
	s.srv = &http.Server{Handler: s.guardHosts(s.Handler()), ReadHeaderTimeout: cfg.ReadHeaderTimeout, IdleTimeout: cfg.IdleTimeout,
		ReadTimeout: cfg.ReadTimeout, WriteTimeout: cfg.WriteTimeout, MaxHeaderBytes: cfg.MaxHeaderBytes,
		ConnState: s.conns.state}
	return s, nil
}

// isNil reports whether v is nil or a nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}

// Registry is the server's metrics registry (not the global one): a caller
// may register collectors of its own on it.
func (s *Server) Registry() *prometheus.Registry { return s.reg }

// Handler returns a fresh handler of the server's endpoints, with the
// body bound (Config.MaxBodyBytes). Serve adds the Host and Origin rules
// (hosts.go) around it; a caller mounting Handler elsewhere applies its
// own.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", s.getStatus)
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{Registry: s.reg}))
	mux.HandleFunc("GET /snapshot", s.getSnapshot)
	mux.HandleFunc("POST /snapshot", s.guard(s.postSnapshot))
	mux.Handle("GET /ui", webview.Live()) // the page polls GET /status
	mux.HandleFunc("GET /reports/{name}", s.getReport)
	return limitBody(s.cfg.MaxBodyBytes, &s.http, mux)
}

// Serve accepts connections on ln until Shutdown, then returns nil; any
// other end is an error. It takes ln over (Shutdown closes it). While
// Config.MaxConns are open, a new connection closes the one idle the
// longest, and is closed itself only if none is idle; a client past
// Config.MaxConnsPerClient is closed at once (limits.go).
func (s *Server) Serve(ln net.Listener) error {
	ln = &limitListener{Listener: ln, t: s.conns}
	if err := s.srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("status: %w", err)
	}
	return nil
}

// Shutdown stops the server: it closes the listeners, then waits for the
// requests in progress until ctx ends, and closes what remains.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, s.srv.Close())
		return fmt.Errorf("status: shutdown: %w", err)
	}
	return nil
}

func (s *Server) getStatus(w http.ResponseWriter, r *http.Request) {
	now := s.cfg.Now()
	out := StatusDoc{Format: StatusFormat, Status: s.cfg.Runtime.Status(), Options: s.cfg.Options,
		UptimeSeconds: now.Sub(s.cfg.Started).Seconds()}
	if s.cfg.Snapshots != nil {
		st := s.cfg.Snapshots.Status(now)
		out.Snapshots = &st
	}
	if s.cfg.Steering != nil {
		st := s.cfg.Steering.Status()
		out.Steering = &st
	}
	out.Reports = s.reportsDoc()
	writeJSON(w, http.StatusOK, out)
}

// snapshotsOff answers 404 when the node has no snapshot manager.
func (s *Server) snapshotsOff(w http.ResponseWriter) bool {
	if s.cfg.Snapshots == nil {
		writeError(w, http.StatusNotFound, "snapshots are off (--snapshots 0)")
		return true
	}
	return false
}

func (s *Server) getSnapshot(w http.ResponseWriter, r *http.Request) {
	if s.snapshotsOff(w) {
		return
	}
	snap := s.cfg.Snapshots.Last()
	if snap == nil {
		writeError(w, http.StatusNotFound, "no snapshot gathered yet")
		return
	}
	doc, err := s.cfg.SnapshotDoc(snap, s.cfg.Now())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, doc)
}

// postSnapshot starts a gather on the core goroutine: 202 with its start
// time, 409 while another is in progress, 503 if the node cannot gather.
func (s *Server) postSnapshot(w http.ResponseWriter, r *http.Request) {
	if s.snapshotsOff(w) {
		return
	}
	var at time.Time
	var gerr error
	err := s.cfg.Runtime.Do(r.Context(), func(now time.Time) []node.Envelope {
		out, err := s.cfg.Snapshots.Gather(now)
		at, gerr = now, err
		return out
	})
	switch {
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(gerr, snapshot.ErrGatherInProgress):
		writeError(w, http.StatusConflict, gerr.Error())
	case gerr != nil:
		writeError(w, http.StatusServiceUnavailable, gerr.Error())
	default:
		writeJSON(w, http.StatusAccepted, GatherStarted{Format: GatherFormat, Started: at.Round(0)})
	}
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, ErrorDoc{Format: ErrorFormat, Error: msg})
}

// writeJSON writes v indented with code, or a 500 ErrorDoc if v does not
// encode (the caller's snapshot document might not).
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		code = http.StatusInternalServerError
		b, _ = json.Marshal(ErrorDoc{Format: ErrorFormat, Error: "status: encoding the response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}
