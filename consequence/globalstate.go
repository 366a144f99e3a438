package consequence

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zeebo/xxh3"

	"github.com/seed6eee2ec7/crystalball/node"
)

// GlobalState is a state of the actor system an ActorModel explores: the
// node states of the nodes in the snapshot, the network (a FIFO channel per
// directed pair holding the envelopes and transport errors in flight, and
// an unordered multiset per directed pair holding the datagrams in flight),
// the open connections, the faults spent along the path, and whether a
// handler crashed. Nodes outside the snapshot form one dummy sink: messages sent to
// them vanish, and they take no actions.
//
// A GlobalState is immutable once the model returned it, and it shares its
// parts — node states, channel contents — with the states it was derived
// from and derives: never modify anything reachable from it (the services
// its View returns included). It is safe for concurrent readers.
//
// GlobalState implements node.View over the nodes in the snapshot, so a
// service's properties evaluate on it directly.
type GlobalState struct {
	m *ActorModel
	// nodes holds one entry per node of m.ids (same index). Entries are
	// shared between states.
	nodes []*actorNode
	// chans are the non-empty channels, sorted by (from, to).
	chans []*channel
	// dgrams are the non-empty datagram multisets, sorted by (from, to).
	dgrams []*dgramSet
	// conns are the open connections, as ordered pairs lo < hi, sorted.
	conns []connKey
	// connsH is connsComponent(conns), kept with it.
	connsH node.Hash
	// stale are the connections a reset or a break left behind, as
	// (holder, other end) pairs, sorted: the holder still believes them
	// open; its writes over them are lost, and the first is answered by an
	// RST unless a transport error is on its way already (see Stale).
	stale  []connKey
	staleH node.Hash
	// clockH is the virtual clock's fingerprint component (the timers'
	// relative due times; see clockComponent).
	clockH node.Hash
	// first is when the earliest timer is due (if hasFirst), cached for
	// the clock rule of models without filters.
	first    time.Time
	hasFirst bool
	// refusals counts the sends refused along the path; an int32 beside
	// hasFirst, so that the state stays within its allocation size class.
	refusals int32
	// resets, breaks and drops count the other faults injected along the
	// path.
	resets, breaks, drops int
	crash                 *Crash
	// spent counts the delivery faults on declared-unreliable messages
	// spent along the path (delivery.go); nil when none was.
	spent *deliverySpent
	// ext is what the lasting faults — crash-stops, partitions, clock
	// jumps — left (lasting.go); nil until one happens.
	ext *lastingState
	fp  node.Hash
	// seen is what the path observed for the bounded and history
	// properties (observe.go); nil when the model declares none.
	seen *observed
	// in is the interner of the packed search the state belongs to (set by
	// Unpack, copied to successors): the parts a successor builds are
	// replaced by their canonical equals at once, so its clones die young.
	// Nil outside a packed search (start states, walks, replays), which
	// then build their parts as they always did.
	in *interner
}

// Crash describes a service handler that panicked during exploration: the
// node, the event it was handling and the panic value. A crashed global
// state has no actions; the built-in "crash" property fails on it.
type Crash struct {
	Node  node.ID
	Event string
	Value string
}

// Error renders the crash as "n13 panicked handling message randtree.Join
// from n9: <value>".
func (c *Crash) Error() string {
	return fmt.Sprintf("%v panicked handling %s: %s", c.Node, c.Event, c.Value)
}

// actorNode is one node's part of a global state. Immutable once built.
type actorNode struct {
	st  node.State
	now time.Time
	// pending are application calls queued for the node (the workload's,
	// or a restart's), delivered in order as local actions.
	pending []inflight
	// hash covers the node state (service, timer names, random source)
	// and the pending calls: the node's local fingerprint.
	hash node.Hash
	// claim names the interner that made n canonical (intern.go).
	claim claim
	// first is when the node's earliest timer is due (due; if hasTimer),
	// set by hashNode: the clock rule asks it of every node for every
	// successor (firstDue, timerEnabled), and scanning every node's timers
	// each time was a tenth of a 100-node round's time.
	first    time.Time
	hasTimer bool
	// down marks a crashed node, down until its restart (crashstop.go):
	// its service is its durable projection and its one timer the
	// restart's.
	down bool
}

// channel is the in-flight content of one directed channel. Immutable once
// built: popping shares the item array, appending copies it.
type channel struct {
	from, to node.ID
	items    []inflight
	hash     node.Hash
	// window counts the items in the sender's refusal window (inflight.win).
	window int
	// claim names the interner that made c canonical (intern.go).
	claim claim
}

// dgramSet is the multiset of datagrams in flight from one node to another.
// Its items are sorted by hash, so a multiset has one representation (and
// one hash) whatever order its datagrams were sent in, and equal messages
// sit side by side. Immutable once built: removing or adding copies it.
type dgramSet struct {
	from, to node.ID
	items    []inflight
	hash     node.Hash
	// claim names the interner that made d canonical (intern.go).
	claim claim
}

// inflight is a message (or, with msg == nil, a transport error) on a
// channel, or a pending application call, with its hash computed once.
type inflight struct {
	msg node.Message
	h   node.Hash
	// syn marks the first message of a connection (see synState); zero
	// on every other item.
	syn synState
	// win is the position (from 1) of a message in its sender's refusal
	// window, in the order the sender's TrySends were made: the explorer
	// may still refuse it (see refuse.go). Zero outside every window, and
	// always zero while Faults.Refusals leaves no refusal in the budget.
	win uint8
	// over counts the later messages that overtook this one
	// (ActDeliverAhead, delivery.go); always zero for a service that
	// declares no reordering.
	over uint8
	// at is a message's send time for a model with a bounded property
	// (observer.stamp; TimelyOptions), zero on every other item.
	at int32
}

// connKey is an open connection between two nodes of the snapshot, lo < hi.
type connKey struct{ lo, hi node.ID }

// Component tags for the fingerprint mix: they keep a node's contribution
// from ever coinciding with a channel's.
const (
	tagNode = iota + 1
	tagChan
	tagConns
	tagFaults
	tagCrash
	tagPending
	tagLocal
	tagDgram
	tagDrops
	tagStale
	tagTold
	tagClock
	tagWindow
	tagRefusals
	tagNodeClock
)

// teHash is the hash of a transport-error marker on a channel.
var teHash = node.Hash{Hi: 0x9e3779b97f4a7c15, Lo: 0xc2b2ae3d27d4eb4f}

// lateHash marks a late transport error: the RST answering a message that
// reached a node which no longer holds its connection. It follows what
// the node had sent before, but the node's later messages travel while
// the RST is on its way and may overtake it (the emulator delivers them
// first when they leave less than a one-way latency after it), so a
// message behind late errors at the head of a channel is deliverable too.
var lateHash = node.Hash{Hi: 0x7f4a7c159e3779b9, Lo: 0x27d4eb4fc2b2ae3d}

// lateTE is a late transport error (lateHash).
var lateTE = inflight{h: lateHash}

// isLate reports whether it is a late transport error.
func (it inflight) isLate() bool { return it.msg == nil && it.h == lateHash }

// overtaking returns the position of the message behind the late
// transport errors heading c, if there is one (see lateHash).
func (c *channel) overtaking() (int, bool) {
	for k, it := range c.items {
		switch {
		case it.msg != nil:
			return k, k > 0
		case !it.isLate():
			return 0, false
		}
	}
	return 0, false
}

// mix hashes a component hash with its position (tag and up to two words).
func mix(tag uint64, a, b uint64, h node.Hash) node.Hash {
	var buf [40]byte
	binary.LittleEndian.PutUint64(buf[0:], tag)
	binary.LittleEndian.PutUint64(buf[8:], a)
	binary.LittleEndian.PutUint64(buf[16:], b)
	binary.LittleEndian.PutUint64(buf[24:], h.Hi)
	binary.LittleEndian.PutUint64(buf[32:], h.Lo)
	r := xxh3.Hash128(buf[:])
	return node.Hash{Hi: r.Hi, Lo: r.Lo}
}

func xorHash(a, b node.Hash) node.Hash { return node.Hash{Hi: a.Hi ^ b.Hi, Lo: a.Lo ^ b.Lo} }

// hashList folds a list of item hashes into one, in order.
func hashList(tag uint64, base node.Hash, items []inflight) node.Hash {
	var stack [16 * 17]byte
	buf := stack[:0]
	if 16*(len(items)+1) > len(stack) {
		buf = make([]byte, 0, 16*(len(items)+1))
	}
	buf = binary.LittleEndian.AppendUint64(buf, base.Hi^tag)
	buf = binary.LittleEndian.AppendUint64(buf, base.Lo)
	for _, it := range items {
		hi := it.h.Hi ^ synSalt[it.syn&synMask]
		if it.win|it.over != 0 {
			hi ^= winSalt*uint64(it.win) ^ overSalt*uint64(it.over)
		}
		if it.at != 0 {
			hi ^= atSalt * uint64(it.at)
		}
		buf = binary.LittleEndian.AppendUint64(buf, hi)
		buf = binary.LittleEndian.AppendUint64(buf, it.h.Lo)
	}
	r := xxh3.Hash128(buf)
	return node.Hash{Hi: r.Hi, Lo: r.Lo}
}

// nodeComponent is node i's contribution to the global fingerprint.
func nodeComponent(id node.ID, n *actorNode) node.Hash {
	return mix(tagNode, uint64(id), 0, n.hash)
}

// chanComponent is a channel's contribution to the global fingerprint.
func chanComponent(c *channel) node.Hash {
	return mix(tagChan, uint64(c.from), uint64(c.to), c.hash)
}

// dgramComponent is a datagram multiset's contribution to the global
// fingerprint.
func dgramComponent(d *dgramSet) node.Hash {
	return mix(tagDgram, uint64(d.from), uint64(d.to), d.hash)
}

// cmpHash orders hashes (the canonical order of a datagram multiset).
func cmpHash(a, b node.Hash) int {
	switch {
	case a.Hi != b.Hi:
		if a.Hi < b.Hi {
			return -1
		}
		return 1
	case a.Lo < b.Lo:
		return -1
	case a.Lo > b.Lo:
		return 1
	}
	return 0
}

func connsComponent(conns []connKey) node.Hash { return pairsComponent(tagConns, conns) }

func staleComponent(stale []connKey) node.Hash { return pairsComponent(tagStale, stale) }

func pairsComponent(tag uint64, conns []connKey) node.Hash {
	if len(conns) == 0 {
		return node.Hash{}
	}
	buf := make([]byte, 0, 16*len(conns))
	for _, c := range conns {
		buf = binary.LittleEndian.AppendUint64(buf, uint64(c.lo))
		buf = binary.LittleEndian.AppendUint64(buf, uint64(c.hi))
	}
	r := xxh3.Hash128(buf)
	return mix(tag, 0, 0, node.Hash{Hi: r.Hi, Lo: r.Lo})
}

func faultsComponent(resets, breaks, drops, refusals int) node.Hash {
	if resets == 0 && breaks == 0 && drops == 0 && refusals == 0 {
		return node.Hash{}
	}
	return mix(tagFaults, uint64(resets), uint64(breaks), node.Hash{Hi: uint64(drops), Lo: uint64(refusals)})
}

func crashComponent(c *Crash) node.Hash {
	if c == nil {
		return node.Hash{}
	}
	r := xxh3.HashString128(c.Error())
	return mix(tagCrash, uint64(c.Node), 0, node.Hash{Hi: r.Hi, Lo: r.Lo})
}

// fingerprint computes the global fingerprint from scratch (construction
// and tests; transitions update it incrementally).
func (g *GlobalState) fingerprint() node.Hash {
	var fp node.Hash
	for i, n := range g.nodes {
		fp = xorHash(fp, nodeComponent(g.m.ids[i], n))
	}
	for _, c := range g.chans {
		fp = xorHash(fp, chanComponent(c))
	}
	for _, d := range g.dgrams {
		fp = xorHash(fp, dgramComponent(d))
	}
	fp = xorHash(fp, g.connsH)
	fp = xorHash(fp, g.staleH)
	fp = xorHash(fp, g.clockH)
	fp = xorHash(fp, faultsComponent(g.resets, g.breaks, g.drops, int(g.refusals)))
	fp = xorHash(fp, spentComponent(g.spent))
	if g.ext != nil {
		fp = xorHash(fp, g.ext.hash)
	}
	if g.seen != nil {
		fp = xorHash(fp, g.seen.h)
	}
	return xorHash(fp, crashComponent(g.crash))
}

// Fingerprint returns the state's 128-bit fingerprint: the XOR of a hash of
// every component (a node's local state, a non-empty channel's content —
// with which of its messages are in their sender's refusal window —, a
// non-empty datagram multiset's content — its items in hash order, so the
// order datagrams were sent in does not matter —, the connections, the
// fault counters, a crash) mixed with its position, and, unless
// ActorOptions.AnyOrderTimers, the virtual clock's state: every timer's due
// time and every node's clock relative to the earliest timer (to the
// latest clock when no timer is set). States that differ only by a shift
// of all their times merge — they behave alike, since nothing in the model
// reads absolute time — and no others: the fingerprint is exact up to that
// shift, which partial-order reduction relies on.
func (g *GlobalState) Fingerprint() node.Hash { return g.fp }

// Nodes implements node.View: the IDs of the nodes in the snapshot that
// are up (a crashed node is down until it restarts), ascending. The slice
// is shared; it does not allocate.
func (g *GlobalState) Nodes() []node.ID {
	if g.ext != nil && g.ext.down > 0 {
		return g.ext.live
	}
	return g.m.ids
}

// Service implements node.View: id's service state, or nil if id is not in
// the snapshot. The value is shared: read it only.
func (g *GlobalState) Service(id node.ID) node.Service {
	i, ok := g.m.index(id)
	if !ok || g.nodes[i].down {
		return nil
	}
	return g.nodes[i].st.Service
}

// TimerScheduled implements node.View.
func (g *GlobalState) TimerScheduled(id node.ID, name string) bool {
	i, ok := g.m.index(id)
	if !ok || g.nodes[i].down {
		return false
	}
	_, ok = g.nodes[i].st.TimerAt(name)
	return ok
}

// NodeState returns id's node state (service, timers, random source) and
// its clock, or false if id is not in the snapshot. The state is shared:
// read it only (Clone it to step it).
func (g *GlobalState) NodeState(id node.ID) (*node.State, time.Time, bool) {
	i, ok := g.m.index(id)
	if !ok {
		return nil, time.Time{}, false
	}
	return &g.nodes[i].st, g.nodes[i].now, true
}

// InFlight returns the envelopes in flight on the channel from → to, in
// delivery order; a transport error queued there is an envelope with a nil
// Msg, and a message the explorer may still refuse (in from's refusal
// window, Faults.Refusals) has Refusable set. The result is freshly allocated; the messages are shared.
func (g *GlobalState) InFlight(from, to node.ID) []node.Envelope {
	c := g.channel(from, to)
	if c == nil {
		return nil
	}
	out := make([]node.Envelope, len(c.items))
	for i, it := range c.items {
		out[i] = node.Envelope{From: from, To: to, Msg: it.msg, Refusable: it.win != 0}
	}
	return out
}

// Datagrams returns the datagrams in flight from → to (Datagram set), a
// multiset in a canonical order (by message hash; equal messages repeat).
// The result is freshly allocated; the messages are shared.
func (g *GlobalState) Datagrams(from, to node.ID) []node.Envelope {
	d := g.dgramSet(from, to)
	if d == nil {
		return nil
	}
	out := make([]node.Envelope, len(d.items))
	for i, it := range d.items {
		out[i] = node.Envelope{From: from, To: to, Msg: it.msg, Datagram: true}
	}
	return out
}

// Pending returns the application calls queued for id, in order. The
// result is freshly allocated; the messages are shared.
func (g *GlobalState) Pending(id node.ID) []node.Message {
	i, ok := g.m.index(id)
	if !ok {
		return nil
	}
	out := make([]node.Message, len(g.nodes[i].pending))
	for k, p := range g.nodes[i].pending {
		out[k] = p.msg
	}
	return out
}

// Connected reports whether a and b have an open connection (they
// exchanged a message since the last break or reset with RST).
func (g *GlobalState) Connected(a, b node.ID) bool {
	_, ok := slices.BinarySearchFunc(g.conns, ordered(a, b), cmpConn)
	return ok
}

// Crash returns the crash that ended this state's future, or nil.
func (g *GlobalState) Crash() *Crash { return g.crash }

// Resets and Breaks return the faults injected along the path to g.
func (g *GlobalState) Resets() int { return g.resets }

// Breaks returns the connection breaks injected along the path to g.
func (g *GlobalState) Breaks() int { return g.breaks }

// Drops returns the datagrams dropped along the path to g (Faults.Drops).
func (g *GlobalState) Drops() int { return g.drops }

// Refusals returns the sends refused along the path to g
// (Faults.Refusals).
func (g *GlobalState) Refusals() int { return int(g.refusals) }

// String renders the state on several lines: one per node (its service
// state if it has a String method, and its timers and pending calls), one
// per non-empty channel ("n1 -> n2: ..."), one per non-empty datagram
// multiset ("n1 ~> n2: ...", in canonical order).
func (g *GlobalState) String() string {
	var b strings.Builder
	for i, n := range g.nodes {
		if n.down {
			b.WriteString(downString(g.m.ids[i], n))
			continue
		}
		fmt.Fprintf(&b, "%v: %v", g.m.ids[i], n.st.Service)
		if len(n.st.Timers) > 0 {
			b.WriteString(" timers=[")
			for k, t := range n.st.Timers {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(t.Name)
			}
			b.WriteByte(']')
		}
		for _, p := range n.pending {
			fmt.Fprintf(&b, " pending=%s", p.msg.MessageType())
		}
		b.WriteByte('\n')
	}
	for _, c := range g.chans {
		fmt.Fprintf(&b, "%v -> %v:", c.from, c.to)
		for _, it := range c.items {
			switch {
			case it.msg == nil:
				b.WriteString(" transport-error")
			case it.win != 0:
				fmt.Fprintf(&b, " %v(refusable)", it.msg)
			default:
				fmt.Fprintf(&b, " %v", it.msg)
			}
		}
		b.WriteByte('\n')
	}
	for _, d := range g.dgrams {
		fmt.Fprintf(&b, "%v ~> %v:", d.from, d.to)
		for _, it := range d.items {
			fmt.Fprintf(&b, " %v", it.msg)
		}
		b.WriteByte('\n')
	}
	if g.crash != nil {
		fmt.Fprintf(&b, "crash: %v\n", g.crash)
	}
	b.WriteString(g.lastingString())
	return b.String()
}

var _ node.View = (*GlobalState)(nil)

func ordered(a, b node.ID) connKey {
	if a > b {
		a, b = b, a
	}
	return connKey{a, b}
}

func cmpConn(x, y connKey) int {
	if x.lo != y.lo {
		if x.lo < y.lo {
			return -1
		}
		return 1
	}
	switch {
	case x.hi < y.hi:
		return -1
	case x.hi > y.hi:
		return 1
	}
	return 0
}

// cmpPair orders directed pairs (from, to) by sender, then receiver: the
// order of the channels and of the datagram sets.
func cmpPair(aFrom, aTo, from, to node.ID) int {
	if c := cmp.Compare(aFrom, from); c != 0 {
		return c
	}
	return cmp.Compare(aTo, to)
}

func cmpChan(c *channel, from, to node.ID) int { return cmpPair(c.from, c.to, from, to) }

// channel returns the channel from → to, or nil when it is empty.
func (g *GlobalState) channel(from, to node.ID) *channel {
	i, ok := slices.BinarySearchFunc(g.chans, from, func(c *channel, f node.ID) int { return cmpChan(c, f, to) })
	if !ok {
		return nil
	}
	return g.chans[i]
}

func cmpDgram(d *dgramSet, from, to node.ID) int { return cmpPair(d.from, d.to, from, to) }

// dgramSet returns the datagram multiset from → to, or nil when it is
// empty.
func (g *GlobalState) dgramSet(from, to node.ID) *dgramSet {
	i, ok := slices.BinarySearchFunc(g.dgrams, from, func(d *dgramSet, f node.ID) int { return cmpDgram(d, f, to) })
	if !ok {
		return nil
	}
	return g.dgrams[i]
}

// find returns the position of an item with hash h in d, if there is one.
func (d *dgramSet) find(h node.Hash) (int, bool) {
	return slices.BinarySearchFunc(d.items, h, func(it inflight, h node.Hash) int { return cmpHash(it.h, h) })
}

// succ is a successor under construction: a shallow copy of its parent
// whose slices are copied the first time they change, with the
// fingerprint updated per changed component.
type succ struct {
	g                             *GlobalState
	nodesOwn, chansOwn, dgramsOwn bool
}

func newSucc(p *GlobalState) *succ {
	g := *p
	return &succ{g: &g}
}

func (s *succ) setNode(i int, n *actorNode) {
	if !s.nodesOwn {
		s.g.nodes = slices.Clone(s.g.nodes)
		s.nodesOwn = true
	}
	id := s.g.m.ids[i]
	s.g.fp = xorHash(s.g.fp, nodeComponent(id, s.g.nodes[i]))
	s.g.nodes[i] = n
	s.g.fp = xorHash(s.g.fp, nodeComponent(id, n))
}

// setChan replaces the items of channel from → to (nil or empty removes it)
// and updates the fingerprint.
func (s *succ) setChan(from, to node.ID, items []inflight) {
	if !s.chansOwn {
		s.g.chans = slices.Clone(s.g.chans)
		s.chansOwn = true
	}
	i, ok := slices.BinarySearchFunc(s.g.chans, from, func(c *channel, f node.ID) int { return cmpChan(c, f, to) })
	if ok {
		s.g.fp = xorHash(s.g.fp, chanComponent(s.g.chans[i]))
	}
	if len(items) == 0 {
		if ok {
			s.g.chans = slices.Delete(s.g.chans, i, i+1)
		}
		return
	}
	c := &channel{from: from, to: to, items: items, hash: hashList(tagChan, node.Hash{}, items)}
	for _, it := range items {
		if it.win != 0 {
			c.window++
		}
	}
	key := chanComponent(c)
	if s.g.in != nil {
		c = s.g.in.channel(c, key)
	}
	s.g.fp = xorHash(s.g.fp, key)
	if ok {
		s.g.chans[i] = c
	} else {
		s.g.chans = slices.Insert(s.g.chans, i, c)
	}
}

// appendChan appends to channel from → to, copying its items.
func (s *succ) appendChan(from, to node.ID, add ...inflight) {
	var old []inflight
	if c := s.g.channel(from, to); c != nil {
		old = c.items
	}
	items := make([]inflight, 0, len(old)+len(add))
	items = append(append(items, old...), add...)
	s.setChan(from, to, items)
}

// setDgrams replaces the items of the datagram multiset from → to, which
// must be sorted by hash (nil or empty removes it), and updates the
// fingerprint.
func (s *succ) setDgrams(from, to node.ID, items []inflight) {
	if !s.dgramsOwn {
		s.g.dgrams = slices.Clone(s.g.dgrams)
		s.dgramsOwn = true
	}
	i, ok := slices.BinarySearchFunc(s.g.dgrams, from, func(d *dgramSet, f node.ID) int { return cmpDgram(d, f, to) })
	if ok {
		s.g.fp = xorHash(s.g.fp, dgramComponent(s.g.dgrams[i]))
	}
	if len(items) == 0 {
		if ok {
			s.g.dgrams = slices.Delete(s.g.dgrams, i, i+1)
		}
		return
	}
	d := &dgramSet{from: from, to: to, items: items, hash: hashList(tagDgram, node.Hash{}, items)}
	key := dgramComponent(d)
	if s.g.in != nil {
		d = s.g.in.dgramSet(d, key)
	}
	s.g.fp = xorHash(s.g.fp, key)
	if ok {
		s.g.dgrams[i] = d
	} else {
		s.g.dgrams = slices.Insert(s.g.dgrams, i, d)
	}
}

// addDgram adds a datagram to the multiset from → to, copying its items.
func (s *succ) addDgram(from, to node.ID, it inflight) {
	var old []inflight
	if d := s.g.dgramSet(from, to); d != nil {
		old = d.items
	}
	k, _ := slices.BinarySearchFunc(old, it.h, func(x inflight, h node.Hash) int { return cmpHash(x.h, h) })
	items := make([]inflight, 0, len(old)+1)
	items = append(append(append(items, old[:k]...), it), old[k:]...)
	s.setDgrams(from, to, items)
}

// removeDgram removes the datagram at position k of the multiset from → to,
// copying its items.
func (s *succ) removeDgram(from, to node.ID, k int) {
	old := s.g.dgramSet(from, to).items
	items := make([]inflight, 0, len(old)-1)
	items = append(append(items, old[:k]...), old[k+1:]...)
	s.setDgrams(from, to, items)
}

func (s *succ) setConns(conns []connKey) {
	s.g.fp = xorHash(s.g.fp, s.g.connsH)
	s.g.conns, s.g.connsH = conns, connsComponent(conns)
	if s.g.in != nil {
		_, s.g.conns = s.g.in.pairs(conns, s.g.connsH)
	}
	s.g.fp = xorHash(s.g.fp, s.g.connsH)
}

// connect records an open connection between a and b (a != b) and
// reports whether it is new.
func (s *succ) connect(a, b node.ID) bool {
	k := ordered(a, b)
	i, ok := slices.BinarySearchFunc(s.g.conns, k, cmpConn)
	if ok {
		return false
	}
	s.setConns(slices.Insert(slices.Clone(s.g.conns), i, k))
	return true
}

// disconnect forgets the connection between a and b.
func (s *succ) disconnect(a, b node.ID) {
	i, ok := slices.BinarySearchFunc(s.g.conns, ordered(a, b), cmpConn)
	if !ok {
		return
	}
	s.setConns(slices.Delete(slices.Clone(s.g.conns), i, i+1))
}

func (s *succ) setStale(stale []connKey) {
	s.g.fp = xorHash(s.g.fp, s.g.staleH)
	s.g.stale, s.g.staleH = stale, staleComponent(stale)
	if s.g.in != nil {
		_, s.g.stale = s.g.in.pairs(stale, s.g.staleH)
	}
	s.g.fp = xorHash(s.g.fp, s.g.staleH)
}

// markStale records that holder keeps a stale connection to peer.
func (s *succ) markStale(holder, peer node.ID) {
	k := connKey{holder, peer}
	i, ok := slices.BinarySearchFunc(s.g.stale, k, cmpConn)
	if !ok {
		s.setStale(slices.Insert(slices.Clone(s.g.stale), i, k))
	}
}

// clearStale forgets holder's stale connection to peer, if any.
func (s *succ) clearStale(holder, peer node.ID) {
	if i, ok := slices.BinarySearchFunc(s.g.stale, connKey{holder, peer}, cmpConn); ok {
		s.setStale(slices.Delete(slices.Clone(s.g.stale), i, i+1))
	}
}

// clearStaleOf forgets every stale connection holder keeps (its reset
// dropped them).
func (s *succ) clearStaleOf(holder node.ID) {
	if !slices.ContainsFunc(s.g.stale, func(k connKey) bool { return k.lo == holder }) {
		return
	}
	s.setStale(slices.DeleteFunc(slices.Clone(s.g.stale), func(k connKey) bool { return k.lo == holder }))
}

// Stale reports whether holder keeps a stale connection to peer: one that
// peer's reset or a break left behind and that holder has not learned of
// yet (no transport error about it has reached holder, holder has not
// written to it since a silent reset, and peer has not opened a new one).
// Holder's writes to peer are lost meanwhile.
func (g *GlobalState) Stale(holder, peer node.ID) bool {
	_, ok := slices.BinarySearchFunc(g.stale, connKey{holder, peer}, cmpConn)
	return ok
}

// teQueued reports whether a transport error is in flight on from → to.
func (g *GlobalState) teQueued(from, to node.ID) bool {
	c := g.channel(from, to)
	return c != nil && slices.ContainsFunc(c.items, func(it inflight) bool { return it.msg == nil })
}

func (s *succ) setFaults(resets, breaks, drops int) {
	s.setAllFaults(resets, breaks, drops, int(s.g.refusals))
}

func (s *succ) setAllFaults(resets, breaks, drops, refusals int) {
	s.g.fp = xorHash(s.g.fp, faultsComponent(s.g.resets, s.g.breaks, s.g.drops, int(s.g.refusals)))
	s.g.resets, s.g.breaks, s.g.drops, s.g.refusals = resets, breaks, drops, int32(refusals)
	s.g.fp = xorHash(s.g.fp, faultsComponent(resets, breaks, drops, refusals))
}

func (s *succ) setCrash(c *Crash) {
	s.g.fp = xorHash(s.g.fp, crashComponent(s.g.crash))
	s.g.crash = c
	s.g.fp = xorHash(s.g.fp, crashComponent(c))
}
