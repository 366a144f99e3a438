package emulation

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"runtime/debug"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Epoch is virtual time zero: every run starts at Epoch and Env.Now, trace
// clocks and Result times are measured from it. Do not modify it.
var Epoch = time.Unix(0, 0).UTC()

// Emulator runs many node.Cores in one process on virtual time, over an
// emulated network, as a deterministic discrete-event loop (see the package
// documentation for the model). Build it with New; drive it with Run, or
// step-wise with Step, RunUntil and the scenario methods (Reset, Down, Up,
// AppCall, BreakConnection).
//
// An Emulator is a single-threaded value: it starts no goroutines and is not
// safe for concurrent use. After a failure (a handler panic, see
// PanicError) it is stuck: Step returns false and Err reports the failure.
type Emulator struct {
	cfg   settings
	topo  Topology
	nodes []*emNode // index = ID; [0] is nil
	live  []node.ID // ascending IDs of live nodes: the view's Nodes()
	view  node.View
	q     eventQueue
	now   time.Duration // virtual time since Epoch
	err   error

	netKey  uint64 // per-channel jitter/loss streams derive from it
	churn   *mrand.Rand
	breaks  *mrand.Rand // scheduled connection breaks (breaks.go); nil without
	connSeq uint64
	netID   uint64 // the last message or datagram ID (NetworkEvent.ID)

	// delivery is the declared delivery model (delivery.go); nil when the
	// service declares nothing or Config.Delivery sets no rate.
	delivery *deliveryRun

	safety   []safetyState
	liveness []node.Property
	timed    []timedState // liveness and bounded properties over time (judge.go)
	history  runHistory   // the client history and its properties (history.go)

	st      counters
	tbuf    []byte    // trace line buffer, reused
	scratch []node.ID // reused by takeDown

	registry                  *node.Registry // the service's and the snapshot protocol's, for the snapshot layers
	messages                  *node.Registry // Spec.Messages: what a service may send and be called with
	obsSeq                    uint64         // observation order (OnNetwork, OnCheckpoint)
	snapGathers, snapFailures int64
	steer                     *SteeringConfig // resolved Config.Steering; nil without
	rounds                    roundHost       // what runs and judges the steering rounds (steering.go)
	rates                     eventCounts     // timers' delays, messages' latencies, lasting faults (rates.go)
	faults                    faultState      // scripted partitions and drops (faults.go)
	envBuf                    []node.Envelope // reused by checkSends
	wireBuf                   []byte          // reused by wireSize
	links                     linkCounters    // the link model's, summed over nodes
	nem                       *nemesis        // the lasting faults (nemesis.go); nil without
}

// emNode is the emulator's record of one node.
type emNode struct {
	id      node.ID
	core    *node.Core
	started bool // has run EventInit
	live    bool // started and not down
	inc     uint64
	timers  map[string]uint64 // timer name → seq of its live queue entry
	peers   map[node.ID]*peer
	// pipe runs the node's layers around its core (layer.Pipeline): the
	// snapshot layer with Config.Snapshots, the DropNext faults, the
	// steering layer with Config.Steering. Every core step goes through
	// it, and it holds the events steering postponed. pipeSeq is the seq
	// of the queued item for its next due time (0: none), pipeAt that time.
	pipe    *layer.Pipeline
	pipeSeq uint64
	pipeAt  time.Duration
	// snapAt and faultAt are the pipeline positions of the snapshot and
	// fault layers (-1: none); steering, when present, comes after them.
	snapAt, faultAt int
	// snap is the snapshot layer and what its After calls hold for
	// afterStep (snapshots.go).
	// arrival is the delivery report waiting for the checkpoint it may
	// force (observeArrival); gathered is set when a gather completed
	// since the loop last ran the layers' due ticks (afterLayers);
	// snapBusy when the layer's Manager did anything since pipeDue reset
	// it.
	snap                           nodeSnapshots
	arrival                        NetworkEvent
	arrivalSet, gathered, snapBusy bool
	// steer is the steering layer and the intervention it reported for
	// the event being run (steering.go).
	steer nodeSteering
	// upFree and downFree are when the node's uplink and downlink finish
	// serialising what is queued on them (links.go); refused holds its
	// refused sends until runRefusals reports them (refusing while it
	// does), refusedAt and refusedRun count its refusals at one instant;
	// links are its link counters.
	upFree, downFree time.Duration
	refused          []refusal
	refusing         bool
	refusedAt        time.Duration
	refusedRun       int
	links            linkCounters
	// clockOffset is how far the node's clock is off virtual time (its
	// clock jumps), skew how late its timers fire (clockjump.go).
	clockOffset, skew time.Duration
}

// peer is what node n keeps about one peer p: its socket to p and the
// network's state of the directed channel n→p.
type peer struct {
	conn *conn         // n's connection to p; nil when none
	last time.Duration // latest delivery time scheduled on channel n→p
	rng  mrand.PCG     // the channel's jitter and loss draws
	dg   *mrand.PCG    // the datagrams' jitter and loss draws n→p; nil until the first
	dv   *deliveryChan // declared delivery faults n→p (delivery.go); nil until the first
	sq   sendQueue     // the connection's send queue at n's uplink (links.go)
}

// conn is one TCP-like connection between nodes a and b, recording the
// incarnation of each end when it was established.
type conn struct {
	id         uint64
	a, b       node.ID
	incA, incB uint64
	// pending is set while the connection's first message (its SYN) is on
	// its way to b: b's end is not established yet, so whichever
	// incarnation of b is up when it arrives accepts it, and incB is bound
	// then (bindSYN).
	pending bool
	// broken is set when the connection was broken explicitly (or refused):
	// everything in flight on it is lost.
	broken bool
	// doomedA/doomedB: a transport error about this connection is on its
	// way to (or was delivered at) that end, so further losses there are
	// not reported twice.
	doomedA, doomedB bool
}

func (c *conn) incOf(id node.ID) uint64 {
	if id == c.a {
		return c.incA
	}
	return c.incB
}

func (c *conn) doomed(id node.ID) bool {
	if id == c.a {
		return c.doomedA
	}
	return c.doomedB
}

func (c *conn) setDoomed(id node.ID) {
	if id == c.a {
		c.doomedA = true
	} else {
		c.doomedB = true
	}
}

// New validates cfg, applies defaults, builds the nodes' cores and
// schedules their starts (and the first churn event). Nothing runs until
// Step, RunUntil or Run. Errors are prefixed "emulation:".
func New(cfg Config) (*Emulator, error) {
	s, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	e := &Emulator{cfg: s, topo: s.Topology}
	if e.topo == nil {
		t, err := NewAccessTopology(s.Nodes, AccessConfig{}, deriveSeed(s.Seed, streamTopology))
		if err != nil {
			return nil, err
		}
		e.topo = t
	}
	e.view = globalView{e}
	if e.messages, err = s.Spec.Registry(); err != nil {
		return nil, fmt.Errorf("emulation: %w", err)
	}
	if e.registry, err = layersRegistry(s); err != nil {
		return nil, err
	}
	if err := e.setUpRounds(s); err != nil {
		return nil, err
	}
	e.netKey = deriveSeed(s.Seed, streamNetwork)
	e.delivery = newDeliveryRun(s.Spec, s.Delivery)
	e.nodes = make([]*emNode, s.Nodes+1)
	e.live = make([]node.ID, 0, s.Nodes)
	coreSeed := deriveSeed(s.Seed, streamCores)
	start := newStream(s.Seed, streamStart)
	for i := 1; i <= s.Nodes; i++ {
		id := node.ID(i)
		core, err := node.NewCore(node.CoreConfig{
			ID:      id,
			Factory: s.Spec.New,
			Seed:    deriveSeed(coreSeed, uint64(id)),
			Logger:  s.Logger,
		})
		if err != nil {
			return nil, fmt.Errorf("emulation: node %v: %w", id, err)
		}
		e.nodes[i] = &emNode{id: id, core: core, timers: map[string]uint64{}, peers: map[node.ID]*peer{}}
		if err := e.newPipeline(e.nodes[i]); err != nil {
			return nil, fmt.Errorf("emulation: node %v: %w", id, err)
		}
		it := e.q.alloc()
		it.kind, it.node = itemStart, id
		it.at = time.Duration(start.Float64() * float64(s.StartSpread))
		e.q.push(it)
	}
	if s.Churn.Rate > 0 {
		e.churn = newStream(s.Seed, streamChurn)
		e.scheduleChurn(s.Churn.After)
	}
	if s.Breaks.Rate > 0 {
		e.breaks = newStream(s.Seed, streamBreaks)
		e.scheduleBreak(s.Breaks.After)
	}
	e.startNemesis()
	for _, p := range s.Spec.Properties {
		switch p.Kind {
		case node.Safety:
			e.safety = append(e.safety, safetyState{prop: p, res: SafetyResult{Name: p.Name}})
		case node.Liveness:
			e.liveness = append(e.liveness, p)
			e.timed = append(e.timed, newTimed(p))
		case node.Bounded:
			e.timed = append(e.timed, newTimed(p))
		case node.HistoryKind:
			e.history.props = append(e.history.props, p)
		}
	}
	return e, nil
}

// Now returns the current virtual time: the time of the last processed
// event, or the limit of the last RunUntil/Run if that is later.
func (e *Emulator) Now() time.Time { return Epoch.Add(e.now) }

// Elapsed returns the virtual time since Epoch.
func (e *Emulator) Elapsed() time.Duration { return e.now }

// Err returns the failure that stopped the loop (nil if none).
func (e *Emulator) Err() error { return e.err }

// Core returns the core of node id (nil for an ID outside 1..Nodes). The
// core is the emulator's own: read it, do not Step it. While a node is down
// its core still holds the state it had when it went down.
func (e *Emulator) Core(id node.ID) *node.Core {
	if n := e.node(id); n != nil {
		return n.core
	}
	return nil
}

// Live reports whether node id has started and is not down.
func (e *Emulator) Live(id node.ID) bool {
	n := e.node(id)
	return n != nil && n.live
}

// Incarnation returns node id's incarnation number: 0 at start, incremented
// by every reset and every leave.
func (e *Emulator) Incarnation(id node.ID) uint64 {
	if n := e.node(id); n != nil {
		return n.inc
	}
	return 0
}

// View returns the true global state: the live nodes and their service
// states. It is the view the observer evaluates properties on. It reflects
// the emulator as it is when read; the slice returned by Nodes is valid only
// until the next event.
func (e *Emulator) View() node.View { return e.view }

// Pending returns the number of queued items (scheduled events, some of
// which may turn out stale and be skipped).
func (e *Emulator) Pending() int { return e.q.Len() }

func (e *Emulator) node(id node.ID) *emNode {
	if id == node.None || uint64(id) >= uint64(len(e.nodes)) {
		return nil
	}
	return e.nodes[id]
}

// Step processes the next event and reports whether it did. It returns
// false when the queue is empty or the loop has failed (see Err). Stale
// queue entries (cancelled timers, errors for a node that has since reset)
// are skipped without counting as events.
func (e *Emulator) Step() bool { return e.stepUntil(time.Duration(1<<63 - 1)) }

// stepUntil processes the next event due at or before limit.
func (e *Emulator) stepUntil(limit time.Duration) bool {
	for e.err == nil {
		it := e.q.peek()
		if it == nil || it.at > limit {
			return false
		}
		e.q.pop()
		if it.at > e.now {
			e.now = it.at
		}
		handled := e.process(it)
		e.q.release(it)
		if handled {
			return e.err == nil
		}
	}
	return false
}

// RunUntil processes every event due at or before t, then advances the
// clock to t (if it is later than Now). It returns Err.
func (e *Emulator) RunUntil(t time.Time) error {
	return e.RunUntilContext(context.Background(), t)
}

// RunUntilContext is RunUntil that ctx cancels: it checks ctx every 1024
// events and hands it to the steering rounds (a cancelled round installs
// only its replayed paths' filters). On cancellation it returns ctx's
// error with the clock at the last processed event; a later call goes on
// from there.
func (e *Emulator) RunUntilContext(ctx context.Context, t time.Time) error {
	limit := t.Sub(Epoch)
	if err := e.runUntil(ctx, limit); err != nil {
		return err
	}
	if e.err == nil && limit > e.now {
		e.now = limit
	}
	return e.err
}

// runUntil processes events due at or before limit until none is left,
// the loop fails or ctx ends (its error is returned).
func (e *Emulator) runUntil(ctx context.Context, limit time.Duration) error {
	defer e.rounds.bind(ctx)()
	for i := 0; ; i++ {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !e.stepUntil(limit) {
			return nil
		}
	}
}

// Run emulates until Config.Duration of virtual time has passed (from
// Epoch, so a Run after some Steps finishes the same run), then evaluates
// the liveness properties on the final state and returns the Result. It
// checks ctx every 1024 events and hands it to the steering rounds; on
// cancellation it returns the partial Result and ctx's error. On a
// handler panic it returns the partial Result and a *PanicError. Run
// reads the wall clock (Config.WallClock) only to fill Result.WallTime.
func (e *Emulator) Run(ctx context.Context) (Result, error) {
	if e.cfg.Duration <= 0 {
		return Result{}, errors.New("emulation: Run needs a positive Config.Duration")
	}
	wall := e.cfg.WallClock()
	if err := e.runUntil(ctx, e.cfg.Duration); err != nil {
		r := e.Result()
		r.WallTime = e.cfg.WallClock().Sub(wall)
		return r, err
	}
	if e.err == nil && e.cfg.Duration > e.now {
		e.now = e.cfg.Duration
	}
	r := e.Result()
	r.WallTime = e.cfg.WallClock().Sub(wall)
	return r, e.err
}

// process carries out one queue item and reports whether it was an event.
func (e *Emulator) process(it *item) bool {
	switch it.kind {
	case itemStart:
		n := e.nodes[it.node]
		n.started = true
		e.setLive(n, true)
		e.stepCore(n, node.Event{Kind: node.EventInit}, "")
		if e.err == nil {
			e.sendLayer(n, n.pipe.Start(e.clockOf(n)).Sends)
			e.syncPipe(n)
		}
		e.queueWorkload(n, false)
		return true

	case itemApp:
		n := e.nodes[it.node]
		if !n.live || n.inc != it.inc {
			e.st.count(kindDrop)
			e.traceDrop(n.id, "app", it.msg, node.None, "node reset or down")
			return true
		}
		e.runEvent(n, node.Event{Kind: node.EventApp, Msg: it.msg}, nil, "")
		return true

	case itemDeliver:
		if it.atLink {
			return e.downlink(it)
		}
		return e.deliver(it)

	case itemTimer:
		n := e.nodes[it.node]
		if !n.live || n.inc != it.inc || n.timers[it.name] != it.seq {
			return false // cancelled, rescheduled or lost in a reset
		}
		// Handled or postponed (the pipeline then holds it, and forgets it
		// if the service cancels or sets the timer meanwhile).
		delete(n.timers, it.name)
		e.runEvent(n, node.Event{Kind: node.EventTimer, Timer: it.name, Deadline: Epoch.Add(it.dl)}, nil, "")
		return true

	case itemTransportError:
		n := e.nodes[it.node]
		if !n.live || n.inc != it.inc {
			return false // the socket died with the node's incarnation
		}
		if p := n.peers[it.peer]; p != nil && p.conn == it.conn {
			p.conn = nil
		}
		e.st.transportErrors++
		e.runEvent(n, node.Event{Kind: node.EventTransportError, Peer: it.peer}, nil, "")
		return true

	case itemChurn:
		return e.churnLeave()

	case itemBreak:
		return e.networkBreak()

	case itemDuplicate:
		return e.duplicateNow(it)
	case itemNemesis:
		return e.nemesisDue(it)

	case itemPipeline:
		return e.pipeDue(it)

	case itemRejoin:
		n := e.nodes[it.node]
		if n.live || n.inc != it.inc {
			return false // brought up (and maybe down again) by the API
		}
		e.st.rejoins++
		e.bringUp(n, "up")
		return true
	}
	panic(fmt.Sprintf("emulation: unknown queue item kind %d", it.kind))
}

// setLive adds n to or removes it from the ascending live list.
func (e *Emulator) setLive(n *emNode, live bool) {
	n.live = live
	i, found := slices.BinarySearch(e.live, n.id)
	switch {
	case live && !found:
		e.live = slices.Insert(e.live, i, n.id)
	case !live && found:
		e.live = slices.Delete(e.live, i, i+1)
	}
}

// queueWorkload queues the workload's application calls for n, due now.
func (e *Emulator) queueWorkload(n *emNode, restart bool) {
	if e.cfg.Workload == nil || e.err != nil {
		return
	}
	var calls []node.Message
	func() {
		defer func() {
			if r := recover(); r != nil {
				e.fail(&PanicError{Node: n.id, Event: "workload", At: e.now, Seed: e.cfg.Seed, Value: r, Stack: debug.Stack()})
			}
		}()
		calls = e.cfg.Workload(n.id, restart)
	}()
	for _, m := range calls {
		if m == nil {
			continue
		}
		if e.checkCall(n, m) != nil {
			return
		}
		it := e.q.alloc()
		it.kind, it.at, it.node, it.inc, it.msg = itemApp, e.now, n.id, n.inc, m
		e.q.push(it)
	}
}

// checkCall applies node.Registry.CheckMessage to an application call
// for n (a workload's, Submit's or AppCall's): a call outside
// Spec.Messages fails the run, as the explorer and nodetest reject it.
func (e *Emulator) checkCall(n *emNode, m node.Message) error {
	if err := e.messages.CheckMessage(m); err != nil {
		e.fail(fmt.Errorf("emulation: node %v: application call %s at %s: %w; rerun with seed=%d", n.id, msgType(m), clock(e.now), err, e.cfg.Seed))
		return e.err
	}
	return nil
}

// checkSends applies node.Registry.CheckSends to the messages n's service
// sent in o (not the layers' own): a send outside Spec.Messages fails the
// run, as the explorer and nodetest reject it.
func (e *Emulator) checkSends(n *emNode, o *layer.Outcome, label string) error {
	envs := e.envBuf[:0]
	for i := range o.Sends {
		if !o.Sends[i].Layer {
			envs = append(envs, o.Sends[i].Env)
		}
	}
	err := e.messages.CheckSends(envs)
	clear(envs)
	e.envBuf = envs[:0]
	if err != nil {
		e.fail(fmt.Errorf("emulation: node %v on %s at %s: %w; rerun with seed=%d", n.id, describe(o.Event, label), clock(e.now), err, e.cfg.Seed))
	}
	return err
}

// stepCore runs ev on n's core through its pipeline at the current
// virtual time, for an event no layer keeps from the core (init, reset;
// the scripted AppCall bypasses the layers' gates: the pipeline's
// StepUngated), and carries out the effects. label, when set, names the event in the trace instead of its
// kind (reset, up).
func (e *Emulator) stepCore(n *emNode, ev node.Event, label string) {
	ev.At = e.clockOf(n)
	step := n.pipe.Step
	if ev.Kind == node.EventApp {
		step = func(ev node.Event, _ *node.Envelope) layer.Outcome { return n.pipe.StepUngated(ev) }
	}
	if o, ok := e.safeRun(n, ev, label, func() layer.Outcome { return step(ev, nil) }); ok {
		e.carryOut(n, o, label, nil)
	}
}

// runEvent runs ev (a message received as in, a timer, an application call
// or a transport error) through n's pipeline at the current virtual time:
// the layers may keep it from the core (steering drops a message or
// postpones the rest; the pipeline holds a postponed event and the loop
// delivers it again when due, pipeDue). label is as for stepCore
// (labelDatagram for a datagram's arrival).
func (e *Emulator) runEvent(n *emNode, ev node.Event, in *node.Envelope, label string) {
	ev.At = e.clockOf(n)
	o, ok := e.safeRun(n, ev, label, func() layer.Outcome { return n.pipe.Step(ev, in) })
	e.flushArrival(n)
	if ok {
		e.carryOut(n, o, label, in)
	}
}

// safeRun runs one pipeline call for n, turning a handler panic into a
// *PanicError (the loop is then stuck) and ok false.
func (e *Emulator) safeRun(n *emNode, ev node.Event, label string, run func() layer.Outcome) (o layer.Outcome, ok bool) {
	defer func() {
		if r := recover(); r != nil {
			e.fail(&PanicError{Node: n.id, Event: describe(ev, label), At: e.now, Seed: e.cfg.Seed, Value: r, Stack: debug.Stack()})
			ok = false
		}
	}()
	return run(), true
}

// carryOut carries out one pipeline outcome for n: an event kept from the
// core is counted and reported (and a connection its verdict breaks is
// broken); a handled one's effects go out as stepped does. in is the
// received envelope of a message (nil otherwise).
func (e *Emulator) carryOut(n *emNode, o layer.Outcome, label string, in *node.Envelope) {
	if len(o.Errors) > 0 {
		e.fail(fmt.Errorf("emulation: node %v on %s at %s: %w; rerun with seed=%d", n.id, describe(o.Event, label), clock(e.now), errors.Join(o.Errors...), e.cfg.Seed))
	} else if o.Handled {
		e.stepped(n, o, label)
		n.snap.after, n.snap.afterSends = n.snap.after[:0], 0 // reported by stepped unless it failed
		if len(n.refused) > 0 {
			e.runRefusals(n) // before the layers' ticks: nothing comes between a send and its refusal
		}
	} else if o.Kept >= 0 {
		e.kept(n, o, label, in)
	}
	e.afterLayers(n)
}

// afterLayers runs n's layers' due ticks when a gather completed during
// the last layer call (a steering round's replayed paths' filters take
// effect at once), then re-arms n's pipeline item.
func (e *Emulator) afterLayers(n *emNode) {
	e.tickGathered(n)
	e.syncPipe(n)
}

// tickGathered runs n's layers' due ticks if a gather completed since
// they last ran.
func (e *Emulator) tickGathered(n *emNode) {
	if n.gathered && e.err == nil && n.live {
		n.gathered = false
		e.tickLayers(n)
	}
	n.gathered = false
}

// kept counts and reports an event a layer kept from n's core: a protocol
// message the snapshot layer consumed, a message a DropNext fault
// discarded (dropFault reported it), or an event steering dropped or
// postponed.
func (e *Emulator) kept(n *emNode, o layer.Outcome, label string, in *node.Envelope) {
	ev := o.Event
	e.sendLayer(n, o.Sends)
	switch o.Kept {
	case n.snapAt:
		if label == labelDatagram {
			// A protocol message never travels as a datagram; a
			// manager that consumed one anyway keeps it from the service.
			e.st.dgFiltered++
			return
		}
		e.st.protocol++
		e.tickGathered(n) // the gather it completed takes effect first
		if e.cfg.Trace != nil && in != nil {
			e.traceLabel(n.id, fmt.Sprintf("snapshot %s from %v cn=%d", msgType(ev.Msg), ev.From, in.CN))
		}
		return
	case n.faultAt:
		return
	}
	if ev.Kind == node.EventMessage && layer.IsMessage(ev.Msg) {
		// Another layer's own message (a steering request), which that
		// layer consumed: layer traffic, not an intervention.
		e.st.protocol++
		return
	}
	if !o.Retried {
		e.intervene(n, ev, label, o.Verdict)
	}
	n.steer.iv = nil
	if ev.Kind != node.EventMessage {
		return // postponed: the pipeline holds it
	}
	if label == labelDatagram {
		e.st.dgFiltered++
		return
	}
	e.st.filtered++
	if o.Break != node.None {
		if p := n.peers[o.Break]; p != nil && p.conn != nil {
			_ = e.breakConnection(n.id, o.Break, "") // cannot fail: n is live and holds the connection
		}
	}
}

// stepped carries out the effects of an event n's core handled, writes the
// trace line and runs the observer.
func (e *Emulator) stepped(n *emNode, o layer.Outcome, label string) {
	ev := o.Event
	if o.Ignored && ev.Kind != node.EventSendRefused {
		// Cannot happen: the emulator only fires timers the core has
		// scheduled. Treat it as a shell bug rather than hide it. (A
		// refusal is ignored by a service without HandleSendRefused: a
		// silent loss, still traced.)
		e.fail(fmt.Errorf("emulation: node %v ignored %v at %s; rerun with seed=%d", n.id, ev, clock(e.now), e.cfg.Seed))
		return
	}
	if e.checkSends(n, &o, label) != nil || e.recordHistory(n, o.History) != nil {
		return
	}
	e.countStep(ev, label)
	// The snapshot layer's After sends come last (the layers after it
	// send nothing from After); they go out after the step is reported,
	// with the checkpoints After took (afterStep).
	cut := max(len(o.Sends)-n.snap.afterSends, 0)
	sends := 0
	for i := range o.Sends[:cut] {
		s := &o.Sends[i]
		if !s.Layer {
			sends++
		}
		e.send(n, &s.Env)
	}
	for _, op := range o.Timers {
		if op.Cancel {
			delete(n.timers, op.Name)
			continue
		}
		it := e.q.alloc()
		it.kind, it.node, it.inc, it.name = itemTimer, n.id, n.inc, op.Name
		it.dl = op.At.Sub(Epoch)
		it.at = e.timerDue(n, op.At) // a core never sets a deadline in the past
		e.rates.TimersSet++
		e.rates.TimerDelaySum += it.at - e.now
		e.q.push(it)
		n.timers[op.Name] = it.seq
	}
	if e.err != nil {
		return
	}
	if e.cfg.Trace != nil {
		e.traceStep(n, ev, label, sends, o.Sends[:cut], o.Timers)
	}
	e.observe(n.id, ev, label)
	if e.cfg.OnStep != nil && e.err == nil {
		e.cfg.OnStep(Step{At: e.now, Node: n.id, Event: ev, Service: n.core.Service()})
	}
	e.afterStep(n)
	for i := range o.Sends[cut:] {
		e.send(n, &o.Sends[cut+i].Env)
	}
}

// countStep counts an event a core handled.
func (e *Emulator) countStep(ev node.Event, label string) {
	switch ev.Kind {
	case node.EventInit:
		e.st.count(kindInit)
	case node.EventMessage:
		e.st.count(kindMessage)
		if label == labelDatagram {
			e.st.dgDelivered++
		} else {
			e.st.delivered++
		}
	case node.EventTimer:
		e.st.count(kindTimer)
	case node.EventApp:
		e.st.count(kindApp)
	case node.EventTransportError:
		e.st.count(kindTransportError)
	case node.EventSendRefused:
		e.st.count(kindRefused)
	case node.EventReset:
		if label == "up" {
			e.st.count(kindUp)
		} else {
			e.st.count(kindReset)
		}
	}
}

// sendLayer sends the layers' own messages of n.
func (e *Emulator) sendLayer(n *emNode, out []layer.Send) {
	for i := range out {
		e.countSteering(&out[i].Env)
		e.send(n, &out[i].Env)
	}
}

// sendEnvs sends messages a layer method the loop called directly
// returned (snapshot.Layer's Gather and Crash).
func (e *Emulator) sendEnvs(n *emNode, out []node.Envelope) {
	for i := range out {
		e.send(n, &out[i])
	}
}

// syncPipe (re)arms the queue item for n's pipeline's next due time
// (a postponed event or a layer tick).
func (e *Emulator) syncPipe(n *emNode) {
	if !n.live {
		return
	}
	due := n.pipe.NextDue()
	if due.IsZero() {
		n.pipeSeq = 0
		return
	}
	e.rearm(n, itemPipeline, due.Sub(Epoch)-n.clockOffset, &n.pipeSeq, &n.pipeAt)
}

// rearm queues an item of kind for n at due (not before now), unless the
// one queued for it (seq, at: 0 for none) is due then already; seq and at
// then name the new one, and an older one is stale.
func (e *Emulator) rearm(n *emNode, kind itemKind, due time.Duration, seq *uint64, at *time.Duration) {
	due = max(due, e.now)
	if *seq != 0 && *at == due {
		return
	}
	it := e.q.alloc()
	it.kind, it.at, it.node, it.inc = kind, due, n.id, n.inc
	e.q.push(it)
	*seq, *at = it.seq, due
}

// pipeDue delivers n's postponed events that are due again, in the order
// they were postponed, then runs its layers' due ticks (a steering round's
// filters take effect).
func (e *Emulator) pipeDue(it *item) bool {
	n := e.nodes[it.node]
	if !n.live || n.inc != it.inc || n.pipeSeq != it.seq {
		return false
	}
	n.pipeSeq = 0
	now := e.clockOf(n)
	busy := false
	n.snapBusy = false
	for _, token := range n.pipe.DueRetries(now) {
		held := false
		o, ran := e.safeRun(n, node.Event{}, "retry", func() layer.Outcome {
			o, ok := n.pipe.Retry(token, now)
			held = ok
			return o
		})
		if ran && held {
			e.carryOut(n, o, "", nil)
			busy = true
		}
		if e.err != nil {
			return true
		}
	}
	if e.tickLayers(n) || n.snapBusy {
		busy = true
	}
	e.afterLayers(n)
	return busy
}

// tickLayers runs n's layers' due ticks now and reports whether any
// sent or failed.
func (e *Emulator) tickLayers(n *emNode) bool {
	o := n.pipe.Tick(e.clockOf(n))
	if len(o.Errors) > 0 {
		e.fail(fmt.Errorf("emulation: node %v layer tick at %s: %w; rerun with seed=%d", n.id, clock(e.now), errors.Join(o.Errors...), e.cfg.Seed))
		return true
	}
	e.sendLayer(n, o.Sends)
	return len(o.Sends) > 0
}

func (e *Emulator) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// takeDown makes n lose its incarnation: timers and connections are gone,
// and, unless silent, every peer still holding a connection to n gets a
// transport error after the one-way latency (the RST). n is left down.
func (e *Emulator) takeDown(n *emNode, silent bool) {
	n.inc++
	e.setLive(n, false)
	clear(n.timers)
	e.crashSnapshots(n)
	// The process died: the events its layers postponed go with it (the
	// EventReset of its restart also clears the steering layer's filters;
	// its controller's stored error paths survive, as if kept on disk).
	n.pipe.ForgetRetries()
	n.pipeSeq = 0
	e.st.resets++
	ids := e.scratch[:0]
	for id, p := range n.peers {
		if p.conn != nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids) // map order must not leak into the schedule
	for _, id := range ids {
		p := n.peers[id]
		c := p.conn
		p.conn = nil
		if silent || (c.pending && c.b == n.id) {
			// A connection whose SYN has not reached n was never
			// established at n: there is nothing to reset, and the SYN
			// will find n's next incarnation.
			continue
		}
		x := e.node(id)
		if x == nil || !x.live || x.inc != c.incOf(x.id) || c.doomed(x.id) {
			continue
		}
		if xp := x.peers[n.id]; xp == nil || xp.conn != c {
			continue
		}
		e.doom(c, x, e.now+e.topo.Link(n.id, x.id).Latency)
	}
	e.scratch = ids[:0]
}

// bringUp restarts a down node with a fresh state (EventReset on its core)
// and queues the workload's restart calls.
func (e *Emulator) bringUp(n *emNode, label string) {
	e.setLive(n, true)
	e.stepCore(n, node.Event{Kind: node.EventReset}, label)
	e.queueWorkload(n, true)
}

// scheduleChurn queues the next churn leave after from.
func (e *Emulator) scheduleChurn(from time.Duration) {
	gap := e.churn.ExpFloat64() * float64(time.Minute) / e.cfg.Churn.Rate
	at := from + time.Duration(gap)
	if e.cfg.Churn.Until > 0 && at >= e.cfg.Churn.Until {
		return // the churn phase is over; nodes still down come back
	}
	it := e.q.alloc()
	it.kind, it.at = itemChurn, at
	e.q.push(it)
}

// churnLeave takes a random live node down for an exponential downtime.
// Draw order (part of the contract): victim, silent, downtime, next gap.
func (e *Emulator) churnLeave() bool {
	if len(e.live) == 0 {
		e.st.churnSkipped++
		e.scheduleChurn(e.now)
		return false
	}
	n := e.nodes[e.live[e.churn.IntN(len(e.live))]]
	silent := e.churn.Float64() < e.cfg.silent
	down := time.Duration(e.churn.ExpFloat64() * float64(e.cfg.Churn.Downtime))
	e.scheduleChurn(e.now)
	e.st.leaves++
	if silent {
		e.st.silentLeaves++
	}
	e.down(n, silent, "churn")
	it := e.q.alloc()
	it.kind, it.at, it.node, it.inc = itemRejoin, e.now+down, n.id, n.inc
	e.q.push(it)
	return true
}

// down takes n down as one traced, observed event.
func (e *Emulator) down(n *emNode, silent bool, why string) {
	e.takeDown(n, silent)
	e.st.count(kindDown)
	label := "down rst"
	if silent {
		label = "down silent"
	}
	if why != "" {
		label += " " + why
	}
	if e.cfg.Trace != nil {
		e.traceLabel(n.id, label)
	}
	e.observe(n.id, node.Event{Kind: node.EventReset}, label)
}

// Reset crashes and immediately restarts node id, as one event: its
// incarnation is incremented, its timers and connections are lost, its core
// steps EventReset (fresh service, Init), and the workload's restart calls
// are queued. Unless silent, peers holding a connection to id get a
// transport error after the one-way latency; if silent, their connections
// go stale (see the package documentation). The node must be live.
func (e *Emulator) Reset(id node.ID, silent bool) error {
	n, err := e.liveNode("Reset", id)
	if err != nil {
		return err
	}
	e.takeDown(n, silent)
	label := "reset rst"
	if silent {
		label = "reset silent"
	}
	e.bringUp(n, label)
	return e.err
}

// Down takes live node id down (it left): its incarnation is incremented,
// its timers and connections are lost, and it stays out of the view until
// Up. RST and silent are as for Reset. While it is down, connections to it
// are refused.
func (e *Emulator) Down(id node.ID, silent bool) error {
	n, err := e.liveNode("Down", id)
	if err != nil {
		return err
	}
	e.down(n, silent, "")
	return e.err
}

// Up restarts node id, which must be down (after Down or a churn leave):
// its core steps EventReset (fresh service, Init) and the workload's restart
// calls are queued. A churn rejoin pending for it is then skipped.
func (e *Emulator) Up(id node.ID) error {
	if e.err != nil {
		return e.err
	}
	n := e.node(id)
	switch {
	case n == nil:
		return fmt.Errorf("emulation: Up: no node %v", id)
	case !n.started:
		return fmt.Errorf("emulation: Up: node %v has not started yet", id)
	case n.live:
		return fmt.Errorf("emulation: Up: node %v is not down", id)
	}
	e.bringUp(n, "up")
	return e.err
}

// AppCall runs the application call msg on live node id now, as one event.
func (e *Emulator) AppCall(id node.ID, msg node.Message) error {
	n, err := e.liveNode("AppCall", id)
	if err != nil {
		return err
	}
	if msg == nil {
		return errors.New("emulation: AppCall: nil message")
	}
	if err := e.checkCall(n, msg); err != nil {
		return err
	}
	e.stepCore(n, node.Event{Kind: node.EventApp, Msg: msg}, "")
	return e.err
}

// BreakConnection breaks the connection between a and b (as a steering
// filter or a network failure would): everything in flight on it, in both
// directions, is lost; a gets a transport error about b now (it is the end
// that broke it) and b gets one about a after the one-way latency. An end
// that no longer holds the connection, or already has an error pending for
// it, is not told again. It fails if a holds no connection to b.
func (e *Emulator) BreakConnection(a, b node.ID) error {
	return e.breakConnection(a, b, "")
}

// breakConnection breaks the connection between a and b and tells both
// ends' services — a steering verdict's break as a network failure: the
// node that broke it runs its failure handling as its peer does; why ends
// the trace line (" network" for a scheduled break).
func (e *Emulator) breakConnection(a, b node.ID, why string) error {
	na, err := e.liveNode("BreakConnection", a)
	if err != nil {
		return err
	}
	nb := e.node(b)
	p := na.peers[b]
	if nb == nil || p == nil || p.conn == nil {
		return fmt.Errorf("emulation: BreakConnection: %v holds no connection to %v", a, b)
	}
	c := p.conn
	c.broken = true
	e.st.count(kindBreak)
	if e.cfg.Trace != nil {
		e.traceLabel(a, "break "+b.String()+why)
	}
	if !c.doomed(a) {
		e.doom(c, na, e.now)
	}
	if nb.live && nb.inc == c.incOf(b) && !c.doomed(b) {
		if bp := nb.peers[a]; bp != nil && bp.conn == c {
			e.doom(c, nb, e.now+e.topo.Link(a, b).Latency)
		}
	}
	return e.err
}

func (e *Emulator) liveNode(op string, id node.ID) (*emNode, error) {
	if e.err != nil {
		return nil, e.err
	}
	n := e.node(id)
	switch {
	case n == nil:
		return nil, fmt.Errorf("emulation: %s: no node %v", op, id)
	case !n.live:
		return nil, fmt.Errorf("emulation: %s: node %v is not live", op, id)
	}
	return n, nil
}

// globalView is the true global state as a node.View.
type globalView struct{ e *Emulator }

func (v globalView) Nodes() []node.ID { return v.e.live }

func (v globalView) Service(id node.ID) node.Service {
	if n := v.e.node(id); n != nil && n.live {
		return n.core.Service()
	}
	return nil
}

func (v globalView) TimerScheduled(id node.ID, name string) bool {
	if n := v.e.node(id); n != nil && n.live {
		_, ok := n.core.State().TimerAt(name)
		return ok
	}
	return false
}
