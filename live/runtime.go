package live

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"

	"github.com/hashicorp/memberlist"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
)

// Runtime errors.
var (
	// ErrNotRunning: Submit on a runtime that was not started or has been
	// stopped.
	ErrNotRunning = errors.New("live: runtime not running")
	// ErrRuntimeStarted is returned by a second Start.
	ErrRuntimeStarted = errors.New("live: runtime already started")
)

// Runtime is the live shell around a Core: it runs one node of a service
// over real TCP, wall-clock timers and memberlist, with the Layers of its
// configuration (a snapshot manager) beside the core.
//
// Concurrency: exactly one goroutine (the core goroutine, started by Start)
// owns the Core and the layers. It takes inbound envelopes and transport
// errors from the transport, application calls from Submit, functions from
// Do, expiries of its own wall-clock timers (the service's, the layers' and
// those of events a layer postponed), layers' wake-ups (RuntimeHost.Wake) and
// status requests, one at a time, and steps the core in dispatch.
// Everything else (accepting, dialling, reading, writing, memberlist) runs
// on other goroutines that talk to it over channels. All exported methods
// are safe for concurrent use.
type Runtime struct {
	cfg    RuntimeConfig
	spec   node.Spec
	reg    *node.Registry // the wire: the service's messages and the layers'
	svcReg *node.Registry // the service's messages (application calls)
	log    *zap.Logger
	core   *node.Core // owned by the core goroutine once started
	stats  counters
	dir    *directory
	// pipe runs the layers around the core (layer.Pipeline): the layer
	// dispatch, verdicts and postponed events. Owned by the core goroutine.
	pipe *layer.Pipeline
	// layerTypes names the layers' message types, which the service never
	// sees and the counters account separately.
	layerTypes map[string]bool

	ctx    context.Context // cancelled by Stop
	cancel context.CancelFunc
	wg     sync.WaitGroup
	events chan netEvent
	appc   chan node.Message
	statc  chan chan Status
	doc    chan doRequest
	tr     *transport
	ml     *memberlist.Memberlist
	// prover proves members on the service transport (membership_prove.go).
	prover *prover

	// life serialises Start and Stop, so a Stop that races a Start waits
	// for it and then releases what it acquired.
	life sync.Mutex

	mu        sync.Mutex // guards the fields below
	state     int        // runNew, runRunning, runStopped
	bootstrap []node.ID
	addr      string
	gossip    string
	last      Status // the core goroutine's final status, after Stop

	// Owned by the core goroutine.
	timers map[string]time.Time
	selfq  []node.Envelope
	failq  []node.ID
	// refq holds the refused TrySends whose EventSendRefused is still to
	// be stepped, drained before anything else; refNew those the step
	// being carried out refused, which go ahead of refq (see drain).
	refq, refNew []node.Envelope
	// refChain counts the EventSendRefused stepped in a row with no other
	// event between (see maxRefusalChain); refChainLogged is set once its
	// overflow was logged.
	refChain       int
	refChainLogged bool
	// wake is RuntimeHost.Wake's signal to the core goroutine.
	wake chan struct{}
	// wa is the write-ahead state (runtime_durable.go); failed is set by
	// the core goroutine when the store failed, and ends it.
	wa     writeAhead
	failed bool
	// done is closed once the runtime has stopped (Done); err says why,
	// when it stopped by itself (Err; guarded by mu).
	done     chan struct{}
	doneOnce sync.Once
	err      error
}

// layerHost is the RuntimeHost a Runtime gives its layers.
type layerHost struct{ r *Runtime }

var _ layer.RuntimeHost = layerHost{}

func (h layerHost) ID() node.ID                 { return h.r.cfg.ID }
func (h layerHost) Checkpoint() ([]byte, error) { return h.r.core.Checkpoint() }
func (h layerHost) Service() node.Service       { return h.r.core.Service() }
func (h layerHost) Core() *node.Core            { return h.r.core }

// CheckCheckpoint checks a peer's checkpoint as the node's service's
// (snapshot.CheckpointChecker): a member that answers with bytes that do
// not decode is left out of the snapshot.
func (h layerHost) CheckCheckpoint(b []byte) error { return h.r.core.CheckCheckpoint(b) }

// CatchUpWitness vouches for peer's checkpoint numbers
// (snapshot.WitnessHost): with TLS a peer is authenticated, and vouches by
// its ID; without, only a member whose address memberlist (or a join
// probe) confirmed — which admits a member only once it answered a hello
// as itself at that address (membership_admit.go) — vouches, by that
// address, so IDs that are only claimed in hellos, and IDs sharing one
// address, vouch for nothing more than one.
func (h layerHost) CatchUpWitness(peer node.ID) (string, bool) {
	if h.r.cfg.TLS != nil {
		return peer.String(), true
	}
	addr, ok := h.r.dir.confirmed(peer)
	return "addr:" + addr, ok
}

// KnowsPeer reports whether the directory holds an address for peer
// (snapshot.PeerDirectory): a member memberlist confirmed, or one whose
// hello is recent. The snapshot layer sends nothing to others, so a
// Request naming IDs nobody runs costs no dial.
func (h layerHost) KnowsPeer(peer node.ID) bool { return h.r.dir.knows(peer) }

func (h layerHost) Wake() {
	select {
	case h.r.wake <- struct{}{}:
	default: // a wake-up is pending already
	}
}

// doRequest is a function for the core goroutine (Do).
type doRequest struct {
	fn   func(now time.Time) []node.Envelope
	done chan struct{}
}

const (
	runNew = iota
	runRunning
	runStopped
)

// NewRuntime fills cfg's zero fields with their defaults (see
// RuntimeConfig), validates cfg and spec, registers the layers' message
// types beside the service's and attaches the layers to the node's core,
// and returns a runtime that is not yet started.
func NewRuntime(cfg RuntimeConfig, spec node.Spec) (*Runtime, error) {
	cfg = cfg.withDefaults()
	svcReg, core, err := newCore(cfg, spec)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger.With(zap.Stringer("node", cfg.ID))
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runtime{
		cfg: cfg, spec: spec, svcReg: svcReg, log: log, core: core, dir: newDirectory(),
		ctx: ctx, cancel: cancel,
		events: make(chan netEvent, cfg.Transport.InboxLen),
		appc:   make(chan node.Message, 64),
		statc:  make(chan chan Status),
		doc:    make(chan doRequest),
		timers: make(map[string]time.Time),
		wake:   make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
	if err := r.attachLayers(); err != nil {
		cancel()
		return nil, err
	}
	r.tr = newTransport(ctx, cfg, r.reg, log, r.dir, &r.stats, r.events, &r.wg)
	r.prover = newProver(ctx, &r.wg, r.tr.probe)
	return r, nil
}

// newCore validates cfg (defaults filled in) and spec and creates the
// node's core, with the registry of the service's messages; a durable
// service needs a store or Ephemeral (requireDurability).
func newCore(cfg RuntimeConfig, spec node.Spec) (*node.Registry, *node.Core, error) {
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, nil, err
	}
	svcReg, err := spec.Registry()
	if err != nil {
		return nil, nil, err
	}
	core, err := node.NewCore(node.CoreConfig{ID: cfg.ID, Factory: spec.New, Seed: cfg.Seed, Logger: slog.New(zapslog.NewHandler(cfg.Logger.Core()))})
	if err != nil {
		return nil, nil, err
	}
	if err := requireDurability(cfg, spec, core); err != nil {
		return nil, nil, err
	}
	return svcReg, core, nil
}

// requireDurability refuses a durable service (node.Durable) without a
// store, unless the configuration says it may forget (Ephemeral).
func requireDurability(cfg RuntimeConfig, spec node.Spec, core *node.Core) error {
	if core.IsDurable() && !cfg.Durability.persists() && !cfg.Durability.Ephemeral {
		return fmt.Errorf("%w: service %q must find what it promised after a crash (a Paxos acceptor its promises): "+
			"give RuntimeConfig.Durability.DataDir (crystalball node --data-dir) to keep it on disk, or Durability.Ephemeral (--ephemeral) "+
			"to run without, knowing that a restarted node forgets what it promised", ErrDurableRequired, spec.Name)
	}
	return nil
}

// attachLayers builds the layer pipeline around the core, which collects
// the layers' message types and attaches the layers, and the wire
// registry of the service's messages and the layers'.
func (r *Runtime) attachLayers() error {
	var err error
	r.pipe, err = layer.NewPipeline(layer.PipelineConfig{Core: r.core, Layers: r.cfg.Layers, Host: layerHost{r}, Persist: r.cfg.Durability.persists()})
	if err != nil {
		return fmt.Errorf("live: %w", err)
	}
	r.layerTypes = map[string]bool{}
	for _, m := range r.pipe.Messages() {
		r.layerTypes[m.MessageType()] = true
	}
	r.reg, err = node.NewRegistry(append(slices.Clone(r.spec.Messages), r.pipe.Messages()...)...)
	if err != nil {
		return fmt.Errorf("live: service %q with its layers: %w", r.spec.Name, err)
	}
	return nil
}

// Start binds the service listener, starts memberlist, joins the cluster
// through cfg.Join (probing each address for its node ID and gossip
// address, retrying until JoinTimeout), and starts the core goroutine,
// which steps the core with EventInit. It returns once the node serves.
// If no Join address answers, Start fails and releases everything it
// acquired. ctx bounds only the start-up; Stop ends the runtime. Start may
// be called once.
func (r *Runtime) Start(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	r.mu.Lock()
	if r.state != runNew {
		r.mu.Unlock()
		return ErrRuntimeStarted
	}
	r.state = runRunning
	r.mu.Unlock()
	if err := r.start(ctx); err != nil {
		r.shutdown(context.Background())
		return err
	}
	return nil
}

func (r *Runtime) start(ctx context.Context) error {
	if err := r.openStore(); err != nil {
		return err
	}
	if err := r.tr.listen(); err != nil {
		return err
	}
	addr := cmp.Or(r.cfg.Advertise, r.tr.ln.Addr().String())
	gossip, err := r.startGossip(addr)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.addr, r.gossip = addr, gossip
	r.mu.Unlock()
	r.tr.serviceAddr, r.tr.gossipAddr = addr, gossip
	r.tr.serve()
	if err := r.join(ctx); err != nil {
		return err
	}
	r.wg.Add(1)
	go r.run()
	r.log.Info("live: started", zap.String("service", r.spec.Name), zap.String("addr", addr), zap.String("gossip", gossip),
		zap.Stringers("bootstrap", r.Bootstrap()))
	return nil
}

// startGossip creates memberlist, its delegate publishing the service
// address addr, and lets the prover push/pull through it; it returns
// memberlist's advertised address.
func (r *Runtime) startGossip(addr string) (string, error) {
	d := &membership{self: r.cfg.ID, meta: encodeMeta(r.cfg.ID, addr), dir: r.dir, log: r.log,
		onDead: func(id node.ID) { r.tr.closePeer(id, errPeerDead, true) }, logSuppressed: &r.stats.logSuppressed,
		prover: r.prover, keyed: r.cfg.Gossip.encrypted()}
	mc, err := memberlistConfig(r.cfg, d, r.log)
	if err != nil {
		return "", err
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		return "", fmt.Errorf("live: start memberlist: %w", err)
	}
	r.ml = ml
	r.prover.setPushPull(func(gossip string) error {
		_, err := ml.Join([]string{gossip})
		if err != nil {
			r.log.Debug("live: push/pull with a proved member failed", zap.String("gossip", gossip), zap.Error(err))
		}
		return err
	})
	return ml.LocalNode().Address(), nil
}

// join probes the Join addresses and joins memberlist through them.
func (r *Runtime) join(ctx context.Context) error {
	if len(r.cfg.Join) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.cfg.JoinTimeout)
	defer cancel()
	var lastErr error
	began, warned := time.Now(), time.Now()
	for {
		r.warnSlowJoin(&warned, began, lastErr)
		done, err := r.joinRound(ctx)
		if done {
			return nil
		}
		if err != nil {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("live: join %v: %w (last error: %w)%s", r.cfg.Join, ctx.Err(), lastErr, r.joinHint(lastErr))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// warnSlowJoin logs why a long join waits (a peer at its connection
// limit, a TLS mismatch), a few times a minute (joinWarnEvery since
// *warned, which it advances).
func (r *Runtime) warnSlowJoin(warned *time.Time, began time.Time, lastErr error) {
	if lastErr == nil || time.Since(*warned) < joinWarnEvery {
		return
	}
	*warned = time.Now()
	r.log.Warn("live: join: no join address answered yet; retrying", zap.Strings("join", r.cfg.Join),
		zap.Duration("for", time.Since(began).Round(time.Second)), zap.Error(lastErr))
}

// joinRound probes every Join address once (probeJoin) and joins
// memberlist through those that answered, recording their IDs as the
// bootstrap; done once it joined, else err says why not (nil when nothing
// failed).
func (r *Runtime) joinRound(ctx context.Context) (done bool, err error) {
	ids, gossip, err := r.probeJoin(ctx)
	if len(ids) == 0 {
		return false, err
	}
	n, err := r.ml.Join(gossip)
	if err != nil && n <= 0 {
		return false, fmt.Errorf("live: memberlist join: %w", err)
	}
	r.mu.Lock()
	r.bootstrap = ids
	r.mu.Unlock()
	return true, nil
}

// probeJoin probes every Join address once, learning the ID and gossip
// address of each that answers; lastErr is the last probe's failure.
func (r *Runtime) probeJoin(ctx context.Context) (ids []node.ID, gossip []string, lastErr error) {
	for _, a := range r.cfg.Join {
		h, err := r.probeJoinAddr(ctx, a)
		if err != nil {
			lastErr = err
			continue
		}
		r.dir.learn(h.id, a, h.gossip)
		r.prover.record(h.id, a)
		ids = append(ids, h.id)
		if h.gossip != "" {
			gossip = append(gossip, h.gossip)
		}
	}
	return ids, gossip, lastErr
}

// probeJoinAddr probes one Join address for its hello, which must be
// another node's.
func (r *Runtime) probeJoinAddr(ctx context.Context, a string) (hello, error) {
	h, err := r.tr.probe(ctx, a)
	if err != nil {
		r.log.Debug("live: join probe failed", zap.String("addr", a), zap.Error(err))
		return h, err
	}
	if h.id == r.cfg.ID {
		return h, fmt.Errorf("live: join address %s is this node's own ID %v", a, h.id)
	}
	return h, nil
}

// joinWarnEvery is how often a join that keeps failing logs why.
const joinWarnEvery = 5 * time.Second

// joinHint says what a failed join's last error may mean when it does not
// say it itself: a node without TLS whose probes go unanswered or are cut
// is most often talking to a cluster that requires mutual TLS (the peer's
// handshake waits for a ClientHello the node never sends, or rejects the
// plaintext hello).
func (r *Runtime) joinHint(last error) string {
	if r.cfg.TLS != nil || last == nil {
		return ""
	}
	if isAnyOf(last, context.DeadlineExceeded, io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, os.ErrDeadlineExceeded) {
		return "; this node has no TLS configured: if the cluster uses mutual TLS, give it the cluster's certificate, key and CA (RuntimeConfig.TLS; the CLI's --tls-cert, --tls-key and --tls-ca)"
	}
	return ""
}

// Stop shuts the node down gracefully: it leaves memberlist (so peers learn
// of the departure at once), stops the core goroutine, closes the listener
// and every connection (queued, unsent messages are dropped), and waits
// for every goroutine the runtime started. If ctx ends first, Stop returns
// its error; the goroutines still end shortly after. One goroutine is not
// the runtime's to wait for: memberlist (v0.7.0) does not join a
// failure-detector probe in progress when it shuts down, so that probe may
// outlive Stop by up to one probe interval — 1s with the defaults, which
// memberlist stretches up to 8s while its probes fail — before it ends by
// itself; a leak check right after Stop must allow for it (package
// livetest does). Stop on a runtime that is not running returns
// nil. A Stop concurrent with Start waits for Start to return first.
func (r *Runtime) Stop(ctx context.Context) error {
	r.life.Lock()
	defer r.life.Unlock()
	r.mu.Lock()
	if r.state != runRunning {
		r.mu.Unlock()
		return nil
	}
	r.state = runStopped
	r.mu.Unlock()
	r.log.Info("live: stopping")
	return r.shutdown(ctx)
}

func (r *Runtime) shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.state = runStopped
	r.mu.Unlock()
	r.leaveGossip()
	r.cancel()
	r.tr.shutdown()
	done := make(chan struct{})
	go func() {
		r.release()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("live: stop: %w", ctx.Err())
	}
}

// leaveGossip leaves memberlist (so peers learn of the departure at once)
// and shuts it down, if it was started.
func (r *Runtime) leaveGossip() {
	if r.ml == nil {
		return
	}
	if err := r.ml.Leave(r.cfg.Gossip.LeaveTimeout); err != nil {
		r.log.Info("live: memberlist leave", zap.Error(err))
	}
	if err := r.ml.Shutdown(); err != nil {
		r.log.Info("live: memberlist shutdown", zap.Error(err))
	}
}

// release waits for the runtime's goroutines, then closes the store —
// the core goroutine, its only user, has ended — and Done.
func (r *Runtime) release() {
	r.wg.Wait()
	if r.wa.store != nil {
		if err := r.wa.store.Close(); err != nil {
			r.log.Error("live: close the store", zap.Error(err))
		}
	}
	r.doneOnce.Do(func() { close(r.done) })
}

// Submit hands an application call (a registered message, e.g.
// randtree.JoinOverlay) to the core goroutine, which runs the service's
// HandleApp. It blocks only while the call queue (64 calls) is full, and
// returns ErrNotRunning before Start and after Stop.
func (r *Runtime) Submit(call node.Message) error {
	if call == nil {
		return errors.New("live: Submit: nil call")
	}
	if err := r.svcReg.CheckMessage(call); err != nil {
		return fmt.Errorf("live: Submit: %w", err)
	}
	r.mu.Lock()
	running := r.state == runRunning
	r.mu.Unlock()
	if !running {
		return ErrNotRunning
	}
	select {
	case r.appc <- call:
		return nil
	case <-r.ctx.Done():
		return ErrNotRunning
	}
}

// Do runs fn on the core goroutine, between two events, with the current
// time, and sends the envelopes it returns as a layer's own messages (on
// the runtime's connections, not passed through Layer.Sending: they must
// be complete, CN included). It is how code outside the runtime calls a
// layer's methods that are reserved to the core goroutine, such as
// snapshot.Layer.Gather. fn must not block nor call the runtime; the
// returned slice is read before Do returns. Do waits until fn has run and
// its sends are queued, and returns ErrNotRunning before Start and after
// Stop (fn then does not run), or ctx's error if ctx ends before the core
// goroutine takes fn.
func (r *Runtime) Do(ctx context.Context, fn func(now time.Time) []node.Envelope) error {
	if fn == nil {
		return errors.New("live: Do: nil function")
	}
	r.mu.Lock()
	running := r.state == runRunning
	r.mu.Unlock()
	if !running {
		return ErrNotRunning
	}
	req := doRequest{fn: fn, done: make(chan struct{})}
	select {
	case r.doc <- req:
	case <-r.ctx.Done():
		return ErrNotRunning
	case <-ctx.Done():
		return fmt.Errorf("live: Do: %w", ctx.Err())
	}
	// Once taken, fn runs to completion: the core goroutine checks for
	// Stop only between requests.
	<-req.done
	return nil
}

// ID returns the node's ID.
func (r *Runtime) ID() node.ID { return r.cfg.ID }

// Done is closed once the runtime has stopped and released everything:
// after Stop, or after it stopped by itself (Err says why).
func (r *Runtime) Done() <-chan struct{} { return r.done }

// Err returns why the runtime stopped by itself (an error wrapping
// ErrStoreFailed), or nil.
func (r *Runtime) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Addr returns the service address peers dial (the advertised address, or
// the one the listener bound); "" before Start.
func (r *Runtime) Addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

// GossipAddr returns memberlist's advertised address; "" before Start.
func (r *Runtime) GossipAddr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.gossip
}

// Bootstrap returns the node IDs behind cfg.Join, in Join order, learned
// by Start from their handshakes (nil for a node that started a cluster).
// The application passes them to the service's join call.
func (r *Runtime) Bootstrap() []node.ID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.bootstrap)
}

// Counters are the runtime's statistics since Start.
type Counters struct {
	// MessagesIn counts envelopes received and decoded from peers.
	MessagesIn uint64 `json:"messages_in"`
	// MessagesOut counts envelopes written to peers' connections.
	MessagesOut uint64 `json:"messages_out"`
	// TransportErrors counts transport errors delivered to the service.
	TransportErrors uint64 `json:"transport_errors"`
	// FramesRejected counts connections closed because of what the peer
	// sent: bad or oversized frames, failed checksums, undecodable
	// envelopes, unknown message types, failed handshakes.
	FramesRejected uint64 `json:"frames_rejected"`
	// ConnsDialed and ConnsAccepted count connections established.
	ConnsDialed   uint64 `json:"conns_dialed"`
	ConnsAccepted uint64 `json:"conns_accepted"`
	// DialFailures counts outbound connections that failed to resolve,
	// dial or handshake.
	DialFailures uint64 `json:"dial_failures"`
	// BytesIn counts frame bytes (headers included) received in
	// envelopes, BytesOut those written to peers' connections.
	BytesIn  uint64 `json:"bytes_in"`
	BytesOut uint64 `json:"bytes_out"`
	// LayerMessagesIn and LayerBytesIn count the envelopes of the layers'
	// own message types (snapshot protocol traffic) among those received,
	// LayerMessagesOut and LayerBytesOut those queued for peers. Frame
	// bytes, headers included; messages to self are not counted.
	LayerMessagesIn  uint64 `json:"layer_messages_in"`
	LayerBytesIn     uint64 `json:"layer_bytes_in"`
	LayerMessagesOut uint64 `json:"layer_messages_out"`
	LayerBytesOut    uint64 `json:"layer_bytes_out"`
	// DatagramsQueued counts the service's datagrams (Env.SendDatagram)
	// queued on peers' connections (then written, or lost with the
	// connection); DatagramsDropped those dropped before that: peer
	// unreachable, queue full, unencodable or oversized. Datagrams to
	// self are not counted. Both are also in MessagesOut/BytesOut once
	// written.
	DatagramsQueued  uint64 `json:"datagrams_queued,omitempty"`
	DatagramsDropped uint64 `json:"datagrams_dropped,omitempty"`
	// SendsRefused counts the service's TrySends (node.Env.TrySend) the
	// transport refused because the peer's write queue was over its bound
	// (RuntimeConfig.Transport.TrySendQueueBytes), each stepped as
	// node.EventSendRefused. TrySends to self are never refused.
	SendsRefused uint64 `json:"sends_refused,omitempty"`
	// SendQueueBytes is not a counter but a gauge: the frame bytes
	// waiting in the outbound connections' write queues now (queued and
	// not yet taken by the connection's writer into its buffer), every
	// kind of send included.
	SendQueueBytes uint64 `json:"send_queue_bytes,omitempty"`
	// ConnsRefused counts inbound connections closed at once because
	// MaxInboundConns or MaxInboundConnsPerHost was reached;
	// HelloConflicts hellos refused with ErrIdentityConflict.
	ConnsRefused   uint64 `json:"conns_refused,omitempty"`
	HelloConflicts uint64 `json:"hello_conflicts,omitempty"`
	// LogLinesSuppressed counts the log lines peers cause that their
	// rate limits dropped: memberlist's warn and error lines (10 a
	// second), the transport's warnings about what peers sent (10 a
	// second) and its lines about closed connections (20 a second).
	LogLinesSuppressed uint64 `json:"log_lines_suppressed,omitempty"`
	// DialsRefused counts sends to a peer without a known address
	// refused at once (a transport error for the sender) because 64
	// connections already waited for their peers' addresses.
	DialsRefused uint64 `json:"dials_refused,omitempty"`
	// ConnsEvicted counts inbound connections of unconfirmed peers
	// (an ID only a hello claimed, without TLS) closed to make room for
	// a new connection under MaxInboundConns or MaxInboundConnsPerHost.
	ConnsEvicted uint64 `json:"conns_evicted,omitempty"`
	// MembersUnproven counts the gossip about members refused because
	// they had not proved themselves on the service transport yet;
	// MemberProofs and MemberProofFailures the proofs (a dial and a hello
	// at the member's service address) that succeeded and failed;
	// MemberPushPulls the state exchanges with a member proved after its
	// gossip was refused (which admit it without waiting for
	// memberlist's next push/pull).
	MembersUnproven     uint64 `json:"members_unproven,omitempty"`
	MemberProofs        uint64 `json:"member_proofs,omitempty"`
	MemberProofFailures uint64 `json:"member_proof_failures,omitempty"`
	MemberPushPulls     uint64 `json:"member_push_pulls,omitempty"`
	// DurableCommits counts the store writes (each synced) of the
	// node's durable records; DurableRecords and DurableBytes the records
	// and their bytes written; DurableSyncNanos the time spent in those
	// writes (see runtime_durable.go: one commit serves a batch of steps).
	DurableCommits   uint64 `json:"durable_commits,omitempty"`
	DurableRecords   uint64 `json:"durable_records,omitempty"`
	DurableBytes     uint64 `json:"durable_bytes,omitempty"`
	DurableSyncNanos uint64 `json:"durable_sync_nanos,omitempty"`
}

// Status is a read-only, JSON-friendly picture of a node.
type Status struct {
	// ID is the node's ID.
	ID node.ID `json:"id"`
	// Service is the service name.
	Service string `json:"service"`
	// Running is false before Start and after Stop.
	Running bool `json:"running"`
	// Addr and GossipAddr are the node's service and memberlist addresses.
	Addr       string `json:"addr"`
	GossipAddr string `json:"gossip_addr"`
	// Summary is the service state on one line (node.Summary: its
	// String(), or its exported fields).
	Summary string `json:"summary,omitempty"`
	// State is the service state as JSON (its exported fields).
	State json.RawMessage `json:"state,omitempty"`
	// Neighbors are the nodes the service names as its neighbourhood, when
	// it has a Neighbors(self ID) []ID method.
	Neighbors []node.ID `json:"neighbors,omitempty"`
	// Timers maps scheduled timer names to their deadlines.
	Timers map[string]time.Time `json:"timers,omitempty"`
	// Peers are the nodes memberlist and handshakes have told of, with
	// their open connections.
	Peers []PeerStatus `json:"peers"`
	// Counters are the runtime's statistics.
	Counters Counters `json:"counters"`
}

// Status returns the node's status. While the runtime runs, the service
// part is taken by the core goroutine between two events (so Status waits
// for the event being handled); before Start and after Stop it is the last
// one taken. Safe from any goroutine.
func (r *Runtime) Status() Status {
	reply := make(chan Status, 1)
	r.mu.Lock()
	running := r.state == runRunning
	r.mu.Unlock()
	var st Status
	got := false
	if running {
		select {
		case r.statc <- reply:
			st, got = <-reply, true
		case <-r.ctx.Done():
		}
	}
	if !got {
		r.mu.Lock()
		st = r.last
		r.mu.Unlock()
		st.ID, st.Service = r.cfg.ID, r.spec.Name
	}
	st.Running = got
	r.fillStatus(&st)
	return st
}

// fillStatus adds the parts of a status any goroutine can read.
func (r *Runtime) fillStatus(st *Status) {
	r.mu.Lock()
	st.Addr, st.GossipAddr = r.addr, r.gossip
	r.mu.Unlock()
	st.Peers = r.dir.list()
	out, in := r.tr.connections()
	for i := range st.Peers {
		st.Peers[i].Outbound = slices.Contains(out, st.Peers[i].ID)
		st.Peers[i].Inbound = slices.Contains(in, st.Peers[i].ID)
	}
	s := &r.stats
	defer func() {
		if p := r.prover; p != nil {
			st.Counters.MembersUnproven, st.Counters.MemberProofs, st.Counters.MemberProofFailures = p.refused.Load(), p.proofs.Load(), p.failures.Load()
			st.Counters.MemberPushPulls = p.pushPulls.Load()
		}
	}()
	st.Counters = Counters{
		MessagesIn: s.msgsIn.Load(), MessagesOut: s.msgsOut.Load(),
		TransportErrors: s.transportErrors.Load(), FramesRejected: s.framesRejected.Load(),
		ConnsDialed: s.connsDialed.Load(), ConnsAccepted: s.connsAccepted.Load(), DialFailures: s.dialFailures.Load(),
		BytesIn: s.bytesIn.Load(), BytesOut: s.bytesOut.Load(),
		LayerMessagesIn: s.layerMsgsIn.Load(), LayerBytesIn: s.layerBytesIn.Load(),
		LayerMessagesOut: s.layerMsgsOut.Load(), LayerBytesOut: s.layerBytesOut.Load(),
		DatagramsQueued: s.dgramsQueued.Load(), DatagramsDropped: s.dgramsDropped.Load(),
		SendsRefused: s.sendsRefused.Load(), SendQueueBytes: r.tr.queuedBytes(),
		ConnsRefused: s.connsRefused.Load(), HelloConflicts: s.helloConflicts.Load(),
		LogLinesSuppressed: s.logSuppressed.Load(), DialsRefused: s.dialsRefused.Load(), ConnsEvicted: s.connsEvicted.Load(),
		DurableCommits: s.durableCommits.Load(), DurableRecords: s.durableRecords.Load(),
		DurableBytes: s.durableBytes.Load(), DurableSyncNanos: s.durableSyncNanos.Load(),
	}
}

// serviceStatus is the part of Status only the core goroutine may read.
func (r *Runtime) serviceStatus() Status {
	st := Status{ID: r.cfg.ID, Service: r.spec.Name}
	svc := r.core.Service()
	if svc == nil {
		return st
	}
	st.Summary = node.Summary(svc)
	if b, err := json.Marshal(svc); err == nil {
		st.State = b
	}
	if n, ok := svc.(interface{ Neighbors(self node.ID) []node.ID }); ok {
		st.Neighbors = n.Neighbors(r.cfg.ID)
	}
	if len(r.timers) > 0 {
		st.Timers = make(map[string]time.Time, len(r.timers))
		for name, at := range r.timers {
			st.Timers[name] = at.Round(0)
		}
	}
	return st
}

// run is the core goroutine.
func (r *Runtime) run() {
	defer r.wg.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	defer func() {
		st := r.serviceStatus()
		r.mu.Lock()
		r.last = st
		r.mu.Unlock()
	}()
	defer r.pipe.Stop()
	defer r.commitAtExit()
	r.startCore(time.Now())
	for {
		if !r.commitBatches() {
			return
		}
		r.armTimer(timer)
		if !r.serveNext(timer) {
			return
		}
	}
}

// commitBatches commits the durable batch while one is due (commitDue),
// stepping what each commit's sends caused; false once the store failed.
func (r *Runtime) commitBatches() bool {
	for r.commitDue() {
		if !r.commit() {
			return false
		}
		r.drain()
	}
	return !r.failed
}

// armTimer sets timer to the next deadline (nextDeadline), or stops it
// when there is none.
func (r *Runtime) armTimer(timer *time.Timer) {
	if at, ok := r.nextDeadline(); ok {
		timer.Reset(time.Until(at))
	} else {
		timer.Stop()
	}
}

// serveNext waits for the core goroutine's next input — a received
// envelope or a transport error, an application call, a due deadline, a
// layer's wake-up, a Do request, a status request — and handles it;
// false once the runtime stops.
func (r *Runtime) serveNext(timer *time.Timer) bool {
	select {
	case <-r.ctx.Done():
		return false
	case ev := <-r.events:
		r.onNetEvent(ev)
	case call := <-r.appc:
		r.dispatch(node.Event{Kind: node.EventApp, Msg: call, At: time.Now()}, nil)
	case <-timer.C:
		r.fireTimers()
		r.fireRetries()
		r.tickLayers()
	case <-r.wake:
		r.tickLayers()
	case req := <-r.doc:
		r.sendLayer(req.fn(time.Now()))
		r.drain()
		close(req.done)
	case reply := <-r.statc:
		reply <- r.serviceStatus()
	}
	return true
}

// onNetEvent steps what the transport handed the core goroutine: a
// transport error, or a received envelope (a layer's counted as such).
func (r *Runtime) onNetEvent(ev netEvent) {
	if ev.err != nil {
		r.dispatch(node.Event{Kind: node.EventTransportError, Peer: ev.peer, At: time.Now()}, nil)
		return
	}
	env := ev.env
	if r.layerTypes[env.Msg.MessageType()] {
		r.stats.layerMsgsIn.Add(1)
		r.stats.layerBytesIn.Add(uint64(ev.size))
	}
	r.dispatch(node.Event{Kind: node.EventMessage, From: env.From, Msg: env.Msg, At: time.Now()}, &env)
}

// nextDeadline returns the earliest service timer deadline, postponed
// event or layer tick.
func (r *Runtime) nextDeadline() (time.Time, bool) {
	min := r.pipe.NextDue()
	ok := !min.IsZero()
	for _, at := range r.timers {
		if !ok || at.Before(min) {
			min, ok = at, true
		}
	}
	return min, ok
}

// tickLayers runs the Tick of every layer that is due (layer.Pipeline.Tick).
func (r *Runtime) tickLayers() {
	r.carryOut(r.pipe.Tick(time.Now()))
	r.drain()
}

// fireTimers steps every due timer, earliest first (ties by name). Each
// event carries the deadline it was armed for, so the core ignores a fire
// that an earlier handler in this batch rescheduled.
func (r *Runtime) fireTimers() {
	now := time.Now()
	for _, f := range r.dueTimers(now) {
		if at, ok := r.timers[f.name]; !ok || !at.Equal(f.at) {
			continue // cancelled or rescheduled by an earlier handler
		}
		delete(r.timers, f.name)
		r.dispatch(node.Event{Kind: node.EventTimer, Timer: f.name, Deadline: f.at, At: now}, nil)
	}
}

// dueTimer is a timer due to fire, with the deadline it was armed for.
type dueTimer struct {
	name string
	at   time.Time
}

// dueTimers lists the timers due at now, earliest first (ties by name).
func (r *Runtime) dueTimers(now time.Time) []dueTimer {
	var fire []dueTimer
	for name, at := range r.timers {
		if !at.After(now) {
			fire = append(fire, dueTimer{name, at})
		}
	}
	slices.SortFunc(fire, func(a, b dueTimer) int { return cmp.Or(a.at.Compare(b.at), strings.Compare(a.name, b.name)) })
	return fire
}

// dispatch is the single point where the core goroutine steps the core:
// every event (init, message, timer, app call, transport error) goes
// through it, and so does every effect. in is the received envelope of a
// message event (nil otherwise); its CN is the sender's checkpoint number.
// Then it steps what the event caused (drain).
func (r *Runtime) dispatch(ev node.Event, in *node.Envelope) {
	r.step(ev, in)
	r.drain()
}

// drain steps, in order, the refusals of the service's TrySends, the
// messages the node sent itself (the service's and the layers') and the
// transport errors of sends that could not be queued (peer too slow, frame
// too large), until none is left. A refusal is the node's very next event
// after the step that sent the message (node.Env.TrySend): the refusals of
// the latest step go ahead of those still waiting, in the order they were
// sent, so a refusal handler's own refused TrySend is stepped right after
// it.
func (r *Runtime) drain() {
	for {
		if len(r.refNew) > 0 {
			r.refq = append(r.refNew, r.refq...)
			r.refNew = nil
		}
		switch {
		case len(r.refq) > 0:
			next := popEnvelope(&r.refq)
			r.step(node.Event{Kind: node.EventSendRefused, Peer: next.To, Msg: next.Msg, At: time.Now()}, nil)
		case len(r.selfq) > 0:
			next := popEnvelope(&r.selfq)
			r.step(node.Event{Kind: node.EventMessage, From: next.From, Msg: next.Msg, At: time.Now()}, &next)
		case len(r.failq) > 0:
			peer := r.failq[0]
			r.failq = r.failq[1:]
			r.step(node.Event{Kind: node.EventTransportError, Peer: peer, At: time.Now()}, nil)
		default:
			return
		}
	}
}

// popEnvelope takes the first envelope off the queue *q, clearing its
// slot (so the queue's array holds no message it no longer queues) and
// dropping the array once the queue is empty.
func popEnvelope(q *[]node.Envelope) node.Envelope {
	next := (*q)[0]
	(*q)[0] = node.Envelope{}
	*q = (*q)[1:]
	if len(*q) == 0 {
		*q = nil
	}
	return next
}

// step runs one event through the layers and the core (layer.Pipeline:
// the layers see the event first — a snapshot manager checkpoints before a
// message with a larger number is handled and consumes its own messages; a
// steering layer drops or postpones what it filters —, then every send of
// the service, then the end of the step) and carries out the outcome.
func (r *Runtime) step(ev node.Event, in *node.Envelope) { r.carryOut(r.pipe.Step(ev, in)) }

// carryOut carries out one pipeline outcome: the layers' errors are
// logged, the core's timer operations mirrored, a connection a verdict
// broke closed (the service gets a transport error for it), and the sends
// queued in order. The effect slices are the core's until the next Step:
// it runs before the next one.
func (r *Runtime) carryOut(o layer.Outcome) {
	r.stageDurable(o)
	r.countRefusalChain(o.Event.Kind)
	r.logErrors(o)
	if o.Handled && o.Event.Kind == node.EventTransportError {
		r.stats.transportErrors.Add(1)
	}
	r.mirrorTimers(o.Timers)
	if o.Break != node.None && !r.breakConn(o.Break) {
		return
	}
	r.sendAll(o.Sends)
}

// countRefusalChain extends the chain of EventSendRefused stepped in a
// row (see maxRefusalChain) with an event of kind k, or ends it with any
// other event; a layer call (kind 0) leaves it as it is.
func (r *Runtime) countRefusalChain(k node.EventKind) {
	if k == node.EventSendRefused {
		r.refChain++
	} else if k != 0 {
		r.refChain, r.refChainLogged = 0, false
	}
}

// logErrors logs an outcome's errors: a layer call's (Start, Tick,
// ConnectionBroken), or those of the event stepped.
func (r *Runtime) logErrors(o layer.Outcome) {
	for _, err := range o.Errors {
		if o.Event.Kind == 0 {
			r.log.Error("live: layer error", zap.Error(err))
			continue
		}
		r.log.Error("live: layer or core error", zap.Stringer("event", o.Event), zap.Error(err))
	}
}

// mirrorTimers applies the core's timer operations to the runtime's
// wall-clock timers.
func (r *Runtime) mirrorTimers(ops []node.TimerOp) {
	for _, op := range ops {
		if op.Cancel {
			delete(r.timers, op.Name)
		} else {
			r.timers[op.Name] = op.At
		}
	}
}

// breakConn closes the connections to peer, whose message a verdict
// broke, after committing the durable records held (false, and nothing
// closed, when that commit failed). Both ends' services see the broken
// connection: this node's gets a transport error for it as for any lost
// connection, so its own failure handling runs beside the peer's. The
// error is queued for drain (failq), not reported through the inbox: the
// core goroutine, the inbox's only reader, would wait for itself when it
// is full.
func (r *Runtime) breakConn(peer node.ID) bool {
	if r.wa.holding() && !r.commit() {
		return false
	}
	if r.tr.closePeer(peer, errBrokenByLayer, false) {
		r.failq = append(r.failq, peer)
	}
	return true
}

// sendAll sends a pipeline's messages in order: to peers on their
// connections (datagrams as datagrams) — or, while durable records wait
// for their commit, into the held sends (runtime_durable.go) —, to this
// node through the self queue (so they reach the layers first).
func (r *Runtime) sendAll(out []layer.Send) {
	for _, s := range out {
		switch {
		case s.Env.To == r.cfg.ID:
			r.selfq = append(r.selfq, s.Env)
		case r.failed:
		case !r.wa.holding():
			r.sendPeer(s)
		case s.Env.Refusable:
			// Its refusal must be the node's next event: commit now.
			if r.commit() {
				r.sendPeer(s)
			}
		default:
			r.wa.held = append(r.wa.held, s)
		}
	}
}

// sendPeer sends one message to a peer: a datagram as a datagram.
func (r *Runtime) sendPeer(s layer.Send) {
	if s.Env.Datagram && !s.Layer {
		r.sendDatagram(s.Env)
		return
	}
	r.send(s.Env, s.Layer)
}

// sendLayer sends a layer's own messages (Do's): to peers on their
// connections, to this node through the self queue (so they reach the
// layers' Before).
func (r *Runtime) sendLayer(out []node.Envelope) {
	for _, env := range out {
		r.sendAll([]layer.Send{{Env: env, Layer: true}})
	}
}

// maxRefusalChain bounds the EventSendRefused the core goroutine steps in a
// row with no other event between. A service that answers a refusal by
// sending again at once to the same full queue (rather than arming a
// timer, as node.SendRefusedHandler asks) would otherwise keep the core
// goroutine refusing and stepping forever: once the chain is this long, a
// TrySend that would be refused is queued as a Send instead (past the byte
// bound; a full frame queue then breaks the connection as for a Send), and
// an error is logged. The bound is far above what a service refused by a
// whole neighbourhood at once needs.
const maxRefusalChain = 1024

// send encodes env into a frame and queues it on the peer's connection.
// A send that cannot be queued becomes a transport error for the peer,
// as do an unencodable message and one over MaxFrameSize, TrySend or not;
// a TrySend (env.Refusable) the queue refuses is counted and put on the
// refusals for drain to step. layer marks a layer's own message, for the counters.
func (r *Runtime) send(env node.Envelope, layer bool) {
	frame, start, ok := r.encodeFrame(env, messageLines)
	if !ok {
		r.failq = append(r.failq, env.To)
		return
	}
	err := r.tr.enqueue(env.To, frame, env.Refusable)
	if errors.Is(err, errSendRefused) && r.refusalOverflow(env) {
		err = r.tr.enqueue(env.To, frame, false)
	}
	if err != nil {
		r.sendFailed(env, err, layer)
		return
	}
	if layer {
		r.stats.layerMsgsOut.Add(1)
		r.stats.layerBytesOut.Add(uint64(len(frame) - start))
	}
}

// sendFailed handles a message the transport did not queue: a refused
// TrySend is counted and put on the refusals; a layer's message to a
// peer nobody could find (a Marker for a member a Request named) is
// dropped, with no transport error for the service, which never sent
// to it; any other failure but the transport's closing becomes a
// transport error for the peer.
func (r *Runtime) sendFailed(env node.Envelope, err error, layer bool) {
	switch {
	case errors.Is(err, errSendRefused):
		r.stats.sendsRefused.Add(1)
		r.refNew = append(r.refNew, env)
	case errors.Is(err, errNoAddress) && layer:
	case !errors.Is(err, errClosedLocally):
		r.failq = append(r.failq, env.To)
	}
}

// frameLines are the log lines of an envelope that cannot be framed: it
// does not encode (an unregistered message type is a bug in the service
// or layer), or it exceeds the maximum frame size.
type frameLines struct{ unencodable, oversized string }

// The frameLines of a message and of a datagram (which is dropped).
var (
	messageLines  = frameLines{"live: cannot encode message", "live: message exceeds the maximum frame size"}
	datagramLines = frameLines{"live: cannot encode datagram; dropped", "live: datagram exceeds the maximum frame size; dropped"}
)

// encodeFrame encodes env into a frame of its own and returns it with
// the offset its header starts at; false, logged with lines, when env
// does not encode or exceeds MaxFrameSize.
func (r *Runtime) encodeFrame(env node.Envelope, lines frameLines) (frame []byte, start int, ok bool) {
	frame, start = BeginFrame(make([]byte, 0, 256))
	frame, err := r.reg.AppendEnvelope(frame, env)
	if err != nil {
		r.log.Error(lines.unencodable, zap.Stringer("to", env.To), zap.Error(err))
		return nil, 0, false
	}
	if n := len(frame) - start - node.FrameHeaderLen; n > r.cfg.Transport.MaxFrameSize {
		r.log.Error(lines.oversized, zap.Stringer("to", env.To),
			zap.String("type", env.Msg.MessageType()), zap.Int("bytes", n), zap.Int("max", r.cfg.Transport.MaxFrameSize))
		return nil, 0, false
	}
	FinishFrame(frame, start)
	return frame, start, true
}

// refusalOverflow reports whether the chain of refusals has reached
// maxRefusalChain, so that env, a TrySend the queue refused, must be
// queued like a Send; it logs that once per chain.
func (r *Runtime) refusalOverflow(env node.Envelope) bool {
	if r.refChain < maxRefusalChain {
		return false
	}
	if !r.refChainLogged {
		r.refChainLogged = true
		r.log.Error("live: the service keeps sending again at once what the transport refused; TrySend queued as a Send until another event",
			zap.Int("refusals_in_a_row", r.refChain), zap.Stringer("to", env.To), zap.String("type", env.Msg.MessageType()))
	}
	return true
}

// sendDatagram encodes a datagram into a frame and queues it on the peer's
// connection, the one its messages use (transport.enqueueDatagram), so a
// datagram that gets through arrives reliably and in order with them: a
// valid best-effort delivery. When the peer is unreachable (its last dial
// failed and its redial backoff has not passed), the connection's queue is
// full, or the datagram cannot be encoded or exceeds the maximum frame
// size, it is dropped and counted, never reported: a datagram causes no
// transport error.
func (r *Runtime) sendDatagram(env node.Envelope) {
	frame, _, ok := r.encodeFrame(env, datagramLines)
	if !ok || !r.tr.enqueueDatagram(env.To, frame) {
		r.stats.dgramsDropped.Add(1)
		return
	}
	r.stats.dgramsQueued.Add(1)
}

// errBrokenByLayer is the reason of a connection a Gate broke.
var errBrokenByLayer = errors.New("live: connection broken by a layer's verdict on a message from the peer")

// fireRetries delivers again, in the order they were postponed, the
// postponed events whose time has come (layer.Pipeline.DueRetries), each to
// the layer that postponed it, stepping what each caused before the next.
func (r *Runtime) fireRetries() {
	now := time.Now()
	for _, token := range r.pipe.DueRetries(now) {
		if o, ok := r.pipe.Retry(token, now); ok {
			r.carryOut(o)
			r.drain()
		}
	}
}
