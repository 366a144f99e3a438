package emulation

import (
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"time"

	"github.com/seed6eee2ec7/crystalball/node"
)

// Declared delivery semantics (node.Spec.Delivery): the messages a
// service declares unreliable travel on their connection like any other,
// and the network may also lose them, duplicate them or hold them back so
// that later messages overtake them — at the rates of Config.Delivery,
// and never beyond the declaration (a message declared reordered within
// bound R is overtaken by at most R later messages, each of a type that
// may be reordered too). The first messages of a connection (sent while
// it is being opened) and messages to self travel reliably, as in the
// explorer. A service that declares nothing, or a run whose rates are
// zero, draws nothing: its runs are what they were.

// Defaults of DeliveryConfig's zero delays.
const (
	// DefaultDuplicateDelay bounds how much later than the original a
	// duplicate arrives (drawn uniformly).
	DefaultDuplicateDelay = 50 * time.Millisecond
	// DefaultReorderDelay bounds how long a held-back message is held
	// (drawn uniformly).
	DefaultReorderDelay = 50 * time.Millisecond
)

// DeliveryConfig are the rates at which the network does to declared
// unreliable messages what their declaration allows. The zero value does
// nothing (the declaration widens only the explorer's world then).
type DeliveryConfig struct {
	// Loss is the probability, in [0, 1], that a message declared Lost is
	// lost: dropped silently on arrival (traced "drop message T from nX
	// (lost)"), no transport error, the connection staying up. Default 0.
	Loss float64
	// Duplicate is the probability, in [0, 1], that a message declared
	// Duplicated arrives twice: the copy behind the original, up to
	// DuplicateDelay later. Default 0.
	Duplicate float64
	// DuplicateDelay bounds the copy's extra delay; zero means
	// DefaultDuplicateDelay.
	DuplicateDelay time.Duration
	// Reorder is the probability, in [0, 1], that a message declared
	// Reordered is held back by up to ReorderDelay, so that later messages
	// (of types that may be reordered, at most its declared bound of them)
	// overtake it. Default 0.
	Reorder float64
	// ReorderDelay bounds how long a message is held back; zero means
	// DefaultReorderDelay.
	ReorderDelay time.Duration
}

// on reports whether any rate is set.
func (c DeliveryConfig) on() bool { return c.Loss > 0 || c.Duplicate > 0 || c.Reorder > 0 }

// validate checks the rates and delays.
func (c DeliveryConfig) validate() error {
	for _, r := range [...]struct {
		name string
		v    float64
	}{{"Loss", c.Loss}, {"Duplicate", c.Duplicate}, {"Reorder", c.Reorder}} {
		if !(r.v >= 0 && r.v <= 1) {
			return fmt.Errorf("emulation: Config.Delivery.%s must be a probability in [0, 1], got %v", r.name, r.v)
		}
	}
	if c.DuplicateDelay < 0 || c.ReorderDelay < 0 {
		return fmt.Errorf("emulation: Config.Delivery delays must not be negative, got %v and %v", c.DuplicateDelay, c.ReorderDelay)
	}
	return nil
}

// withDefaults fills the zero delays.
func (c DeliveryConfig) withDefaults() DeliveryConfig {
	if c.DuplicateDelay == 0 {
		c.DuplicateDelay = DefaultDuplicateDelay
	}
	if c.ReorderDelay == 0 {
		c.ReorderDelay = DefaultReorderDelay
	}
	return c
}

// DeliveryStats counts what the network did to declared unreliable
// messages (Config.Delivery); nil in a Result when it did nothing.
type DeliveryStats struct {
	// Lost counts messages lost (also counted in MessageStats.Dropped).
	Lost int64 `json:"lost"`
	// Duplicated counts the copies made (each delivered, dropped or in
	// flight like a message sent: MessageStats.InFlight counts them).
	Duplicated int64 `json:"duplicated"`
	// Held counts messages held back, and Overtaken the times a later
	// message overtook a held one.
	Held      int64 `json:"held"`
	Overtaken int64 `json:"overtaken"`
}

// deliveryRun is a run's delivery model: nil when the service declares
// nothing or every rate is zero.
type deliveryRun struct {
	spec  node.DeliverySpec
	cfg   DeliveryConfig
	stats DeliveryStats
}

// newDeliveryRun returns the run's delivery model, nil for none.
func newDeliveryRun(spec node.Spec, cfg DeliveryConfig) *deliveryRun {
	if !spec.Delivery.Declared() || !cfg.on() {
		return nil
	}
	return &deliveryRun{spec: spec.Delivery, cfg: cfg.withDefaults()}
}

// deliveryChan is a channel's delivery state: its own random stream
// (streamDelivery, apart from the channel's jitter and loss draws) and the
// held-back messages still in flight on it.
type deliveryChan struct {
	rng  mrand.PCG
	held []heldMsg
}

// heldMsg is a held-back message: when it arrives, and how many more
// later messages may overtake it.
type heldMsg struct {
	at   time.Duration
	left int
}

// deliveryOf returns channel n→to's delivery state, seeding it on first use.
func (e *Emulator) deliveryOf(p *peer, from, to node.ID) *deliveryChan {
	if p.dv == nil {
		p.dv = &deliveryChan{rng: *mrand.NewPCG(deriveSeed(e.netKey, streamDelivery, uint64(from), uint64(to)),
			deriveSeed(^e.netKey, streamDelivery, uint64(to), uint64(from)))}
	}
	return p.dv
}

// unreliable reports whether the message env, about to travel on the
// established connection c, is one the delivery model acts on.
func (e *Emulator) unreliable(c *conn, env *node.Envelope) bool {
	return e.delivery != nil && c != nil && !c.pending && env.To != env.From && !e.delivery.spec.Of(env.Msg).Reliable()
}

// sendUnreliable schedules a declared unreliable message that the
// connection's rules let through (send's tail for it): it arrives d after
// it leaves the sender (its uplink, with linked), unless the loss draw
// loses it; the duplication draw may add a copy, the hold draw may hold it
// back. Draw order per message (part of the contract): loss (if Loss > 0
// and the type may be lost); unless lost, duplication (if Duplicate > 0
// and the type may be duplicated) then, if duplicated, when the copy is
// made and its extra delay; then hold (if Reorder > 0 and the type may be
// reordered) then, if held, the hold's length.
func (e *Emulator) sendUnreliable(from *emNode, p *peer, env *node.Envelope, c *conn, id uint64, inc uint64, d time.Duration, linked bool, size int) {
	dr := e.delivery
	decl := dr.spec.Of(env.Msg)
	ch := e.deliveryOf(p, from.id, env.To)
	ch.expire(e.now)
	leave := e.now
	if linked {
		leave = e.uplink(from, p, env, size)
	}
	atLink := linked && e.cfg.Network.Downlink > 0
	if decl.Lost && dr.cfg.Loss > 0 && unitFloat(ch.rng.Uint64()) < dr.cfg.Loss {
		it := e.schedule(p, leave+d, env.To, from.id, inc, env, c, id)
		it.dgDrop, it.size = dgLost, size
		return
	}
	var dupWhen, dupAt float64
	dup := decl.Duplicated && dr.cfg.Duplicate > 0 && unitFloat(ch.rng.Uint64()) < dr.cfg.Duplicate
	if dup {
		dupWhen, dupAt = unitFloat(ch.rng.Uint64()), unitFloat(ch.rng.Uint64())
	}
	var hold time.Duration
	if decl.Reordered > 0 && dr.cfg.Reorder > 0 && unitFloat(ch.rng.Uint64()) < dr.cfg.Reorder {
		hold = time.Duration(unitFloat(ch.rng.Uint64())*float64(dr.cfg.ReorderDelay)) + 1
	}
	at := e.arrival(p, ch, max(leave+d, p.last), decl, hold)
	it := e.scheduleAt(p, at, env.To, from.id, inc, env, c, id, hold == 0)
	it.atLink, it.size = atLink, size
	if hold > 0 {
		dr.stats.Held++
		ch.held = append(ch.held, heldMsg{at: at, left: decl.Reordered})
	}
	if dup {
		// The network copies the message while it is in flight, at a time
		// drawn in [now, its arrival): the copy joins the channel's tail
		// then, behind what was sent before, ahead of what is sent after.
		dr.stats.Duplicated++
		cp := e.q.alloc()
		cp.kind, cp.at, cp.node, cp.peer, cp.inc, cp.msg, cp.conn = itemDuplicate, e.now+time.Duration(dupWhen*float64(at-e.now)), env.To, from.id, inc, env.Msg, c
		cp.cn, cp.id = env.CN, id
		cp.dl = at + time.Duration(dupAt*float64(dr.cfg.DuplicateDelay)) + 1
		e.q.push(cp)
	}
}

// duplicateNow carries out a copy decided by sendUnreliable, now: the
// copy (the same message ID) arrives no earlier than it.dl and behind
// every message on the channel but those it may overtake as a new send of
// its type would. It is not an event.
func (e *Emulator) duplicateNow(it *item) bool {
	p := e.peerOf(e.nodes[it.peer], it.node)
	ch := e.deliveryOf(p, it.peer, it.node)
	ch.expire(e.now)
	env := node.Envelope{From: it.peer, To: it.node, CN: it.cn, Msg: it.msg}
	at := e.arrival(p, ch, max(it.dl, p.last), e.delivery.spec.Of(it.msg), 0)
	e.schedule(p, at, it.node, it.peer, it.inc, &env, it.conn, it.id)
	return false
}

// arrival returns when a message that would arrive at t (then hold later)
// arrives given the held messages on its channel: it overtakes a held
// message only if its own type may be reordered and that message may still
// be overtaken (which it then spends), and otherwise arrives behind it.
func (e *Emulator) arrival(p *peer, ch *deliveryChan, t time.Duration, decl node.Delivery, hold time.Duration) time.Duration {
	slices.SortFunc(ch.held, func(a, b heldMsg) int { return int(a.at - b.at) })
	for _, h := range ch.held {
		if h.at > t && (decl.Reordered == 0 || h.left == 0) {
			t = h.at
		}
	}
	t += hold
	for k := range ch.held {
		if ch.held[k].at > t {
			ch.held[k].left--
			e.delivery.stats.Overtaken++
		}
	}
	return t
}

// expire forgets the held messages that have arrived by now.
func (ch *deliveryChan) expire(now time.Duration) {
	ch.held = slices.DeleteFunc(ch.held, func(h heldMsg) bool { return h.at <= now })
}

// scheduleAt queues a delivery on channel p at at; with fifo, later
// deliveries on the channel come no earlier (as schedule), without, it is
// held back and they may overtake it.
func (e *Emulator) scheduleAt(p *peer, at time.Duration, to, from node.ID, inc uint64, env *node.Envelope, c *conn, id uint64, fifo bool) *item {
	if fifo {
		return e.schedule(p, at, to, from, inc, env, c, id)
	}
	e.rates.Latencies++
	e.rates.LatencySum += at - e.now
	it := e.q.alloc()
	it.kind, it.at, it.node, it.peer, it.inc, it.msg, it.conn = itemDeliver, at, to, from, inc, env.Msg, c
	it.cn, it.id = env.CN, id
	e.q.push(it)
	return it
}

// loseMessage drops a message the delivery model lost at its arrival:
// traced, counted, nobody told.
func (e *Emulator) loseMessage(it *item) bool {
	e.observeNet(NetDrop, it.id, it.peer, it.node, it.cn, it.msg)
	e.st.dropped++
	e.st.count(kindDrop)
	e.delivery.stats.Lost++
	e.traceDrop(it.node, "message", it.msg, it.peer, "lost")
	return true
}

// deliveryStats returns the run's delivery counts, nil without a model.
func (e *Emulator) deliveryStats() *DeliveryStats {
	if e.delivery == nil {
		return nil
	}
	s := e.delivery.stats
	return &s
}

// duplicated is the number of copies made (they are in flight like sent
// messages).
func (e *Emulator) duplicated() int64 {
	if e.delivery == nil {
		return 0
	}
	return e.delivery.stats.Duplicated
}
