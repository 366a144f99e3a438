package snapshot

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
	"github.com/seed6eee2ec7/crystalball/node/layer"
)

// Errors returned by Manager methods. They signal misuse by the shell, never
// a peer's misbehaviour (malformed protocol messages are counted in
// Stats.BadMessages and otherwise ignored).
var (
	// ErrNotStarted: the manager has not been started (Start).
	ErrNotStarted = errors.New("snapshot: manager not started")
	// ErrGatherInProgress: Gather was called while a gather is running.
	ErrGatherInProgress = errors.New("snapshot: gather in progress")
)

// Source is what a Manager checkpoints: a node.Core satisfies it.
type Source interface {
	// Checkpoint returns the node state's checkpoint encoding, freshly
	// allocated (the manager keeps it).
	Checkpoint() ([]byte, error)
	// Service returns the live service value, read only for its optional
	// node.Neighborer method.
	Service() node.Service
}

// checkpoint is one stored checkpoint. pos is the manager's event position
// at which it was taken: log entries with a larger pos happened after it.
type checkpoint struct {
	cn, pos uint64
	state   []byte
	hash    uint64
	cost    int
	shared  bool // state is the same slice as the previous checkpoint's
	// Channels that may have lost messages before this checkpoint that
	// would arrive after it: dirtyAll (after a reset) except clean, and
	// dirty (after a transport error), as they were when it was taken.
	dirtyAll     bool
	clean, dirty []node.ID
}

// logEntry is a late service message (one whose CN was below the node's
// number on arrival: in flight across some cut) or a transport error.
type logEntry struct {
	pos  uint64
	from node.ID
	err  bool
	rec  Recorded
	msg  node.Message
	cost int
}

// answer is a Request being answered: it waits for the channels from every
// member to close (or its deadline).
type answer struct {
	gather   uint64
	to       node.ID
	cr       uint64
	cp       *checkpoint
	members  []node.ID
	deadline time.Time
}

// member states within a gather round.
const (
	memberPending uint8 = iota
	memberOK
	memberDead
	memberExcluded
	memberRetry
)

type memberState struct {
	state  uint8
	reason string
	// bad: excluded for a malformed answer (or a number beyond the
	// window), not by a choice the member made (see FailureNoMember).
	bad bool
	// refused: the member answered that the cut lies beyond its window,
	// its number (cn) more than a window below it (see rebaseTarget).
	refused  bool
	cn       uint64
	raw      []byte
	channels []ChannelRecord
	msgs     [][]node.Envelope // decoded channels[i].Msgs
	peers    []node.ID
}

type gatherState struct {
	id      uint64
	round   int
	cr      uint64
	members []node.ID // ascending, self included: those asked
	// all is the neighbourhood the round was started for (members and
	// unvouched: ascending), against which a change is judged.
	all, unvouched []node.ID
	started        time.Time
	deadline       time.Time
	own            *checkpoint
	status         map[node.ID]*memberState
	maxNeg         uint64
}

type base struct {
	hash uint64
	raw  []byte
}

// Manager is the deterministic checkpoint manager of one node (see the
// package documentation for the protocol). It starts no goroutines, reads no
// clock and draws no random numbers: time arrives with every call, and
// effects (protocol messages to send, checkpoints taken, snapshots gathered)
// are returned as data. Given the same calls with the same arguments it
// returns the same effects.
//
// A Manager is not safe for concurrent use: the goroutine (or emulator
// loop) that owns the node's Core owns its Manager, and calls it around
// every Core step:
//
//   - Start once when the node starts, Reset when it loses its state;
//   - Deliver for every envelope that arrives, before the core sees it (and
//     hand it to the core only if Deliver says so);
//   - Sent for every envelope the core emits, before it is transmitted;
//   - AfterStep after every core step;
//   - TransportError for every transport error (and pass it to the core);
//   - Tick at NextTick.
type Manager struct {
	cfg   Config
	self  node.ID
	src   Source
	codec *codec

	started bool
	now     time.Time
	cn      uint64
	pos     uint64

	store     []*checkpoint
	storeCost int
	prunedCN  uint64
	log       []logEntry
	logCost   int

	lastCN map[node.ID]uint64
	// claims holds, per witness key, the largest number its peers carried
	// beyond the window (see admit), at most MaxMembers keys; witness
	// vouches for peers (WitnessHost).
	claims  map[string]uint64
	witness func(peer node.ID) (string, bool)
	// buckets are the rate limits on numbers adopted from peers, by
	// witness key (window.go).
	buckets map[string]*cnBucket
	// knows says whether the node can reach a peer (PeerDirectory);
	// check checks a peer's checkpoint (CheckpointChecker; nil: none).
	knows  func(peer node.ID) bool
	check  func(b []byte) error
	recent map[node.ID]time.Time
	// also are the peers a layer asked the gathers to take in besides the
	// neighbourhood (Include), ascending.
	also []node.ID
	// hop2 are the second hop's peers (Config.SecondHop), from the last
	// snapshot, ascending.
	hop2 []node.ID
	// sentCN is the CN of the last message sent to each peer since the
	// last transport error about it: a channel whose last message carries
	// CN ≥ cr closes for cr without a Marker.
	sentCN map[node.ID]uint64

	// Loss tracking (see lossy): a transport error about s makes s dirty
	// until a message from s arrives; a reset makes every sender dirty
	// (messages in flight to the lost incarnation are dropped) until one
	// arrives from it, for at most resetQuiet.
	dirty      map[node.ID]bool
	dirtyAll   bool
	dirtyUntil time.Time
	clean      map[node.ID]bool

	nextInc    time.Time
	nextGather time.Time
	// changeGather is when a change of the neighbourhood seen since the
	// last gather is due to start one (Config.GatherSettle; zero: none
	// pending).
	changeGather time.Time

	answers []*answer
	g       *gatherState
	seq     uint64
	// lastMembers is the neighbourhood of the last gather round (for
	// Config.GatherOnChange).
	lastMembers []node.ID

	acked map[node.ID]base   // responder: the last checkpoint each peer acknowledged
	sent  map[node.ID][]base // responder: checkpoints sent, awaiting an ack
	bases map[node.ID][]base // gatherer: checkpoints acknowledged per member

	absTokens, fracTokens float64
	refilled              time.Time

	fx    Effects
	stats Stats
}

// New returns an unstarted Manager for node self, checkpointing src.
func New(cfg Config, self node.ID, src Source) (*Manager, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if self == node.None {
		return nil, errors.New("snapshot: node ID must not be None")
	}
	if src == nil {
		return nil, errors.New("snapshot: Source is required")
	}
	m := &Manager{
		cfg: c, self: self, src: src,
		lastCN: map[node.ID]uint64{}, claims: map[string]uint64{}, buckets: map[string]*cnBucket{}, recent: map[node.ID]time.Time{}, sentCN: map[node.ID]uint64{},
		dirty: map[node.ID]bool{}, clean: map[node.ID]bool{},
		acked: map[node.ID]base{}, sent: map[node.ID][]base{}, bases: map[node.ID][]base{},
	}
	m.useHost(src)
	return m, nil
}

// useHost takes the optional interfaces src implements (WitnessHost,
// PeerDirectory, CheckpointChecker), with their defaults where it does
// not: every peer vouched for by its ID, every peer known, no check.
func (m *Manager) useHost(src Source) {
	m.witness = ownWitness
	if wh, ok := src.(WitnessHost); ok {
		m.witness = wh.CatchUpWitness
	}
	m.knows = func(node.ID) bool { return true }
	if pd, ok := src.(PeerDirectory); ok {
		m.knows = pd.KnowsPeer
	}
	if cc, ok := src.(CheckpointChecker); ok {
		m.check = cc.CheckCheckpoint
	}
}

// CN returns the current checkpoint number.
func (m *Manager) CN() uint64 { return m.cn }

// Stats returns the manager's counters.
func (m *Manager) Stats() Stats {
	s := m.stats
	s.CN = m.cn
	s.Stored = len(m.store)
	s.StoredBytes = m.storeCost + m.logCost
	s.Exhausted = m.cn >= MaxCN
	return s
}

// Gathering reports whether a gather is in progress.
func (m *Manager) Gathering() bool { return m.g != nil }

// begin resets the effects buffer and advances the manager's clock.
func (m *Manager) begin(now time.Time) {
	m.advance(now)
	clear(m.fx.Sends)
	clear(m.fx.Snapshots)
	m.fx = Effects{Sends: m.fx.Sends[:0], Taken: m.fx.Taken[:0], Snapshots: m.fx.Snapshots[:0], Failures: m.fx.Failures[:0]}
}

// advance moves the manager's clock to now; it never goes back.
func (m *Manager) advance(now time.Time) {
	if now.After(m.now) {
		m.now = now
	}
}

// Start starts the manager when its node starts: the periodic increments
// (and automatic gathers) are due from now on. The checkpoint number starts
// at 0, or carries on if the manager ran before.
func (m *Manager) Start(now time.Time) Effects {
	m.begin(now)
	m.started = true
	m.restartClocks()
	return m.fx
}

func (m *Manager) restartClocks() {
	m.nextInc = m.now.Add(m.cfg.Interval)
	m.changeGather = time.Time{}
	if m.cfg.GatherInterval > 0 {
		m.nextGather = m.now.Add(m.cfg.GatherInterval)
		if m.settles() {
			m.nextGather = m.now.Add(m.cfg.GatherSettle)
		}
	}
	m.refilled = m.now
	m.absTokens = m.absBurst()
	m.fracTokens = 0
}

// Reset models the node losing its state (a crash and restart): stored
// checkpoints, the message log, answers being recorded, a gather in
// progress and the delta bases are lost, as a process's memory would be.
// The checkpoint number is kept, as a process that persisted it across a
// restart would: numbers on a channel never decrease, which the
// channel-state recording relies on. (The live runtime persists nothing: a
// restarted process is a new Manager at number 0; see Layer for why that is
// tolerated.) Requests for cuts up to the current number are answered
// negatively from now on.
func (m *Manager) Reset(now time.Time) Effects {
	m.begin(now)
	m.prunedCN = m.cn
	m.dirtyAll, m.dirtyUntil = true, m.now.Add(resetQuiet)
	clear(m.clean)
	clear(m.dirty)
	m.store, m.storeCost = nil, 0
	m.log, m.logCost = nil, 0
	m.answers = nil
	if m.g != nil {
		m.fail("reset")
	}
	clear(m.acked)
	clear(m.sent)
	clear(m.bases)
	clear(m.recent)
	clear(m.sentCN)
	clear(m.claims)
	m.lastMembers = nil
	m.hop2 = nil
	if m.started {
		m.restartClocks()
	}
	return m.fx
}

// Sent stamps an envelope the node's service emits with the checkpoint
// number, before the shell transmits it; size is its wire size in bytes
// (used by Config.BandwidthFraction; 0 if unknown).
func (m *Manager) Sent(now time.Time, env *node.Envelope, size int) {
	m.advance(now)
	env.CN = m.cn
	if !env.Datagram && !env.Refusable {
		// A datagram closes no channel at its receiver (see Deliver), so
		// it must not stand in for a Marker either; nor may a message the
		// transport can still refuse (node.Env.TrySend), which may never
		// arrive.
		m.sentCN[env.To] = m.cn
	}
	m.touch(env.To)
	m.countSent(size)
}

// countSent accounts size bytes of service traffic, which earn the
// fractional bandwidth cap its allowance (Config.BandwidthFraction).
func (m *Manager) countSent(size int) {
	if size <= 0 {
		return
	}
	m.stats.ServiceBytes += int64(size)
	if m.cfg.BandwidthFraction > 0 {
		m.fracTokens = min(m.fracTokens+m.cfg.BandwidthFraction*float64(size), m.fracBurst())
	}
}

// Deliver takes an envelope that arrived for this node, before the core
// handles it. If env.CN exceeds the node's number, the node state is
// checkpointed first (so the checkpoint is of the state before the message)
// and the number adopted — if it lies within Config.CNWindow; beyond it the
// number is counted in Stats.CNRejected and the message handled as if it
// carried the node's own (see the package documentation). Protocol
// messages are consumed: deliver is false and the shell must not hand
// them to the core. For a service message deliver is true; it is recorded
// as in flight if it crossed a cut. A datagram (env.Datagram) is
// unordered: it forces the checkpoint like a message, but neither closes
// its channel nor is recorded (a snapshot treats a datagram in flight as
// lost).
//
// A non-nil error comes from the Source (the node state could not be
// encoded) or the Registry (the message type is not registered): a bug in
// the shell or the service, not in the peer.
func (m *Manager) Deliver(now time.Time, env node.Envelope) (deliver bool, fx Effects, err error) {
	m.begin(now)
	if !m.started {
		return !IsProtocol(env.Msg), m.fx, nil
	}
	if env.CN, err = m.adopt(env.From, env.CN); err != nil {
		return false, m.fx, err
	}
	if !env.Datagram {
		m.heard(env.From, env.CN)
	}
	if deliver, err = m.dispatch(env); err != nil {
		return false, m.fx, err
	}
	m.pollAnswers()
	m.checkRound()
	return deliver, m.fx, nil
}

// adopt vets the number cn a message from peer carries (admit) and, when
// the node is to move up to it, checkpoints the state first. It returns
// the number the message is handled as carrying.
func (m *Manager) adopt(peer node.ID, cn uint64) (uint64, error) {
	cn, err := m.admit(peer, cn)
	if err != nil {
		return cn, err
	}
	if cn > m.cn {
		if err := m.take(cn, CheckpointForced); err != nil {
			return cn, err
		}
	}
	return cn, nil
}

// heard notes an ordered message with number cn from peer: the channel's
// numbering (noteCN), and that whatever was lost on the way from peer
// arrived (was dropped) before it: FIFO.
func (m *Manager) heard(peer node.ID, cn uint64) {
	m.noteCN(peer, cn)
	delete(m.dirty, peer)
	if m.dirtyAll {
		m.clean[peer] = true
	}
}

// noteCN records cn as the channel from peer's last number, or starts the
// channel over when cn is below it (wentBack).
func (m *Manager) noteCN(peer node.ID, cn uint64) {
	if last, ok := m.lastCN[peer]; ok && cn < last && peer != m.self {
		m.wentBack(peer, cn)
	}
	if cn > m.lastCN[peer] {
		m.lastCN[peer] = cn
	}
}

// dispatch hands a protocol message to its handler and reports whether env
// is for the core (any other message, see onService).
func (m *Manager) dispatch(env node.Envelope) (bool, error) {
	switch msg := env.Msg.(type) {
	case Request:
		return false, m.onRequest(env.From, msg)
	case Marker:
		// It closed its channel, which heard noted.
	case Response:
		m.onResponse(env.From, msg)
	case Negative:
		m.onNegative(env.From, msg)
	case Ack:
		m.onAck(env.From, msg)
	default:
		return true, m.onService(env)
	}
	return false, nil
}

// onService handles a message for the core: a service message marks its
// sender a recent peer and is recorded as in flight if it crossed a cut.
func (m *Manager) onService(env node.Envelope) error {
	if layer.IsMessage(env.Msg) {
		// Another layer's message (steering's): not the service's
		// traffic, so neither a neighbour's sign nor channel state.
		return nil
	}
	m.touch(env.From)
	if m.crossedCut(env) {
		return m.logLate(env)
	}
	return nil
}

// touch marks peer (not self) as one the node exchanged messages with now.
func (m *Manager) touch(peer node.ID) {
	if peer != m.self {
		m.recent[peer] = m.now
	}
}

// crossedCut reports whether an arriving service message was in flight
// across one of the stored checkpoints: sent below the node's number, on
// an ordered channel.
func (m *Manager) crossedCut(env node.Envelope) bool {
	return env.CN < m.cn && len(m.store) > 0 && !env.Datagram
}

// logLate records a late service message in the log, in its in-flight
// form, for the answers to come.
func (m *Manager) logLate(env node.Envelope) error {
	msg, err := inFlightForm(env.Msg)
	if err != nil {
		return err
	}
	body, err := m.cfg.Registry.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("snapshot: recording an in-flight message: %w", err)
	}
	m.pos++
	e := logEntry{pos: m.pos, from: env.From, msg: msg,
		rec: Recorded{CN: env.CN, Type: msg.MessageType(), Body: body}}
	e.cost = len(body) + len(e.rec.Type) + 32
	m.log = append(m.log, e)
	m.logCost += e.cost
	m.prune()
	return nil
}

// inFlightForm is the form in which msg is recorded in flight: its
// node.InFlightFormer form if it has one (which must keep its type), else
// msg itself.
func inFlightForm(msg node.Message) (node.Message, error) {
	f, ok := msg.(node.InFlightFormer)
	if !ok {
		return msg, nil
	}
	rec := f.InFlightForm()
	if rec == nil || rec.MessageType() != msg.MessageType() {
		return nil, fmt.Errorf("snapshot: the in-flight form of a %s is %T, not a message of its type", msg.MessageType(), rec)
	}
	return rec, nil
}

// TransportError reports a broken connection to peer: channels from peer
// recorded since a checkpoint become lossy, and a gather marks peer dead.
func (m *Manager) TransportError(now time.Time, peer node.ID) Effects {
	m.begin(now)
	if !m.started {
		return m.fx
	}
	m.lossy(peer)
	delete(m.sentCN, peer)
	// The peer may have restarted and lost the checkpoints it
	// acknowledged: the next answer to it is not a delta.
	delete(m.acked, peer)
	delete(m.sent, peer)
	if g := m.g; g != nil {
		g.markDead(peer, "transport error")
		m.checkRound()
	}
	return m.fx
}

// lossy marks the channel from peer lossy as a transport error does:
// what it sent before may have been lost.
func (m *Manager) lossy(peer node.ID) {
	m.dirty[peer] = true
	delete(m.clean, peer)
	m.pos++
	m.log = append(m.log, logEntry{pos: m.pos, from: peer, err: true, cost: 32})
	m.logCost += 32
	m.prune()
}

// wentBack handles a message from peer whose number cn is below one peer
// sent before on the same FIFO channel: the sender's numbering started
// over (a live process restarted at 0, or the sender rebased). What the
// channel's earlier numbers closed is not closed for the new numbering,
// so the channel starts over from cn, and is lossy as after a transport
// error (the old incarnation's messages in flight are neither in its
// state nor recorded). A restarted sender that lost its delta bases says
// so itself (resync).
func (m *Manager) wentBack(peer node.ID, cn uint64) {
	m.stats.CNWentBack++
	m.lastCN[peer] = cn
	m.lossy(peer)
}

// AfterStep runs after every core step: while a gather is in progress, a
// change of the neighbourhood starts a new round (but for the last round
// with Config.FinishLastRound); with
// Config.GatherOnChange, a change since the last gather starts one.
func (m *Manager) AfterStep(now time.Time) Effects {
	m.begin(now)
	if !m.started {
		return m.fx
	}
	if m.g != nil {
		m.followNeighbourhood()
	} else {
		m.noticeChange()
	}
	return m.fx
}

// followNeighbourhood starts a new round of the gather in progress when
// the neighbourhood changed since its round started (but for the last
// round with Config.FinishLastRound).
func (m *Manager) followNeighbourhood() {
	last := m.g.round >= m.cfg.MaxRounds
	if !(last && m.cfg.FinishLastRound) && !slices.Equal(m.members(), m.g.all) {
		m.nextRound(m.nextCut(), "neighbourhood changed")
	}
}

// noticeChange acts on a change of the neighbourhood since the last
// gather: it starts one (Config.GatherOnChange) or schedules one after
// Config.GatherSettle.
func (m *Manager) noticeChange() {
	if m.lastMembers == nil || !m.watchesChange() {
		return
	}
	if slices.Equal(m.members(), m.lastMembers) {
		return
	}
	if m.cfg.GatherOnChange {
		m.startGather()
	} else {
		m.changeGather = m.now.Add(m.cfg.GatherSettle)
	}
}

// watchesChange reports whether a change of the neighbourhood would start
// a gather now, or schedule one (none scheduled yet).
func (m *Manager) watchesChange() bool {
	return m.cfg.GatherOnChange || m.settles() && m.changeGather.IsZero()
}

// settles reports whether the no-blind-start rule is on
// (Config.GatherSettle with periodic gathers).
func (m *Manager) settles() bool { return m.cfg.GatherInterval > 0 && m.cfg.GatherSettle > 0 }

// startGather starts a gather now, for any reason: the periodic one and
// a pending change-triggered one are due again from now.
func (m *Manager) startGather() {
	m.changeGather = time.Time{}
	if m.cfg.GatherInterval > 0 {
		m.nextGather = m.now.Add(m.cfg.GatherInterval)
	}
	m.g = &gatherState{started: m.now}
	m.startRound(m.nextCut())
}

// Gather starts gathering a snapshot of the neighbourhood now. The result
// arrives in the Effects of a later call (Effects.Snapshots or
// Effects.Failures), or of this one for a node without neighbours.
func (m *Manager) Gather(now time.Time) (Effects, error) {
	m.begin(now)
	if !m.started {
		return m.fx, ErrNotStarted
	}
	if m.g != nil {
		return m.fx, ErrGatherInProgress
	}
	m.startGather()
	return m.fx, nil
}

// Tick carries out what is due at now: the periodic increment, answers and
// gather rounds past their deadline, the next automatic gather. Call it at
// NextTick (calling it earlier or more often is harmless).
func (m *Manager) Tick(now time.Time) (Effects, error) {
	m.begin(now)
	if !m.started {
		return m.fx, nil
	}
	if err := m.increment(); err != nil {
		return m.fx, err
	}
	m.pollAnswers()
	m.expireRound()
	if m.gatherDue() {
		m.startGather()
	}
	return m.fx, nil
}

// increment takes the periodic checkpoint when it is due.
func (m *Manager) increment() error {
	if m.now.Before(m.nextInc) {
		return nil
	}
	// At MaxCN the number stays (Stats.Exhausted), but the increment
	// is still rescheduled: an overdue NextTick would spin the shell.
	if m.cn < MaxCN {
		if err := m.take(m.cn+1, CheckpointPeriodic); err != nil {
			return err
		}
	}
	m.nextInc = m.now.Add(m.cfg.Interval)
	return nil
}

// expireRound marks the members still pending dead once the round's
// deadline has passed.
func (m *Manager) expireRound() {
	g := m.g
	if g == nil || m.now.Before(g.deadline) {
		return
	}
	for _, id := range g.members {
		g.markDead(id, "timeout")
	}
	m.checkRound()
}

// markDead marks member id dead for reason why, if it has not answered.
func (g *gatherState) markDead(id node.ID, why string) {
	if st := g.status[id]; st != nil && st.state == memberPending {
		st.state, st.reason = memberDead, why
	}
}

// gatherDue reports whether an automatic gather is due now: none is
// running, and the periodic one or a change-triggered one is due.
func (m *Manager) gatherDue() bool {
	if m.g != nil {
		return false
	}
	periodic := m.cfg.GatherInterval > 0 && !m.now.Before(m.nextGather)
	return periodic || m.reached(m.changeGather)
}

// reached reports whether the pending time t (zero: none) has come.
func (m *Manager) reached(t time.Time) bool { return !t.IsZero() && !m.now.Before(t) }

// NextTick returns when Tick is next due. It is never before the time of
// the last call unless something is already overdue.
func (m *Manager) NextTick() time.Time {
	t := m.nextInc
	for _, a := range m.answers {
		t = earlier(t, a.deadline)
	}
	if m.g != nil {
		return earlier(t, m.g.deadline)
	}
	if m.cfg.GatherInterval > 0 {
		t = earlier(t, m.nextGather)
	}
	if !m.changeGather.IsZero() {
		t = earlier(t, m.changeGather)
	}
	return t
}

// earlier returns u if it is before t, else t.
func earlier(t, u time.Time) time.Time {
	if u.Before(t) {
		return u
	}
	return t
}

// take checkpoints the node state with number cn (> m.cn) and adopts cn.
func (m *Manager) take(cn uint64, why Reason) error {
	st, err := m.src.Checkpoint()
	if err != nil {
		return fmt.Errorf("snapshot: checkpoint of %v: %w", m.self, err)
	}
	m.pos++
	cp := &checkpoint{cn: cn, pos: m.pos, state: st, hash: hashOf(st)}
	m.markLossy(cp)
	cp.cost = len(st) + 48
	m.share(cp)
	m.store = append(m.store, cp)
	m.storeCost += cp.cost
	m.cn = cn
	m.stats.countTaken(why)
	m.fx.Taken = append(m.fx.Taken, Taken{CN: cn, Reason: why, Size: len(st), Hash: cp.hash})
	m.prune()
	return nil
}

// markLossy records in cp the channels that may have lost messages
// before it (see checkpoint), ending the reset's dirty period first once
// resetQuiet has passed.
func (m *Manager) markLossy(cp *checkpoint) {
	if m.dirtyAll && !m.now.Before(m.dirtyUntil) {
		m.dirtyAll = false
		clear(m.clean)
	}
	if m.dirtyAll {
		cp.dirtyAll, cp.clean = true, sortedKeys(m.clean)
	}
	if len(m.dirty) > 0 {
		cp.dirty = sortedKeys(m.dirty)
	}
}

// share makes cp share the previous checkpoint's bytes when the state did
// not change, at the cost of its record alone.
func (m *Manager) share(cp *checkpoint) {
	n := len(m.store)
	if n == 0 {
		return
	}
	if prev := m.store[n-1]; prev.hash == cp.hash && bytes.Equal(prev.state, cp.state) {
		cp.state, cp.shared, cp.cost = prev.state, true, 48
	}
}

// countTaken counts a checkpoint taken for reason why.
func (s *Stats) countTaken(why Reason) {
	switch why {
	case CheckpointPeriodic:
		s.Periodic++
	case CheckpointForced:
		s.Forced++
	case CheckpointRequested:
		s.Requested++
	}
}

// prune enforces the quota: the oldest checkpoints go first (the newest
// stays), then log entries older than every checkpoint still needed.
func (m *Manager) prune() {
	for m.storeCost+m.logCost > m.cfg.Quota && len(m.store) > 1 {
		m.dropOldest()
	}
	m.trimLog()
}

// dropOldest prunes the oldest stored checkpoint.
func (m *Manager) dropOldest() {
	old := m.store[0]
	m.store[0] = nil
	m.store = m.store[1:]
	m.storeCost -= old.cost
	// Never lower: a catch-up (see admit) refuses cuts above the
	// checkpoints older than it.
	m.prunedCN = max(m.prunedCN, old.cn)
	m.stats.Pruned++
	if next := m.store[0]; next.shared {
		// next now carries the bytes it shared with old.
		next.shared = false
		next.cost += len(next.state)
		m.storeCost += len(next.state)
	}
}

// trimLog drops the log entries older than every checkpoint still needed
// (oldestNeeded).
func (m *Manager) trimLog() {
	if len(m.log) == 0 {
		return
	}
	minPos := m.oldestNeeded()
	i := 0
	for i < len(m.log) && m.log[i].pos < minPos {
		m.logCost -= m.log[i].cost
		i++
	}
	if i > 0 {
		clear(m.log[:i])
		m.log = m.log[i:]
	}
}

// oldestNeeded returns the position of the oldest checkpoint still needed:
// stored, being answered from, or the gather's own.
func (m *Manager) oldestNeeded() uint64 {
	minPos := m.pos + 1
	if len(m.store) > 0 {
		minPos = m.store[0].pos
	}
	for _, a := range m.answers {
		minPos = min(minPos, a.cp.pos)
	}
	if m.g != nil && m.g.own != nil {
		minPos = min(minPos, m.g.own.pos)
	}
	return minPos
}

// find returns the earliest stored checkpoint with cn ≥ cr, or nil if it may
// have been pruned (or lost in a reset).
func (m *Manager) find(cr uint64) *checkpoint {
	if cr <= m.prunedCN {
		return nil
	}
	i, _ := slices.BinarySearchFunc(m.store, cr, func(c *checkpoint, cr uint64) int {
		switch {
		case c.cn < cr:
			return -1
		case c.cn > cr:
			return 1
		}
		return 0
	})
	if i == len(m.store) {
		return nil
	}
	return m.store[i]
}

func (m *Manager) send(to node.ID, msg node.Message) {
	m.sentCN[to] = m.cn
	m.fx.Sends = append(m.fx.Sends, node.Envelope{From: m.self, To: to, CN: m.cn, Msg: msg})
}

// recentPeers returns the nodes this node exchanged messages with within
// RecentWindow, ascending: the MaxRecordedPeers most recent when there are
// more (NodeCheckpoint.Peers).
func (m *Manager) recentPeers() []node.ID {
	cutoff := m.now.Add(-m.cfg.RecentWindow)
	var rs []recentPeer
	for id, at := range m.recent {
		if id != node.None && id != m.self && !at.Before(cutoff) {
			rs = append(rs, recentPeer{id, at})
		}
	}
	ids := mostRecent(rs, MaxRecordedPeers)
	slices.Sort(ids)
	return ids
}

// recentPeer is a peer and when the node last exchanged a message with it.
type recentPeer struct {
	id node.ID
	at time.Time
}

// mostRecent returns the IDs of the n most recent peers of rs, most recent
// first, ties by ID: map order must not leak out.
func mostRecent(rs []recentPeer, n int) []node.ID {
	slices.SortFunc(rs, func(a, b recentPeer) int {
		return cmp.Or(b.at.Compare(a.at), cmp.Compare(a.id, b.id))
	})
	var ids []node.ID
	for i := 0; i < len(rs) && i < n; i++ {
		ids = append(ids, rs[i].id)
	}
	return ids
}

// members returns the gathers' members: the first hop and the second
// (Config.SecondHop), ascending, at most MaxMembers.
func (m *Manager) members() []node.ID {
	return insertMembers(m.firstHop(), m.hop2)
}

// firstHop returns the neighbourhood plus self and Include's peers,
// ascending, at most MaxMembers long.
func (m *Manager) firstHop() []node.ID {
	ids := append(m.neighbours(), m.self)
	return insertMembers(m.capMembers(realIDs(ids)), m.also)
}

// neighbours returns the service's neighbours (node.Neighborer), or else
// the MaxRecentPeers peers the node exchanged messages with most recently.
func (m *Manager) neighbours() []node.ID {
	if nb, ok := m.src.Service().(node.Neighborer); ok {
		return append([]node.ID(nil), nb.Neighbors(m.self)...)
	}
	return mostRecent(m.freshPeers(), m.cfg.MaxRecentPeers)
}

// freshPeers forgets the peers the node exchanged no message with within
// RecentWindow and returns the others.
func (m *Manager) freshPeers() []recentPeer {
	var rs []recentPeer
	cutoff := m.now.Add(-m.cfg.RecentWindow)
	for id, at := range m.recent {
		if at.Before(cutoff) {
			delete(m.recent, id)
			continue
		}
		rs = append(rs, recentPeer{id, at})
	}
	return rs
}

// realIDs sorts ids and drops duplicates and node.None.
func realIDs(ids []node.ID) []node.ID {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) > 0 && ids[0] == node.None {
		ids = ids[1:]
	}
	return ids
}

// capMembers bounds the ascending ids at MaxMembers, keeping self.
func (m *Manager) capMembers(ids []node.ID) []node.ID {
	if len(ids) <= MaxMembers {
		return ids
	}
	ids = ids[:MaxMembers]
	if !slices.Contains(ids, m.self) {
		ids[MaxMembers-1] = m.self
		slices.Sort(ids)
	}
	return ids
}

// insertMembers inserts extra into the ascending members ids, while they
// are fewer than MaxMembers.
func insertMembers(ids, extra []node.ID) []node.ID {
	for _, id := range extra {
		if len(ids) >= MaxMembers {
			break
		}
		if i, found := slices.BinarySearch(ids, id); !found {
			ids = slices.Insert(ids, i, id)
		}
	}
	return ids
}

// secondHop sets the second hop (Config.SecondHop) from snapshot s: the
// peers its first-hop members recorded that are not first-hop members
// themselves, the most often named first, ties by ID, at most SecondHop.
func (m *Manager) secondHop(s *Snapshot) {
	if m.cfg.SecondHop <= 0 {
		return
	}
	m.hop2 = mostNamed(m.namedPeers(s), m.cfg.SecondHop)
}

// namedPeers counts, for each candidate of the second hop, how many of
// the first-hop members in s named it among their peers.
func (m *Manager) namedPeers(s *Snapshot) map[node.ID]int {
	first := m.firstHop()
	named := map[node.ID]int{}
	for _, n := range s.Nodes {
		if _, in := slices.BinarySearch(first, n.Node); !in {
			continue
		}
		for _, p := range n.Peers {
			if m.secondHopCandidate(first, p) {
				named[p]++
			}
		}
	}
	return named
}

// secondHopCandidate reports whether p, named by a first-hop member, may
// be in the second hop. A member's word about its peers: only those this
// node knows and a witness vouches for, each of which answers for itself.
func (m *Manager) secondHopCandidate(first []node.ID, p node.ID) bool {
	_, in := slices.BinarySearch(first, p)
	return !in && p != node.None && m.knows(p) && m.vouched(p)
}

// mostNamed returns the n peers named most often (ties by ID), ascending.
func mostNamed(named map[node.ID]int, n int) []node.ID {
	hop := make([]node.ID, 0, len(named))
	for id := range named {
		hop = append(hop, id)
	}
	slices.SortFunc(hop, func(a, b node.ID) int {
		return cmp.Or(cmp.Compare(named[b], named[a]), cmp.Compare(a, b))
	})
	hop = hop[:min(len(hop), n)]
	slices.Sort(hop)
	return hop
}

// Include sets the peers the gathers take in besides the neighbourhood,
// replacing the previous set: a layer that acts on a peer's events needs
// that peer's state to judge what it does, whether or not the service
// counts the peer as a neighbour (steering's filters name the senders they
// drop; a node that reset has forgotten the neighbours its restored
// filters are about). The neighbourhood comes first when MaxMembers
// bounds the members; node.None and self are ignored. A change of the
// members starts a gather as a change of the neighbourhood does
// (AfterStep). Core goroutine.
func (m *Manager) Include(ids []node.ID) {
	also := make([]node.ID, 0, len(ids))
	for _, id := range ids {
		if id != node.None && id != m.self {
			also = append(also, id)
		}
	}
	slices.Sort(also)
	m.also = slices.Compact(also)
}

// resetQuiet bounds how long after a reset messages sent to the lost
// incarnation may still be in the network (and be dropped on arrival): far
// beyond a wide-area RTT with several retransmission backoffs.
const resetQuiet = time.Minute

func sortedKeys(set map[node.ID]bool) []node.ID {
	out := make([]node.ID, 0, len(set))
	for id := range set {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

// lossy reports whether messages from s sent before cp may have been lost
// after cp was taken without a trace in the log: s was dirty at cp.
func (cp *checkpoint) lossy(s node.ID) bool {
	if _, ok := slices.BinarySearch(cp.dirty, s); ok {
		return true
	}
	if cp.dirtyAll {
		_, ok := slices.BinarySearch(cp.clean, s)
		return !ok
	}
	return false
}

// ---- responder side ----

func (m *Manager) onRequest(from node.ID, r Request) error {
	m.stats.Requests++
	if !m.wellFormed(from, &r) {
		m.stats.BadMessages++
		return nil
	}
	if r.CR > m.limit(from) {
		// A cut this node would have to jump to: the gatherer's number
		// was not adopted either (see admit). The answer says so, with
		// this node's number: a gatherer every member answers so is
		// ahead of them all and rebases.
		m.stats.CNRejected++
		m.negative(from, r, ReasonWindow)
		return nil
	}
	if err := m.reach(from, r.CR); err != nil {
		return err
	}
	cp := m.find(r.CR)
	if reason := m.refusal(cp); reason != 0 {
		m.negative(from, r, reason)
		return nil
	}
	m.sendMarkers(from, &r)
	m.answers = append(m.answers, &answer{gather: r.Gather, to: from, cr: r.CR, cp: cp,
		members: slices.Clone(r.Members), deadline: m.now.Add(m.cfg.RecordTimeout)})
	return nil
}

// wellFormed reports whether a Request from from is within bounds and
// names both from and this node among its members.
func (m *Manager) wellFormed(from node.ID, r *Request) bool {
	return validateRequest(r) == nil && slices.Contains(r.Members, from) && slices.Contains(r.Members, m.self)
}

// reach checkpoints the node for a cut cr above its number that from asked
// for, charging from's rate limit.
func (m *Manager) reach(from node.ID, cr uint64) error {
	if cr <= m.cn {
		return nil
	}
	m.spend(from, cr)
	return m.take(cr, CheckpointRequested)
}

// refusal is the reason to refuse a request answered from checkpoint cp
// (nil: pruned), or 0 to answer it.
func (m *Manager) refusal(cp *checkpoint) uint8 {
	if cp == nil {
		return ReasonPruned
	}
	if len(m.answers) >= m.cfg.MaxPendingAnswers {
		return ReasonBusy
	}
	return 0
}

// sendMarkers sends a Marker to the members of r other than from whose
// channel from this node the Marker must close for r's cut: a message
// already sent on the channel with CN ≥ cr closes it (FIFO); otherwise a
// Marker does.
func (m *Manager) sendMarkers(from node.ID, r *Request) {
	// A stranger's member list is its word alone: Markers go only to
	// the members this node knows (PeerDirectory).
	trusted := m.vouched(from)
	for _, id := range r.Members {
		if id != from && m.sentCN[id] < r.CR && m.mayMark(id, trusted) {
			m.send(id, Marker{Gather: r.Gather})
		}
	}
}

// mayMark reports whether a Marker may go to member id of a request whose
// gatherer is trusted (vouched for) or not.
func (m *Manager) mayMark(id node.ID, trusted bool) bool {
	return trusted || id == m.self || m.knows(id)
}

func (m *Manager) negative(to node.ID, r Request, reason uint8) {
	m.stats.Negatives++
	if reason == ReasonBandwidth {
		m.stats.NegativeBandwidth++
	}
	m.send(to, Negative{Gather: r.Gather, CR: r.CR, CN: m.cn, Reason: reason})
}

// closed reports whether the channel from s has closed for cut cr: a
// message with CN ≥ cr arrived on it. Numbers on a channel never decrease
// and the node's number is ≥ every number it received, so that message
// arrived after the node's checkpoint for cr.
func (m *Manager) closed(s node.ID, cr uint64) bool { return m.lastCN[s] >= cr }

// pollAnswers sends every answer whose channels have all closed or whose
// deadline has passed.
func (m *Manager) pollAnswers() {
	kept := m.answers[:0]
	for _, a := range m.answers {
		if m.ready(a) {
			m.respond(a)
		} else {
			kept = append(kept, a)
		}
	}
	clear(m.answers[len(kept):])
	m.answers = kept
}

// ready reports whether answer a is to be sent: its deadline has passed
// or the channels from all its members have closed.
func (m *Manager) ready(a *answer) bool {
	if !m.now.Before(a.deadline) {
		return true
	}
	for _, s := range a.members {
		if !m.closed(s, a.cr) {
			return false
		}
	}
	return true
}

// record returns the recorded state of the channels from members into this
// node for cut cr with checkpoint cp: for each member s, the late messages
// from s logged after cp with CN < cr, whether the channel closed, and
// whether a transport error about s was logged after cp.
func (m *Manager) record(cp *checkpoint, cr uint64, members []node.ID) ([]ChannelRecord, [][]node.Message) {
	recs := m.channelFlags(cp, cr, members)
	msgs := make([][]node.Message, len(members))
	for j := range m.log {
		e := &m.log[j]
		if e.pos <= cp.pos {
			continue
		}
		if i, ok := slices.BinarySearch(members, e.from); ok {
			e.recordInto(&recs[i], &msgs[i], cr)
		}
	}
	return recs, msgs
}

// channelFlags returns one record per member s with the flags known from
// checkpoint cp alone: complete if the channel from s closed for cut cr,
// lossy if s was dirty at cp.
func (m *Manager) channelFlags(cp *checkpoint, cr uint64, members []node.ID) []ChannelRecord {
	recs := make([]ChannelRecord, len(members))
	for i, s := range members {
		recs[i].From = s
		if m.closed(s, cr) {
			recs[i].Flags |= FlagComplete
		}
		if cp.lossy(s) {
			recs[i].Flags |= FlagLossy
		}
	}
	return recs
}

// recordInto adds log entry e, logged after the checkpoint, to its
// sender's channel record rec (and msgs, the messages themselves): a
// transport error makes it lossy, a late message below cut cr is recorded
// unless the record is full, which leaves it incomplete.
func (e *logEntry) recordInto(rec *ChannelRecord, msgs *[]node.Message, cr uint64) {
	switch {
	case e.err:
		rec.Flags |= FlagLossy
	case e.rec.CN < cr:
		if len(rec.Msgs) == MaxRecorded {
			rec.Flags &^= FlagComplete
			return
		}
		rec.Msgs = append(rec.Msgs, e.rec)
		*msgs = append(*msgs, e.msg)
	}
}

// respond sends the Response for a (or a Negative if the bandwidth cap
// forbids it).
func (m *Manager) respond(a *answer) {
	raw := a.cp.state
	if len(raw) > m.cfg.MaxCheckpointSize {
		m.negative(a.to, Request{Gather: a.gather, CR: a.cr}, ReasonTooLarge)
		return
	}
	recs, _ := m.record(a.cp, a.cr, a.members)
	r := Response{Gather: a.gather, CR: a.cr, CN: a.cp.cn, Hash: a.cp.hash, RawLen: uint32(len(raw)), Channels: recs, Peers: m.recentPeers()}
	m.encodeState(&r, a.to, raw)
	size := r.wireSize()
	if !m.allow(size) {
		m.negative(a.to, Request{Gather: a.gather, CR: a.cr}, ReasonBandwidth)
		return
	}
	m.countResponse(&r, size, len(raw))
	m.sent[a.to] = keepLast(m.sent[a.to], base{hash: a.cp.hash, raw: raw}, 4)
	m.send(a.to, r)
}

// encodeState sets r's Encoding, Base and State for checkpoint raw to
// peer to: unchanged against the checkpoint to acknowledged, raw when
// compression is off, else compressed (compressState).
func (m *Manager) encodeState(r *Response, to node.ID, raw []byte) {
	// An unacknowledged peer's base is the zero one, whose hash no
	// checkpoint has (hashOf is never 0) and whose raw is nil.
	b := m.acked[to]
	switch {
	case b.hash == r.Hash && bytes.Equal(b.raw, raw):
		r.Encoding, r.Base = EncodingSame, b.hash
	case m.cfg.DisableCompression:
		r.Encoding, r.State = EncodingRaw, raw
	default:
		m.compressState(r, raw, b)
	}
}

// compressState sets r's State to a zstd frame of raw, a delta against the
// acknowledged base b unless deltas are off, or to raw itself when
// compression fails or does not pay.
func (m *Manager) compressState(r *Response, raw []byte, b base) {
	var dict []byte
	if !m.cfg.DisableDelta {
		dict = b.raw
	}
	out, err := m.zstdFrame(raw, dict)
	switch {
	case err != nil || len(out) >= len(raw):
		r.Encoding, r.State = EncodingRaw, raw
	case dict != nil:
		r.Encoding, r.Base, r.State = EncodingDelta, b.hash, out
	default:
		r.Encoding, r.State = EncodingZstd, out
	}
}

// zstdFrame compresses raw with the manager's codec, against dict when it
// is non-nil.
func (m *Manager) zstdFrame(raw, dict []byte) ([]byte, error) {
	c, err := m.compressor()
	if err != nil {
		return nil, err
	}
	return c.compress(nil, raw, dict)
}

// wireSize is the size the bandwidth caps charge for r: its payload and
// recorded messages plus fixed overheads.
func (r *Response) wireSize() int {
	size := 64 + len(r.State)
	for _, c := range r.Channels {
		size += 16
		for _, x := range c.Msgs {
			size += 16 + len(x.Type) + len(x.Body)
		}
	}
	return size
}

// countResponse accounts a Response sent: size bytes on the wire for a
// checkpoint of rawLen bytes.
func (m *Manager) countResponse(r *Response, size, rawLen int) {
	m.stats.Responses++
	m.stats.ResponseBytes += int64(size)
	m.stats.StateBytes += int64(len(r.State))
	m.stats.RawStateBytes += int64(rawLen)
	switch r.Encoding {
	case EncodingSame:
		m.stats.Unchanged++
	case EncodingDelta:
		m.stats.Deltas++
	}
}

// compressor returns the manager's codec, built on first use.
func (m *Manager) compressor() (*codec, error) {
	if m.codec == nil {
		c, err := newCodec(m.cfg.MaxCheckpointSize)
		if err != nil {
			return nil, err
		}
		m.codec = c
	}
	return m.codec, nil
}

func (m *Manager) absBurst() float64 {
	return m.cfg.BandwidthBits / 8 * m.cfg.Burst.Seconds()
}

func (m *Manager) fracBurst() float64 { return max(m.absBurst(), 64<<10) }

// allow charges size bytes against the bandwidth caps, reporting whether
// both allow it.
func (m *Manager) allow(size int) bool {
	m.refill()
	s := float64(size)
	caps := [...]bandwidthCap{{m.cfg.BandwidthBits > 0, &m.absTokens}, {m.cfg.BandwidthFraction > 0, &m.fracTokens}}
	for _, c := range caps {
		if c.on && *c.tokens < s {
			return false
		}
	}
	for _, c := range caps {
		if c.on {
			*c.tokens -= s
		}
	}
	return true
}

// bandwidthCap is one of the bandwidth caps (Config.BandwidthBits,
// Config.BandwidthFraction): whether it is on, and its bucket's bytes.
type bandwidthCap struct {
	on     bool
	tokens *float64
}

// refill tops the absolute cap's bucket up for the time since the last
// refill, up to its burst.
func (m *Manager) refill() {
	if dt := m.now.Sub(m.refilled); dt > 0 {
		m.absTokens = min(m.absTokens+m.cfg.BandwidthBits/8*dt.Seconds(), m.absBurst())
		m.refilled = m.now
	}
}

func (m *Manager) onAck(from node.ID, a Ack) {
	for _, b := range m.sent[from] {
		if b.hash == a.Hash {
			m.acked[from] = b
			return
		}
	}
	delete(m.acked, from) // see Ack: the requester has no usable base
}

// ---- gatherer side ----

// startRound starts a round of the current gather for cut cr.
func (m *Manager) startRound(cr uint64) {
	if cr > MaxCN {
		// The neighbourhood counts as seen, so GatherOnChange does not
		// fail again after every step until it changes.
		m.lastMembers = m.members()
		m.fail(FailureExhausted)
		return
	}
	g := m.g
	g.round++
	m.stats.Rounds++
	cr, ok := m.ownCut(cr)
	if !ok {
		return
	}
	m.seq++
	g.id, g.cr, g.maxNeg = m.seq, cr, 0
	g.all = m.members()
	m.lastMembers = g.all
	m.splitVouched(g)
	g.deadline = m.now.Add(m.cfg.GatherTimeout)
	m.ask(g)
	m.checkRound()
}

// ownCut sets the gather's own checkpoint for cut cr, checkpointing the
// node if its number is below cr, and returns the cut the round asks for:
// cr, or the cut after the node's number when the node's checkpoint of cr
// is gone. false: the gather failed.
func (m *Manager) ownCut(cr uint64) (uint64, bool) {
	if cr > m.cn && !m.takeOrFail(cr) {
		return 0, false
	}
	if m.g.own = m.find(cr); m.g.own != nil {
		return cr, true
	}
	// Our own checkpoint of that cut is gone: move the cut past our
	// number.
	if cr = m.nextCut(); cr > MaxCN {
		m.fail(FailureExhausted)
		return 0, false
	}
	if !m.takeOrFail(cr) {
		return 0, false
	}
	m.g.own = m.find(cr)
	return cr, true
}

// takeOrFail checkpoints the node for the gather's cut cr, giving the
// gather up when the Source fails.
func (m *Manager) takeOrFail(cr uint64) bool {
	if err := m.take(cr, CheckpointRequested); err != nil {
		m.fail(err.Error())
		return false
	}
	return true
}

// splitVouched sets the round's members from its neighbourhood g.all:
// members no witness vouches for are left out of the round, so that the
// others do not wait for channels from them (ReasonUnvouched).
func (m *Manager) splitVouched(g *gatherState) {
	g.members, g.unvouched = make([]node.ID, 0, len(g.all)), nil // sent in Requests: never reused
	for _, id := range g.all {
		if id == m.self || m.vouched(id) {
			g.members = append(g.members, id)
		} else {
			g.unvouched = append(g.unvouched, id)
		}
	}
}

// ask sends the round's Requests to its members and the Marker that
// closes the node's channel to itself.
func (m *Manager) ask(g *gatherState) {
	g.status = make(map[node.ID]*memberState, len(g.members))
	for _, id := range g.members {
		if id != m.self {
			g.status[id] = &memberState{}
			m.send(id, Request{Gather: g.id, CR: g.cr, Members: g.members})
		}
	}
	m.send(m.self, Marker{Gather: g.id})
}

// nextRound starts another round if the gather has rounds left, and gives
// it up otherwise.
func (m *Manager) nextRound(cr uint64, why string) {
	if m.g.round >= m.cfg.MaxRounds {
		m.fail(why + " in the last round")
		return
	}
	m.startRound(cr)
}

func (m *Manager) fail(why string) {
	m.stats.GathersFailed++
	m.fx.Failures = append(m.fx.Failures, Failure{Gather: m.g.id, Rounds: m.g.round, Reason: why})
	m.g = nil
}

func (m *Manager) pendingMember(from node.ID, gather uint64) *memberState {
	g := m.g
	if g == nil || gather != g.id {
		return nil
	}
	st := g.status[from]
	if st == nil || st.state != memberPending {
		return nil
	}
	return st
}

func (m *Manager) onResponse(from node.ID, r Response) {
	st := m.pendingMember(from, r.Gather)
	if st == nil {
		return // stale: an earlier round's answer
	}
	if !m.fitsRound(&r) {
		m.reject(from, r.Gather, st, "malformed response")
		return
	}
	b := m.baseFor(from, r.Base)
	if b == nil && r.againstBase() {
		m.resync(from, r.Gather, st)
		return
	}
	raw, msgs, why := m.readResponse(from, &r, b)
	if why != "" {
		m.reject(from, r.Gather, st, why)
		return
	}
	m.accept(from, st, &r, raw, msgs)
}

// fitsRound reports whether r is well formed and answers the current
// round: its cut, one channel record per member.
func (m *Manager) fitsRound(r *Response) bool {
	return r.validate(m.cfg.MaxCheckpointSize) == nil && r.CR == m.g.cr && len(r.Channels) == len(m.g.members)
}

// againstBase reports whether r's checkpoint is encoded against a base
// (a delta, or unchanged).
func (r *Response) againstBase() bool {
	return r.Encoding == EncodingSame || r.Encoding == EncodingDelta
}

// baseFor returns the checkpoint with hash h that member from acknowledged
// (the latest such), or nil.
func (m *Manager) baseFor(from node.ID, h uint64) []byte {
	var b []byte
	for _, x := range m.bases[from] {
		if x.hash == h {
			b = x.raw
		}
	}
	return b
}

// reject excludes member from, whose answer st is, for a malformed answer.
func (m *Manager) reject(from node.ID, gather uint64, st *memberState, why string) {
	m.stats.BadMessages++
	st.state, st.reason, st.bad = memberExcluded, why, true
	// Resynchronise: an Ack of nothing withdraws the base the member
	// would answer against (this node may have restarted and lost it),
	// so the next answer is full.
	delete(m.bases, from)
	m.send(from, Ack{Gather: gather})
	m.checkRound()
}

// readResponse decodes r's checkpoint (against base b) and its recorded
// messages, or says why they are unreadable.
func (m *Manager) readResponse(from node.ID, r *Response, b []byte) ([]byte, [][]node.Envelope, string) {
	raw, why := m.readCheckpoint(r, b)
	if why != "" {
		return nil, nil, why
	}
	msgs, why := m.readChannels(from, r)
	return raw, msgs, why
}

// readCheckpoint decodes r's checkpoint against base b and checks it
// (vetState), or says why it cannot be used.
func (m *Manager) readCheckpoint(r *Response, b []byte) ([]byte, string) {
	c, err := m.compressor()
	if err != nil {
		return nil, "no decoder: " + err.Error()
	}
	raw, err := c.decode(r, b)
	if err != nil {
		return nil, "undecodable checkpoint"
	}
	return raw, m.vetState(r, raw)
}

// vetState checks a decoded checkpoint with the Source's
// CheckpointChecker, unless it is the acknowledged one unchanged (checked
// when it came): "" if it passes.
func (m *Manager) vetState(r *Response, raw []byte) string {
	if m.check == nil || r.Encoding == EncodingSame {
		return ""
	}
	if err := m.check(raw); err != nil {
		return "checkpoint of no state of the service: " + node.Clip(err.Error(), node.MaxShownString)
	}
	return ""
}

// readChannels decodes r's recorded messages into envelopes to member
// from, one slice per channel record, checking the records follow the
// round's members.
func (m *Manager) readChannels(from node.ID, r *Response) ([][]node.Envelope, string) {
	msgs := make([][]node.Envelope, len(r.Channels))
	for i, ch := range r.Channels {
		if ch.From != m.g.members[i] {
			return nil, "channel records do not match the members"
		}
		envs, ok := m.decodeRecorded(ch, from)
		if !ok {
			return nil, "undecodable recorded message"
		}
		msgs[i] = envs
	}
	return msgs, ""
}

// decodeRecorded decodes the messages of channel record ch, in flight to
// member to; false if one does not decode.
func (m *Manager) decodeRecorded(ch ChannelRecord, to node.ID) ([]node.Envelope, bool) {
	var envs []node.Envelope
	for _, rec := range ch.Msgs {
		msg, err := m.cfg.Registry.DecodeMessage(rec.Type, rec.Body)
		if err != nil {
			return nil, false
		}
		envs = append(envs, node.Envelope{From: ch.From, To: to, CN: rec.CN, Msg: msg})
	}
	return envs, true
}

// accept takes member from's readable answer r into the round, keeps its
// checkpoint as a delta base and acknowledges it.
func (m *Manager) accept(from node.ID, st *memberState, r *Response, raw []byte, msgs [][]node.Envelope) {
	st.state, st.cn, st.raw, st.channels, st.msgs, st.peers = memberOK, r.CN, raw, r.Channels, msgs, r.Peers
	m.bases[from] = keepLast(m.bases[from], base{hash: r.Hash, raw: raw}, 2)
	m.send(from, Ack{Gather: r.Gather, Hash: r.Hash})
	m.checkRound()
}

// keepLast appends b to bs and keeps the last n bases.
func keepLast(bs []base, b base, n int) []base {
	bs = append(bs, b)
	if len(bs) > n {
		bs = slices.Delete(bs, 0, len(bs)-n)
	}
	return bs
}

// resync handles an answer against a base this node does not hold (it
// restarted since it acknowledged it, or dropped it): no bad answer, but
// one it cannot read. The base is withdrawn (an Ack of nothing, which the
// member reads before the next Request on the same FIFO channel) and the
// member is asked again in the gather's next round, which it answers in
// full. Before, the member was left out of the gather: a restarted node's
// first gather held none of the peers that had answered it before, so its
// immediate check judged its first events blind to them (the zoo lease's
// grantor granted a lease its holder, excluded so, still held). A member
// that answers against unknown bases every time costs at most
// Config.MaxRounds rounds, as a pruned checkpoint does.
func (m *Manager) resync(from node.ID, gather uint64, st *memberState) {
	m.stats.Resyncs++
	delete(m.bases, from)
	m.send(from, Ack{Gather: gather})
	st.state, st.reason = memberRetry, "answered against a base this node no longer holds"
	m.checkRound()
}

func (m *Manager) onNegative(from node.ID, n Negative) {
	st := m.pendingMember(from, n.Gather)
	if st == nil {
		return
	}
	switch n.Reason {
	case ReasonPruned:
		m.retryAt(from, n, st)
	case ReasonWindow:
		m.refusedCut(n, st)
	default:
		st.state, st.reason = memberExcluded, refusalReason(n.Reason)
	}
	m.checkRound()
}

// retryAt handles member from's answer that its checkpoint of the cut is
// pruned: the member is retried at its number n.CN in the next round, if
// that number is well formed and within the window.
func (m *Manager) retryAt(from node.ID, n Negative, st *memberState) {
	if n.CN > MaxCN || n.CN < m.g.cr {
		m.stats.BadMessages++
		st.state, st.reason, st.bad = memberExcluded, "malformed negative answer", true
		return
	}
	if n.CN > m.limit(from) {
		// Retrying there would jump this node's number beyond the
		// window on one peer's word.
		m.stats.CNRejected++
		st.state, st.reason, st.bad = memberExcluded, "checkpoint number beyond the window", true
		return
	}
	st.state, st.reason = memberRetry, "checkpoint pruned"
	m.g.maxNeg = max(m.g.maxNeg, n.CN)
	m.spend(from, n.CN) // the retry adopts it
}

// refusedCut handles a member's answer that the cut lies beyond its
// window: it is excluded, and counts as a refuser (rebaseTarget) when its
// number is more than a window below the cut.
func (m *Manager) refusedCut(n Negative, st *memberState) {
	st.state, st.reason = memberExcluded, "the cut is beyond its window"
	if n.CN < m.g.cr && m.g.cr-n.CN > uint64(m.cfg.CNWindow) {
		st.cn, st.refused = n.CN, true
	}
}

// refusalReason is the exclusion reason of a member that refused for
// reason (other than a pruned checkpoint or the window).
func refusalReason(reason uint8) string {
	if reason == ReasonBandwidth {
		return "bandwidth cap"
	}
	return "refused"
}

// checkRound finishes the current round once every member has answered
// (or is dead) and our own channels have closed (or the round timed out).
func (m *Manager) checkRound() {
	if m.roundDone() {
		m.endRound()
	}
}

// roundDone reports whether a round is in progress that every member has
// answered (or is dead) and whose own channels have closed (or that timed
// out).
func (m *Manager) roundDone() bool {
	g := m.g
	if g == nil || g.any(memberPending) {
		return false
	}
	return !m.now.Before(g.deadline) || m.closed(m.self, g.cr)
}

// any reports whether a member of the round is in state.
func (g *gatherState) any(state uint8) bool {
	for _, st := range g.status {
		if st.state == state {
			return true
		}
	}
	return false
}

// endRound ends a finished round: another round for the members to
// retry, a rebase when every member refused the cut, a failure when
// nobody answered, else the snapshot.
func (m *Manager) endRound() {
	g := m.g
	if g.any(memberRetry) && g.round < m.cfg.MaxRounds {
		// g.cr+1 is at most MaxCN+1, which startRound refuses.
		m.startRound(max(g.maxNeg, g.cr+1))
		return
	}
	if to, ok := m.rebaseTarget(); ok {
		m.rebase(to)
		m.nextRound(m.nextCut(), "rebased")
		return
	}
	if why, ok := m.nobodyAnswered(); ok {
		m.fail(why)
		return
	}
	m.finish()
}

// nobodyAnswered reports, with a FailureNoMember reason, whether the round
// had members besides the gatherer and every one of them is dead or
// answered malformed: a snapshot of the gatherer alone is no success.
// Members that chose to leave themselves out (bandwidth, size, pruned
// checkpoints) answered, so their absence is a snapshot's, not a failure.
func (m *Manager) nobodyAnswered() (string, bool) {
	dead, bad, silent := m.silentMembers()
	if !silent || len(dead)+len(bad) == 0 {
		return "", false
	}
	return failureNoMember(dead, bad), true
}

// silentMembers returns the round's dead members and those excluded for
// a malformed answer, and whether those are all the members besides the
// gatherer.
func (m *Manager) silentMembers() (dead, bad []node.ID, all bool) {
	g := m.g
	for _, id := range g.members {
		st := g.status[id]
		switch {
		case id == m.self:
		case st.state == memberDead:
			dead = append(dead, id)
		case st.state == memberExcluded && st.bad:
			bad = append(bad, id)
		default:
			return nil, nil, false
		}
	}
	return dead, bad, true
}

// failureNoMember is the FailureNoMember reason naming the dead and the
// malformed members.
func failureNoMember(dead, bad []node.ID) string {
	why := FailureNoMember
	if len(dead) > 0 {
		why += fmt.Sprintf(": dead %v", dead)
	}
	if len(bad) > 0 {
		why += fmt.Sprintf(": malformed %v", bad)
	}
	return why
}

// finish turns the current round's answers into a Snapshot.
func (m *Manager) finish() {
	g := m.g
	m.g = nil
	s := &Snapshot{Gatherer: m.self, Gather: g.id, CN: g.cr, Started: g.started, At: m.now, Rounds: g.round}
	included := m.addNodes(g, s)
	addUnvouched(g, s)
	m.addChannels(g, s, included)
	m.stats.Gathers++
	m.fx.Snapshots = append(m.fx.Snapshots, s)
	m.secondHop(s)
}

// addNodes puts every member of round g into s (included, dead or
// excluded) and returns the included ones, ascending.
func (m *Manager) addNodes(g *gatherState, s *Snapshot) []node.ID {
	var included []node.ID
	for _, id := range g.members {
		if m.addNode(g, s, id) {
			included = append(included, id)
		}
	}
	return included
}

// addNode puts member id of round g into s: its checkpoint (the node's own
// for the gatherer) if it answered, else among the dead or the excluded.
// It reports whether id is included.
func (m *Manager) addNode(g *gatherState, s *Snapshot, id node.ID) bool {
	if id == m.self {
		s.Nodes = append(s.Nodes, NodeCheckpoint{Node: id, CN: g.own.cn, State: g.own.state, Peers: m.recentPeers()})
		return true
	}
	st := g.status[id]
	switch st.state {
	case memberOK:
		s.Nodes = append(s.Nodes, NodeCheckpoint{Node: id, CN: st.cn, State: st.raw, Peers: st.peers})
		return true
	case memberDead:
		s.Dead = append(s.Dead, id)
	default:
		s.Excluded = append(s.Excluded, Exclusion{Node: id, Reason: st.reason})
	}
	return false
}

// addUnvouched adds the neighbours round g left out as unvouched to s's
// exclusions, keeping them ascending.
func addUnvouched(g *gatherState, s *Snapshot) {
	for _, id := range g.unvouched {
		s.Excluded = append(s.Excluded, Exclusion{Node: id, Reason: ReasonUnvouched})
	}
	if len(g.unvouched) > 0 {
		slices.SortFunc(s.Excluded, func(a, b Exclusion) int { return cmp.Compare(a.Node, b.Node) })
	}
}

// addChannels adds to s the channels between the included members: as the
// gatherer recorded those into itself, as each member recorded the others.
func (m *Manager) addChannels(g *gatherState, s *Snapshot, included []node.ID) {
	ownRecs, ownMsgs := m.record(g.own, g.cr, g.members)
	for _, to := range included {
		for _, from := range included {
			i, _ := slices.BinarySearch(g.members, from)
			if to == m.self {
				s.Channels = append(s.Channels, channelOf(from, to, ownRecs[i].Flags, ownEnvelopes(from, to, ownRecs[i], ownMsgs[i])))
			} else {
				st := g.status[to]
				s.Channels = append(s.Channels, channelOf(from, to, st.channels[i].Flags, st.msgs[i]))
			}
		}
	}
}

// ownEnvelopes returns the messages the gatherer recorded on the channel
// from → to (itself), with their numbers from rec.
func ownEnvelopes(from, to node.ID, rec ChannelRecord, msgs []node.Message) []node.Envelope {
	var envs []node.Envelope
	for k, msg := range msgs {
		envs = append(envs, node.Envelope{From: from, To: to, CN: rec.Msgs[k].CN, Msg: msg})
	}
	return envs
}

// channelOf is the snapshot's channel from → to, recorded with flags and
// messages msgs.
func channelOf(from, to node.ID, flags uint8, msgs []node.Envelope) Channel {
	return Channel{From: from, To: to, Messages: msgs, Complete: flags&FlagComplete != 0, Lossy: flags&FlagLossy != 0}
}
