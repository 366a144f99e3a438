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
// with Config.FinishLastRound). Otherwise a change since the last gather
// starts one at once with Config.GatherOnChange, or one GatherSettle
// later under the no-blind-start rule (Config.GatherSettle).
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
