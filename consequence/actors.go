package consequence

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// CrashProperty is the name of the built-in safety property that fails on a
// state in which a service handler panicked (see Crash).
const CrashProperty = "crash"

// ErrActorModel is wrapped by the errors the actor-model constructors
// return (bad options, undecodable checkpoints, unregistered messages).
var ErrActorModel = errors.New("consequence: cannot build actor model")

// DefaultStart is the clock of the nodes of an initial configuration when
// ActorOptions.Start is zero.
var DefaultStart = time.Unix(1_000_000, 0).UTC()

// ActorOptions configure an ActorModel. The zero value of every field
// means its documented default (DefaultActorOptions), except that
// NewActorModel needs nodes: Nodes or N.
type ActorOptions struct {
	// Nodes are the node IDs of an initial configuration (NewActorModel).
	// Empty means 1..N.
	Nodes []node.ID
	// N is the number of nodes when Nodes is empty; NewActorModel fails
	// when both are zero. The models built from snapshots ignore both.
	N int
	// Seed seeds the random sources of an initial configuration's nodes;
	// zero is a seed like any other.
	Seed uint64
	// Start is the clock of an initial configuration's nodes; zero means
	// DefaultStart.
	Start time.Time
	// Workload, when set, returns the application calls a node gets after
	// it starts (restart=false, initial configurations only) and after each
	// reset the explorer injects (restart=true); they are queued as the
	// node's pending calls and run, in order, as local actions. Without a
	// workload a reset node gets the calls its pre-reset service declares
	// through node.Restarter. It must be deterministic and safe for
	// concurrent use; the calls must not be modified afterwards.
	Workload func(id node.ID, restart bool) []node.Message
	// Faults bound the injected faults; zero injects none.
	Faults Faults
	// Intercept, when set, puts event filters in the model (execution
	// steering checks what a filter does before installing it): it is
	// asked about every delivery of a message or a transport error (Msg
	// nil), timer and application call, and its layer.Verdict — the one verdict type the shells' layers use
	// too — replaces the event's normal effect: Handle lets it happen;
	// otherwise a message (datagrams included) is consumed without running
	// the handler, and with Break the connection to its sender is broken
	// too (the messages in flight both ways are discarded and both ends
	// get a transport error, so their failure handling runs; it does not
	// count against Faults.Breaks; a datagram's sender holds no
	// connection, so nothing is broken); a timer, application call or transport error with RetryAt
	// set is postponed —
	// it stays scheduled (pending) but is not enabled in this state (the
	// time itself means nothing to the model) — and one without is treated
	// the same way (an explored state cannot lose a timer to a filter). It
	// must be deterministic and safe for concurrent use.
	Intercept func(ActorAction) layer.Verdict
	// Outside, when non-nil, is told of every message a handler sends to a
	// node outside the snapshot (the dummy sink, where it vanishes), on the
	// goroutine computing the successor: the steering rounds' liveness
	// search uses it to tell a dead end of the neighbourhood from one that
	// only waits for nodes the model does not hold. It must be safe for
	// the model's concurrent use (a search with one worker calls it from
	// one goroutine).
	Outside func(from, to node.ID, msg node.Message)
	// ClockSkew bounds the skew between the nodes' clocks in the virtual
	// clock that orders timers: a node's timers fire in deadline order
	// (a deadline already past fires at the node's clock, which a firing
	// advances to the deadline, so timers armed then get proper
	// deadlines), and a timer may fire only if no timer of the snapshot is
	// due more than ClockSkew before it. Message deliveries are not
	// ordered by it: network delay is unbounded. Zero means
	// DefaultClockSkew; negative is an error.
	ClockSkew time.Duration
	// AnyOrderTimers turns the virtual clock off: any scheduled timer may
	// fire in any state, whatever the deadlines, as before the clock
	// existed. It over-approximates (a lease a real run keeps may be
	// reported broken) and explores fewer distinct states, since deadlines
	// then stay out of the fingerprint.
	AnyOrderTimers bool
	// TimerSkew is the declared bound on each node's timer skew: a node's
	// timers fire early or late by up to TimerSkew (its own timers keep
	// their order), so two nodes' timers due up to 2·TimerSkew apart may
	// fire in either order. The virtual clock then lets a timer fire while
	// another node's timer due up to 2·TimerSkew earlier is pending, when
	// that is more than ClockSkew. Zero: no declared skew (ClockSkew
	// alone); negative is an error.
	TimerSkew time.Duration
	// Symmetry turns on symmetry reduction over the groups of
	// interchangeable nodes the service declares (node.Symmetric):
	// Fingerprint returns the fingerprint of the state with each group's
	// members renamed into a canonical order, so the search keeps about one
	// state per orbit. States, actions and paths stay the real ones. Sound
	// for safety properties symmetric in the groups (see the package
	// documentation, "Symmetry reduction"); the constructors fail with
	// ErrNoSymmetry if the service declares no group.
	Symmetry bool
	// Timely bounds network delay on the virtual clock for a service that
	// declares a bounded property (see TimelyOptions); ignored otherwise.
	Timely TimelyOptions
	// Determinism checks a sample of the transitions twice
	// (DeterminismCheck); the zero value checks none.
	Determinism DeterminismCheck
}

// DefaultActorOptions returns what the zero ActorOptions stand for: no
// nodes (set Nodes or N), seed 0, the clock DefaultStart, no workload, no
// faults, no event filter, timers ordered by a virtual clock with skew
// DefaultClockSkew.
func DefaultActorOptions() ActorOptions {
	return ActorOptions{Start: DefaultStart, ClockSkew: DefaultClockSkew}
}

// Checkpoint is one node of a gathered snapshot: its ID, its checkpoint
// encoding (node.State.AppendCheckpoint) and its clock at the checkpoint.
type Checkpoint struct {
	ID    node.ID
	Bytes []byte
	At    time.Time
}

// LiveSystem is a running system the explorer can start from: its live
// nodes (View().Nodes()), their cores and the messages in flight, in FIFO
// order per channel, with the datagrams in flight among them (Datagram
// set; their order does not matter). emulation.Emulator implements it
// (its InFlight method is the snapshot of its network).
type LiveSystem interface {
	View() node.View
	Core(id node.ID) *node.Core
	InFlight() []node.Envelope
}

// ActorActionKind says what an ActorAction does.
type ActorActionKind uint8

// The kinds of actions of the actor model.
const (
	// ActDeliver delivers the head of the channel Peer → Node: a message,
	// or a transport error about Peer.
	ActDeliver ActorActionKind = iota + 1
	// ActTimer fires Node's timer Timer.
	ActTimer
	// ActApp runs the application call Msg at Node: the head of its pending
	// calls (Pending set) or a call its service declares (node.AppCaller).
	ActApp
	// ActReset resets Node (silently if Silent).
	ActReset
	// ActBreak breaks the connection between Node and Peer.
	ActBreak
	// ActDeliverDatagram delivers the datagram Msg in flight from Peer to
	// Node: any one of the multiset Peer → Node, not only the oldest (one
	// action per distinct message: equal datagrams are one action).
	ActDeliverDatagram
	// ActDropDatagram loses the datagram Msg in flight from Peer to Node
	// (within Faults.Drops): a local action of the receiver Node.
	ActDropDatagram
	// ActRefuse refuses the message Msg that Node sent to Peer with
	// node.Env.TrySend in its latest step and that is still in flight
	// (within Faults.Refusals): it leaves the channel, and Node runs
	// node.EventSendRefused. A local action of the sender Node.
	ActRefuse
)

// ActorAction is one event of a global state. It is a small value; Msg is
// shared with the state and must be treated as read-only.
type ActorAction struct {
	Kind ActorActionKind
	// Node is the node the action happens to (the receiver of a delivery).
	Node node.ID
	// Peer is the sender of a delivery or datagram and the other end of a
	// break.
	Peer node.ID
	// Msg is the delivered message (nil for a transport error), the
	// delivered or dropped datagram, or the application call.
	Msg   node.Message
	Timer string
	// Silent marks a silent reset.
	Silent bool
	// Pending marks an application call taken from the node's pending
	// calls rather than declared by its service.
	Pending bool
	// Pos is the position of the message in its channel that a delivery
	// fault on a declared-unreliable message (delivery.go) acts on.
	Pos int32
	// Back marks a clock jump backwards (ActClockJump).
	Back bool
	// Cut is a partition's shape (ActPartition): isolate Node, cut Node
	// and Peer apart (partial) or what Node sends Peer (one-way), or split
	// Side — the IDs whose bit id-1 is set, Node among them — from the
	// rest.
	Cut  CutKinds
	Side uint32
}

// String renders the action for traces, e.g. "n13 deliver randtree.Join
// from n9", "n9 timer recovery", "n13 reset silent", "n13 app
// randtree.JoinOverlay", "n9 transport-error from n13", "n1 break n9",
// "n2 deliver-datagram test.Note from n1", "n2 drop-datagram test.Note
// from n1", "n1 refuse-send test.Note to n2".
func (a ActorAction) String() string {
	switch a.Kind {
	case ActDeliver:
		if a.Msg == nil {
			return fmt.Sprintf("%v transport-error from %v", a.Node, a.Peer)
		}
		return fmt.Sprintf("%v deliver %s from %v", a.Node, a.Msg.MessageType(), a.Peer)
	case ActTimer:
		return fmt.Sprintf("%v timer %s", a.Node, a.Timer)
	case ActApp:
		return fmt.Sprintf("%v app %s", a.Node, a.Msg.MessageType())
	case ActReset:
		if a.Silent {
			return fmt.Sprintf("%v reset silent", a.Node)
		}
		return fmt.Sprintf("%v reset rst", a.Node)
	case ActBreak:
		return fmt.Sprintf("%v break %v", a.Node, a.Peer)
	case ActDeliverDatagram, ActDropDatagram:
		verb := "deliver-datagram"
		if a.Kind == ActDropDatagram {
			verb = "drop-datagram"
		}
		if a.Msg == nil {
			return fmt.Sprintf("%v %s <nil> from %v", a.Node, verb, a.Peer)
		}
		return fmt.Sprintf("%v %s %s from %v", a.Node, verb, a.Msg.MessageType(), a.Peer)
	case ActRefuse:
		if a.Msg == nil {
			return fmt.Sprintf("%v refuse-send <nil> to %v", a.Node, a.Peer)
		}
		return fmt.Sprintf("%v refuse-send %s to %v", a.Node, a.Msg.MessageType(), a.Peer)
	}
	if s, ok := a.deliveryString(); ok {
		return s
	}
	if s, ok := a.lastingString(); ok {
		return s
	}
	return fmt.Sprintf("%v action(%d)", a.Node, uint8(a.Kind))
}

// ActorModel is the actor system of node.Services as a Model: global
// states of a set of nodes (the snapshot) and the network between them,
// explored by running the services' real handlers on copies of their
// states. It is immutable after construction and safe for concurrent use
// (scratch cores are pooled per node).
type ActorModel struct {
	spec  node.Spec
	reg   *node.Registry
	opts  ActorOptions
	ids   []node.ID // ascending
	pos   []uint32  // position+1 by ID (positions); nil: binary search
	start *GlobalState
	cores []sync.Pool // per node index: *node.Core
	// sym is ActorOptions.Symmetry's reduction; nil without.
	sym *actorSymmetry
	// delivery is the service's declared delivery (delivery.go); nil when
	// it declares none.
	delivery *deliveryModel
	// obs keeps what the spec's bounded and history properties judge
	// (observe.go); nil when it declares none.
	obs *observer
}

var _ Model[*GlobalState, ActorAction] = (*ActorModel)(nil)

// nodeInit is a node of a start state before it is hashed.
type nodeInit struct {
	id      node.ID
	st      node.State
	now     time.Time
	pending []node.Message
}

// NewActorModel builds the model of a service's initial configuration: the
// nodes opts.Nodes (or 1..opts.N), each initialised (Init) at opts.Start
// with its random source seeded from opts.Seed, with the initial
// application calls opts.Workload(id, false) pending and the messages Init
// sent in flight.
func NewActorModel(spec node.Spec, opts ActorOptions) (*ActorModel, error) {
	ids := opts.Nodes
	if len(ids) == 0 {
		if opts.N <= 0 {
			return nil, fmt.Errorf("%w: no nodes (set ActorOptions.Nodes or N)", ErrActorModel)
		}
		for i := 1; i <= opts.N; i++ {
			ids = append(ids, node.ID(i))
		}
	}
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrActorModel, err)
	}
	start := opts.Start
	if start.IsZero() {
		start = DefaultStart
	}
	var inits []nodeInit
	var sends []node.Envelope
	for _, id := range ids {
		c, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New, Seed: opts.Seed})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrActorModel, err)
		}
		fx, err := stepSafe(c, node.Event{Kind: node.EventInit, At: start})
		if err != nil {
			return nil, fmt.Errorf("%w: %v init: %w", ErrActorModel, id, err)
		}
		sends = append(sends, fx.Sends...)
		in := nodeInit{id: id, st: *c.State(), now: c.Now()}
		if opts.Workload != nil {
			in.pending = opts.Workload(id, false)
		}
		inits = append(inits, in)
	}
	return newActorModel(spec, opts, inits, sends, true)
}

// NewActorModelFromCheckpoints builds the model of a gathered snapshot:
// the nodes of the checkpoints (decoded with node.DecodeCheckpoint and
// spec.New) and the in-flight envelopes, in FIFO order per channel; an
// envelope with Datagram set joins its pair's datagram multiset instead.
// Envelopes to nodes outside the snapshot are dropped (the dummy sink);
// envelopes from outside are delivered. Open connections are assumed
// between every pair with a message (not a datagram) in flight and between
// each node and the snapshot members its service names through
// node.Neighborer.
func NewActorModelFromCheckpoints(spec node.Spec, cps []Checkpoint, inFlight []node.Envelope, opts ActorOptions) (*ActorModel, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrActorModel, err)
	}
	inits := make([]nodeInit, 0, len(cps))
	for _, cp := range cps {
		st, err := node.DecodeCheckpoint(cp.Bytes, spec.New)
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint of %v: %w", ErrActorModel, cp.ID, err)
		}
		inits = append(inits, nodeInit{id: cp.ID, st: st, now: cp.At})
	}
	return newActorModel(spec, opts, inits, inFlight, false)
}

// NewActorModelFromLive builds the model of a running system at the moment
// of the call: a clone of the state of every live node (View().Nodes()),
// at the node's clock, and the messages in flight (see
// NewActorModelFromCheckpoints for connections and outsiders). The system
// must not step during the call.
func NewActorModelFromLive(spec node.Spec, sys LiveSystem, opts ActorOptions) (*ActorModel, error) {
	if err := spec.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrActorModel, err)
	}
	ids := sys.View().Nodes()
	inits := make([]nodeInit, 0, len(ids))
	for _, id := range ids {
		c := sys.Core(id)
		if c == nil || !c.Started() {
			continue
		}
		st, err := c.State().Clone(spec.New)
		if err != nil {
			return nil, fmt.Errorf("%w: state of %v: %w", ErrActorModel, id, err)
		}
		inits = append(inits, nodeInit{id: id, st: st, now: c.Now()})
	}
	return newActorModel(spec, opts, inits, sys.InFlight(), false)
}

// newActorModel builds the model of the nodes inits with inFlight in
// flight. With windows, a Refusable envelope is in its sender's refusal
// window (the envelopes are what the nodes' Init just sent); otherwise
// every envelope was accepted by the transport already (a snapshot's
// channels), and no window is open.
func newActorModel(spec node.Spec, opts ActorOptions, inits []nodeInit, inFlight []node.Envelope, windows bool) (*ActorModel, error) {
	if err := opts.Faults.validate(); err != nil {
		return nil, err
	}
	if opts.ClockSkew < 0 || opts.TimerSkew < 0 {
		return nil, fmt.Errorf("%w: negative clock skew %v or timer skew %v", ErrActorModel, opts.ClockSkew, opts.TimerSkew)
	}
	if opts.Determinism.Every < 0 {
		return nil, fmt.Errorf("%w: determinism check every %d transitions", ErrActorModel, opts.Determinism.Every)
	}
	if len(inits) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrActorModel)
	}
	reg, err := spec.Registry()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrActorModel, err)
	}
	slices.SortFunc(inits, func(a, b nodeInit) int { return cmp.Compare(a.id, b.id) })
	m := &ActorModel{spec: spec, reg: reg, opts: opts, delivery: newDeliveryModel(spec)}
	for i, in := range inits {
		if in.id == node.None || (i > 0 && inits[i-1].id == in.id) {
			return nil, fmt.Errorf("%w: node ID %v is none or repeated", ErrActorModel, in.id)
		}
		m.ids = append(m.ids, in.id)
	}
	m.pos = positions(m.ids)
	m.cores = make([]sync.Pool, len(m.ids))
	for i := range m.cores {
		id := m.ids[i]
		m.cores[i].New = func() any {
			c, err := node.NewCore(node.CoreConfig{ID: id, Factory: spec.New})
			if err != nil {
				panic(fmt.Sprintf("consequence: core for %v: %v", id, err))
			}
			return c
		}
	}
	g := &GlobalState{m: m, nodes: make([]*actorNode, len(inits))}
	for i, in := range inits {
		n := &actorNode{st: in.st, now: in.now}
		for _, call := range in.pending {
			h, err := m.msgHash(call)
			if err != nil {
				return nil, fmt.Errorf("%w: application call of %v: %w", ErrActorModel, in.id, err)
			}
			n.pending = append(n.pending, inflight{msg: call, h: h})
		}
		if err := m.hashNode(n); err != nil {
			return nil, fmt.Errorf("%w: %v: %w", ErrActorModel, in.id, err)
		}
		g.nodes[i] = n
	}
	s := &succ{g: g}
	wins := map[node.ID]uint8{} // the windows' lengths so far, per sender
	for _, env := range inFlight {
		if _, ok := m.index(env.To); !ok {
			continue // to the dummy sink
		}
		h, err := m.msgHash(env.Msg)
		if err != nil {
			return nil, fmt.Errorf("%w: message %v -> %v: %w", ErrActorModel, env.From, env.To, err)
		}
		if env.Datagram {
			s.addDgram(env.From, env.To, inflight{msg: env.Msg, h: h})
			continue
		}
		_, from := m.index(env.From)
		it := inflight{msg: env.Msg, h: h}
		if windows && from && env.Refusable && env.From != env.To && opts.Faults.Refusals > 0 && wins[env.From] < maxWindow {
			wins[env.From]++
			it.win = wins[env.From]
		}
		s.appendChan(env.From, env.To, it)
		if from && env.From != env.To {
			s.connect(env.From, env.To)
		}
	}
	for i, n := range g.nodes {
		nb, ok := n.st.Service.(node.Neighborer)
		if !ok {
			continue
		}
		for _, p := range nb.Neighbors(m.ids[i]) {
			if _, in := m.index(p); in && p != m.ids[i] {
				s.connect(m.ids[i], p)
			}
		}
	}
	m.setClock(&succ{g: g}, 0, nil)
	if err := m.observeStart(g, windows); err != nil {
		return nil, err
	}
	g.fp = g.fingerprint()
	m.start = g
	if opts.Symmetry {
		if m.sym, err = newActorSymmetry(m); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// index returns the position of id among the snapshot's nodes.
func (m *ActorModel) index(id node.ID) (int, bool) {
	if m.pos != nil {
		if uint64(id) < uint64(len(m.pos)) && m.pos[id] > 0 {
			return int(m.pos[id] - 1), true
		}
		return 0, false
	}
	return slices.BinarySearch(m.ids, id)
}

// posTableMax bounds the dense table index keeps of node positions by ID:
// a table of up to posTableMax entries (4 bytes each) when the largest ID
// is below it and below posTableSpread times the number of nodes. The
// properties look nodes up by ID on every state (GlobalState.Service), and
// a binary search over 100 IDs was a tenth of a 100-node round's time.
const (
	posTableMax    = 1 << 16
	posTableSpread = 64
)

// positions returns the dense position table for ids (sorted), position+1
// by ID, 0 for an ID not in ids; nil when the IDs are too sparse for one.
func positions(ids []node.ID) []uint32 {
	if len(ids) == 0 {
		return nil
	}
	top := uint64(ids[len(ids)-1])
	if top >= posTableMax || top >= posTableSpread*uint64(len(ids)) {
		return nil
	}
	pos := make([]uint32, top+1)
	for i, id := range ids {
		pos[id] = uint32(i + 1)
	}
	return pos
}

// Nodes returns the IDs of the nodes in the snapshot, ascending (the
// model's own slice: do not modify it).
func (m *ActorModel) Nodes() []node.ID { return m.ids }

// Start returns the start state.
func (m *ActorModel) Start() *GlobalState { return m.start }

// Init implements Model: the one start state.
func (m *ActorModel) Init() []*GlobalState { return []*GlobalState{m.start} }

// Fingerprint implements Model (see GlobalState.Fingerprint); with
// ActorOptions.Symmetry, the fingerprint of g's canonical renaming.
func (m *ActorModel) Fingerprint(g *GlobalState) node.Hash {
	if m.sym != nil && g.ext == nil { // a state with lasting faults keeps its own: exact, merging less
		return m.sym.fingerprint(m, g)
	}
	return g.fp
}

// LocalFingerprint implements Model: node n's state, timer names, pending
// calls and random source, with the fault budget spent (which enables its
// reset and break actions), when breaks are enabled the connections, and,
// when drops are enabled, the drops spent and the datagrams in flight to n
// (which its drop actions drop), the timers the virtual clock lets fire
// (which depends on the other nodes' timers), the stale connections n
// holds (its writes over them are lost: once it learns of the reset or
// break, its local actions must be explored again), when refusals are
// enabled its refusal window and the refusals spent (which its refusal
// actions refuse), and, when both kinds
// of reset are
// explored, the peers a transport error about n is on its way to: a
// reset with RST and a silent one leave n in the same local state, and
// without them the second kind's successor would have n's next local
// actions (its rejoin) pruned as already explored after the first.
func (m *ActorModel) LocalFingerprint(g *GlobalState, n int) node.Hash {
	h := xorHash(g.nodes[n].hash, m.enabledTimerNames(g, n))
	for _, k := range g.stale {
		if k.lo == m.ids[n] {
			h = xorHash(h, mix(tagStale, uint64(k.hi), 1, node.Hash{}))
		}
	}
	if m.opts.Faults.Kinds() == ResetBoth && m.opts.Faults.Resets > 0 {
		id := m.ids[n]
		for _, c := range g.chans {
			if c.from == id && c.to != id && g.teQueued(id, c.to) {
				h = xorHash(h, mix(tagTold, uint64(c.to), 0, node.Hash{}))
			}
		}
	}
	if m.opts.Faults.Breaks > 0 {
		h = xorHash(h, g.connsH)
	}
	if m.opts.Faults.Refusals > 0 {
		h = m.windowFingerprint(g, n, h)
	}
	if m.opts.Faults.Drops > 0 {
		id := m.ids[n]
		for _, d := range g.dgrams {
			if d.to == id {
				h = xorHash(h, dgramComponent(d))
			}
		}
		h = mix(tagDrops, uint64(g.drops), 0, h)
	}
	if g.ext != nil {
		h = m.lastingLocal(g, n, h)
	}
	return mix(tagLocal, uint64(g.resets), uint64(g.breaks), h)
}

// encPool recycles message encoding buffers.
var encPool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// msgHash is the hash of a message's canonical encoding (type and body).
// It fails, with node.Registry.CheckMessage's error, for a message outside
// Spec.Messages.
func (m *ActorModel) msgHash(msg node.Message) (node.Hash, error) {
	if err := m.reg.CheckMessage(msg); err != nil {
		return node.Hash{}, err
	}
	bp := encPool.Get().(*[]byte)
	defer encPool.Put(bp)
	b, err := m.reg.AppendEnvelope((*bp)[:0], node.Envelope{Msg: msg})
	if err != nil {
		return node.Hash{}, err
	}
	*bp = b[:0]
	h := xxh3.Hash128(b)
	return node.Hash{Hi: h.Hi, Lo: h.Lo}, nil
}

// hashNode sets n.hash from its state and pending calls.
func (m *ActorModel) hashNode(n *actorNode) error {
	h, err := n.st.Hash()
	if err != nil {
		return err
	}
	if len(n.pending) > 0 {
		h = hashList(tagPending, h, n.pending)
	}
	if n.down {
		h = downHash(h)
	}
	n.hash = h
	n.first, n.hasTimer = nodeFirstDue(n)
	return nil
}

// Actions implements Model. The order is fixed: deliveries (channels by
// sender, then receiver), datagram deliveries (multisets by sender, then
// receiver; within one, distinct messages in hash order), then per node in
// ID order its timers (by name), its first pending call, its declared calls
// and its resets (with RST first), then breaks of the open connections in order, then
// datagram drops (in the order of datagram deliveries), then refusals
// (channels in order, within one the window's distinct messages in send
// order). A crashed state has none.
func (m *ActorModel) Actions(g *GlobalState, out []Action[ActorAction]) []Action[ActorAction] {
	if g.crash != nil {
		return out
	}
	for _, c := range g.chans {
		i, ok := m.index(c.to)
		if !ok {
			continue
		}
		out = append(out, Action[ActorAction]{Node: i, Act: ActorAction{Kind: ActDeliver, Node: c.to, Peer: c.from, Msg: c.items[0].msg}})
		if k, ok := c.overtaking(); ok {
			out = append(out, Action[ActorAction]{Node: i, Act: ActorAction{Kind: ActDeliver, Node: c.to, Peer: c.from, Msg: c.items[k].msg}})
		}
	}
	out = m.appendDgrams(out, g, ActDeliverDatagram)
	canReset := g.resets < m.opts.Faults.Resets
	first, _ := m.earliest(g)
	limit := first.Add(m.clockSkew())
	nodeFaults := m.opts.Faults.Crashes > 0 || m.opts.Faults.ClockJumps > 0
	for i, n := range g.nodes {
		id := m.ids[i]
		if n.down {
			out = m.appendRestart(out, i, n, first)
			continue
		}
		out = m.appendTimers(out, i, n, first, limit)
		if len(n.pending) > 0 {
			out = m.appendLocal(out, i, ActorAction{Kind: ActApp, Node: id, Msg: n.pending[0].msg, Pending: true})
		}
		if ac, ok := n.st.Service.(node.AppCaller); ok {
			for _, call := range ac.AppCalls(id) {
				out = m.appendLocal(out, i, ActorAction{Kind: ActApp, Node: id, Msg: call})
			}
		}
		if canReset {
			out = m.appendResets(out, i, id)
		}
		if nodeFaults {
			out = m.appendNodeFaults(out, g, i)
		}
	}
	if g.breaks < m.opts.Faults.Breaks {
		for _, c := range g.conns {
			i, _ := m.index(c.lo)
			j, _ := m.index(c.hi)
			out = append(out,
				Action[ActorAction]{Node: i, Local: true, Fault: true, Act: ActorAction{Kind: ActBreak, Node: c.lo, Peer: c.hi}},
				Action[ActorAction]{Node: j, Local: true, Fault: true, Act: ActorAction{Kind: ActBreak, Node: c.hi, Peer: c.lo}})
		}
	}
	if g.drops < m.opts.Faults.Drops {
		out = m.appendDgrams(out, g, ActDropDatagram)
	}
	if m.canRefuse(g) {
		out = m.appendRefusals(out, g)
	}
	if m.delivery != nil {
		out = m.appendDelivery(out, g)
	}
	if m.opts.Faults.Delays > 0 {
		out = m.appendDelays(out, g)
	}
	if m.opts.Faults.Partitions > 0 {
		out = m.appendPartitions(out, g)
	}
	return out
}

// appendDgrams appends an action of kind (a datagram delivery or drop) for
// every distinct datagram in flight in g; a drop is the receiver's local
// action.
func (m *ActorModel) appendDgrams(out []Action[ActorAction], g *GlobalState, kind ActorActionKind) []Action[ActorAction] {
	for _, d := range g.dgrams {
		i, ok := m.index(d.to)
		if !ok {
			continue
		}
		for k, it := range d.items {
			if k > 0 && it.h == d.items[k-1].h {
				continue // an equal datagram: the same successor
			}
			out = append(out, Action[ActorAction]{Node: i, Local: kind == ActDropDatagram, Fault: kind == ActDropDatagram,
				Act: ActorAction{Kind: kind, Node: d.to, Peer: d.from, Msg: it.msg}})
		}
	}
	return out
}

// appendTimers appends the timers of node i (n) that may fire in a state
// whose earliest timer is due at first (limit: first plus the skew bound).
// No timer of a node whose earliest is due past limit may fire: one
// comparison spares the scan of its timers (most of a 100-node state's
// nodes).
func (m *ActorModel) appendTimers(out []Action[ActorAction], i int, n *actorNode, first, limit time.Time) []Action[ActorAction] {
	if !n.hasTimer || (n.first.After(limit) && !m.opts.AnyOrderTimers) {
		return out
	}
	id := m.ids[i]
	for _, t := range n.st.Timers {
		if m.timerEnabled(n, id, t, first) {
			out = m.appendLocal(out, i, ActorAction{Kind: ActTimer, Node: id, Timer: t.Name})
		}
	}
	return out
}

// appendLocal appends the timer or application call a of node i unless a
// filter postpones it.
func (m *ActorModel) appendLocal(out []Action[ActorAction], i int, a ActorAction) []Action[ActorAction] {
	if !m.intercept(a).Handle {
		return out
	}
	return append(out, Action[ActorAction]{Node: i, Local: true, Act: a})
}

// intercept returns the filters' verdict on a.
func (m *ActorModel) intercept(a ActorAction) layer.Verdict {
	if m.opts.Intercept == nil {
		return layer.Verdict{Handle: true}
	}
	return m.opts.Intercept(a)
}

// WithFaults returns a model with the same start state that explores
// faults f instead (see Faults). The two models share their start state,
// so their fingerprints and paths are comparable.
func (m *ActorModel) WithFaults(f Faults) *ActorModel {
	c := m.WithIntercept(m.opts.Intercept)
	c.opts.Faults = f
	return c
}

// WithOutside returns a model with the same start state that reports the
// messages sent outside the snapshot to outside (see
// ActorOptions.Outside); nil stops the reports.
func (m *ActorModel) WithOutside(outside func(from, to node.ID, msg node.Message)) *ActorModel {
	c := m.WithIntercept(m.opts.Intercept)
	c.opts.Outside = outside
	return c
}

// WithIntercept returns a model with the same start state whose events
// pass through intercept (see ActorOptions.Intercept); nil removes the
// filters. The two models share their start state, so their fingerprints
// and paths are comparable.
func (m *ActorModel) WithIntercept(intercept func(ActorAction) layer.Verdict) *ActorModel {
	c := *m
	c.opts.Intercept = intercept
	c.cores = make([]sync.Pool, len(m.ids))
	for i := range c.cores {
		c.cores[i].New = m.cores[i].New
	}
	return &c
}

// transition is Next before the observer (observe.go): it runs the
// action's handler on a clone of the
// node's state with a pooled scratch core and builds the successor, which
// shares every unchanged node state and channel with g (and, when g was
// unpacked by a Packer of NewPacker, uses the search's canonical equal of
// every part it builds, so that its own copy dies at once). A panic in the
// handler gives a successor flagged crashed instead (see Crash), so a
// search reports it as a violation of CrashProperty. A message outside
// Spec.Messages — sent by the handler, an application call or a restart
// call — breaks the model's contract (node.Registry.CheckMessage): Next
// panics with an error wrapping ErrInvalidModel, which Checker.Run and the
// random walks return.
func (m *ActorModel) transition(g *GlobalState, a ActorAction) (*GlobalState, bool) {
	if g.crash != nil {
		return nil, false
	}
	i, ok := m.index(a.Node)
	if !ok {
		return nil, false
	}
	switch a.Kind {
	case ActDeliver:
		return m.nextDeliver(g, i, a)
	case ActDeliverDatagram, ActDropDatagram:
		return m.nextDatagram(g, i, a)
	case ActTimer:
		return m.nextTimer(g, i, a)
	case ActApp:
		return m.nextApp(g, i, a)
	case ActReset:
		return m.nextReset(g, i, a)
	case ActBreak:
		return m.nextBreak(g, a)
	case ActRefuse:
		return m.nextRefuse(g, i, a)
	case ActLose, ActDuplicate, ActDeliverAhead:
		return m.nextDelivery(g, i, a)
	case ActDelay:
		return m.nextDelay(g, a)
	case ActCrash:
		return m.nextCrash(g, i, a)
	case ActRestart:
		return m.nextRestart(g, i)
	case ActPartition:
		return m.nextPartition(g, a)
	case ActHeal:
		return m.nextHeal(g)
	case ActClockJump:
		return m.nextJump(g, i, a)
	}
	return nil, false
}

// nextDeliver delivers the head of the channel a.Peer → a.Node to node i:
// a message (unless a filter drops it, perhaps breaking the connection)
// or the transport error a broken connection left there.
func (m *ActorModel) nextDeliver(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	n := g.nodes[i]
	c := g.channel(a.Peer, a.Node)
	if c == nil {
		return nil, false
	}
	head, rest := c.items[0], c.items[1:]
	if k, ok := c.overtaking(); ok && a.Msg != nil {
		// A message overtaking late transport errors.
		head = c.items[k]
		rest = append(slices.Clone(c.items[:k]), c.items[k+1:]...)
	}
	if head.msg == nil && !m.intercept(ActorAction{Kind: ActDeliver, Node: a.Node, Peer: a.Peer}).Handle {
		// A filter postpones the transport error: it stays where it is in
		// the channel, not enabled in this state, as a postponed timer.
		return nil, false
	}
	s := newSucc(g)
	s.setChan(a.Peer, a.Node, rest)
	if head.msg != nil {
		switch v := m.intercept(ActorAction{Kind: ActDeliver, Node: a.Node, Peer: a.Peer, Msg: head.msg}); {
		case v.Handle:
		case !v.Break:
			return s.g, true
		default:
			if a.Peer != a.Node {
				s.breakConn(a.Node, a.Peer)
			}
			return s.g, true
		}
	}
	ev := node.Event{Kind: node.EventMessage, From: a.Peer, Msg: head.msg, At: n.now}
	if head.msg == nil {
		ev = node.Event{Kind: node.EventTransportError, Peer: a.Peer, At: n.now}
		if g.Stale(a.Node, a.Peer) {
			// The error is about the connection the node holds; if the
			// peer has opened a new one since, that one stays open.
			s.clearStale(a.Node, a.Peer)
			s.disconnect(a.Node, a.Peer)
		}
	} else {
		// Something arrived: established, bound to this incarnation.
	}
	return m.run(g, s, i, n.pending, ev)
}

// nextDatagram delivers (unless a filter drops it) or, within
// Faults.Drops, drops the datagram a.Msg in flight from a.Peer to node i.
func (m *ActorModel) nextDatagram(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	n := g.nodes[i]
	d := g.dgramSet(a.Peer, a.Node)
	if d == nil || a.Msg == nil || (a.Kind == ActDropDatagram && g.drops >= m.opts.Faults.Drops) {
		return nil, false
	}
	h, err := m.msgHash(a.Msg)
	if err != nil {
		return nil, false
	}
	k, ok := d.find(h)
	if !ok {
		return nil, false
	}
	msg := d.items[k].msg
	s := newSucc(g)
	s.removeDgram(a.Peer, a.Node, k)
	if a.Kind == ActDropDatagram {
		s.setFaults(g.resets, g.breaks, g.drops+1)
		return s.g, true
	}
	if !m.intercept(ActorAction{Kind: ActDeliverDatagram, Node: a.Node, Peer: a.Peer, Msg: msg}).Handle {
		// Dropped by a filter; a datagram's sender holds no connection to
		// break.
		return s.g, true
	}
	return m.run(g, s, i, n.pending, node.Event{Kind: node.EventMessage, From: a.Peer, Msg: msg, At: n.now})
}

// nextTimer fires node i's timer a.Timer (not before the node's clock),
// unless a filter postpones it or the virtual clock holds it back.
func (m *ActorModel) nextTimer(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	n := g.nodes[i]
	at, ok := n.st.TimerAt(a.Timer)
	if !ok || !m.intercept(a).Handle {
		return nil, false
	}
	t := node.Timer{Name: a.Timer, At: at}
	if first, _ := m.earliest(g); !m.timerEnabled(n, a.Node, t, first) {
		return nil, false // held back by the virtual clock
	}
	at = due(n, t)
	return m.run(g, newSucc(g), i, n.pending, node.Event{Kind: node.EventTimer, Timer: a.Timer, At: at})
}

// nextApp runs an application call on node i: a.Msg, or the first of its
// pending calls (a.Pending), unless a filter postpones it. A call outside
// the spec is a broken model (ErrInvalidModel).
func (m *ActorModel) nextApp(g *GlobalState, i int, a ActorAction) (*GlobalState, bool) {
	n := g.nodes[i]
	pending := n.pending
	msg := a.Msg
	if a.Pending {
		if len(pending) == 0 {
			return nil, false
		}
		msg, pending = pending[0].msg, pending[1:]
	}
	if msg == nil || !m.intercept(ActorAction{Kind: ActApp, Node: a.Node, Msg: msg, Pending: a.Pending}).Handle {
		return nil, false
	}
	if err := m.reg.CheckMessage(msg); err != nil {
		panic(fmt.Errorf("%w: application call of %v: %w", ErrInvalidModel, a.Node, err))
	}
	return m.run(g, newSucc(g), i, pending, node.Event{Kind: node.EventApp, Msg: msg, At: n.now})
}

// restartCalls returns the application calls node id receives after a
// reset (the workload's, else the service's node.Restarter), as pending
// calls. A call outside the spec is a broken model (ErrInvalidModel).
func (m *ActorModel) restartCalls(n *actorNode, id node.ID) []inflight {
	var calls []node.Message
	if m.opts.Workload != nil {
		calls = m.opts.Workload(id, true)
	} else if r, ok := n.st.Service.(node.Restarter); ok {
		calls = r.RestartCalls(id)
	}
	pending := make([]inflight, 0, len(calls))
	for _, call := range calls {
		h, err := m.msgHash(call)
		if err != nil {
			panic(fmt.Errorf("%w: restart call of %v: %w", ErrInvalidModel, id, err))
		}
		pending = append(pending, inflight{msg: call, h: h})
	}
	return pending
}

// send puts a message from id on the connection to a node to of the
// snapshot, with the emulator's connection rules (see the package
// documentation, "Resets and connections").
func (m *ActorModel) send(s *succ, id, to node.ID, it inflight) {
	if s.g.ext != nil && m.sendLost(s, id, to) {
		return
	}
	if s.g.Stale(id, to) {
		// A write over a stale connection: lost, and answered by an RST
		// (one transport error, however many writes).
		if !s.g.teQueued(to, id) {
			s.appendChan(to, id, lateTE)
		}
		return
	}
	if k, mark, ok := s.g.syn(id, to); ok && mark&synGhost != 0 {
		// A connection id's previous incarnation opened: this write opens
		// a new one, which replaces it at to before its first message
		// arrives, and its messages are refused.
		s.refuse(id, to, k)
	}
	k, mark, refused := s.g.syn(to, id)
	refused = refused && mark&synOrphan != 0
	if refused {
		// to opened a connection to id's previous incarnation: id's new
		// incarnation opens its own, and to's is refused when its first
		// message arrives — lost, and to learns of it after what id
		// sends now.
		s.refuse(to, id, k)
		s.disconnect(id, to)
	}
	it.syn = 0
	if !s.g.Connected(id, to) {
		s.connect(id, to)
		if m.tracksSYN(s.g) {
			it.syn = synFresh
		}
	}
	s.appendChan(id, to, it)
	if refused {
		s.appendChan(id, to, lateTE)
	}
	// The receiver's stale socket for id, if any, is replaced.
	s.clearStale(to, id)
}

// run steps node i with ev on a clone of its state, applies the effects to
// s (with the node's pending calls set to pending) and returns the
// successor; a handler panic yields the crashed successor of parent.
func (m *ActorModel) run(parent *GlobalState, s *succ, i int, pending []inflight, ev node.Event) (*GlobalState, bool) {
	id := m.ids[i]
	old := parent.nodes[i]
	st, err := old.st.Clone(m.spec.New)
	if err != nil {
		panic(fmt.Sprintf("consequence: cloning the state of %v: %v", id, err))
	}
	if ev.Kind == node.EventReset && !m.opts.AnyOrderTimers {
		// The virtual clock has reached the latest timer fired: the new
		// incarnation starts no earlier, and arms its timers from there.
		// (Other events keep the node's clock, so that deadlines armed
		// in handlers depend only on the node's own firings and states
		// do not multiply by the order of other nodes' timers.)
		ev.At = latest(ev.At, parent.now())
	}
	off := offsetOf(s.g.ext, i)
	verify := m.verifies(old, ev)
	var twin twinStep
	if verify {
		var err error
		twin, err = m.stepTwin(i, old, ev, off)
		verify = err == nil // a handler that panics is the crash below
	}
	var sent uint64 // the digest of the sends, when verifying
	core := m.cores[i].Get().(*node.Core)
	if off != 0 {
		// The handler runs on the node's own clock (clockjump.go).
		shiftTimers(st.Timers, off)
		ev.At = ev.At.Add(off)
	}
	core.SetState(st, old.now.Add(off))
	var stepErr, sendErr error
	var marks []node.HistoryMark // the step's client-history marks (history.go)
	refusable := m.opts.Faults.Refusals > 0
	var win uint8 // the window's length so far
	if refusable {
		// A step of the node closes its refusal window, but for what a
		// refusal leaves of it (nextRefuse); its TrySends join the window
		// while the budget lasts.
		if ev.Kind == node.EventSendRefused {
			win = s.windowLen(id)
		} else {
			s.clearWindow(id)
		}
		refusable = m.canRefuse(s.g)
	}
	crash := func() (crash any) {
		defer func() { crash = recover() }()
		fx, err := core.Step(ev)
		if err != nil {
			stepErr = err
			return nil
		}
		marks = fx.History
		for k := range fx.Sends {
			env := &fx.Sends[k]
			if verify {
				sent = m.digestSend(sent, *env)
			}
			if _, ok := m.index(env.To); !ok {
				if m.opts.Outside != nil {
					m.opts.Outside(id, env.To, env.Msg)
				}
				continue // the dummy sink
			}
			h, err := m.msgHash(env.Msg)
			if err != nil {
				sendErr = fmt.Errorf("%w: %v %v: sent to %v: %w", ErrInvalidModel, id, ev, env.To, err)
				return nil
			}
			if env.Datagram {
				if s.g.ext == nil || !s.g.datagramLost(id, env.To) {
					s.addDgram(id, env.To, inflight{msg: env.Msg, h: h})
				}
				continue // no connection
			}
			it := inflight{msg: env.Msg, h: h, at: m.sentAt(ev.At)}
			if refusable && env.Refusable && env.To != id && win < maxWindow {
				win++
				it.win = win
			}
			if env.To == id {
				s.appendChan(id, env.To, it)
				continue
			}
			m.send(s, id, env.To, it)
		}
		return nil
	}()
	if crash != nil {
		// The core's state is unspecified after a panic: drop the core.
		c := newSucc(parent)
		c.setCrash(&Crash{Node: id, Event: ev.String(), Value: fmt.Sprint(crash)})
		return c.g, true
	}
	if stepErr != nil {
		panic(fmt.Sprintf("consequence: %v %v: %v", id, ev, stepErr))
	}
	if sendErr != nil {
		// Not a behaviour to explore: a message outside Spec.Messages is
		// an error in every host (node.Registry.CheckMessage).
		panic(sendErr)
	}
	m.recordHistory(s, id, core.Now(), marks)
	n := &actorNode{st: *core.State(), now: core.Now(), pending: pending}
	if off != 0 {
		shiftTimers(n.st.Timers, -off)
		n.now = n.now.Add(-off)
	}
	if verify {
		m.checkTwin(id, old, ev, &n.st, sent, twin)
	}
	// The state now belongs to n: the core must not keep it.
	core.SetState(node.State{}, time.Time{})
	m.cores[i].Put(core)
	if err := m.hashNode(n); err != nil {
		panic(fmt.Sprintf("consequence: hashing the state of %v: %v", id, err))
	}
	if s.g.in != nil {
		n = s.g.in.node(i, n) // an equal node state's clone dies here
	}
	s.setNode(i, n)
	m.setClock(s, i, old)
	return s.g, true
}

// stepSafe steps c, turning a handler panic into an error.
func stepSafe(c *node.Core, ev node.Event) (fx node.Effects, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panicked: %v", r)
		}
	}()
	return c.Step(ev)
}

// Properties returns the built-in crash property followed by the spec's
// properties adapted to global states (AdaptProperty).
func (m *ActorModel) Properties() []Property[*GlobalState] {
	out := []Property[*GlobalState]{CrashCheck()}
	for _, p := range m.spec.Properties {
		out = append(out, AdaptProperty(p))
	}
	return out
}

// CrashCheck returns the built-in safety property CrashProperty: it fails
// on a state in which a handler panicked, with the Crash as its error.
func CrashCheck() Property[*GlobalState] {
	return Always(CrashProperty, func(g *GlobalState) error {
		if g.crash != nil {
			return g.crash
		}
		return nil
	})
}

// AdaptProperty turns a service property over node.View into a property
// of global states (a GlobalState is a node.View of the snapshot's nodes).
// It holds trivially on crashed states, which CrashProperty reports.
func AdaptProperty(p node.Property) Property[*GlobalState] {
	if p.Kind == node.Bounded || p.Kind == node.HistoryKind {
		return adaptObserved(p)
	}
	check := p.Check
	return Property[*GlobalState]{Name: p.Name, Kind: p.Kind, Check: func(g *GlobalState) error {
		if g.crash != nil {
			return nil
		}
		return check(g)
	}}
}
